package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/interop"
)

// TestRootsOutsideCallsFollowTheOneClient: over HTTP, an upstream asking
// for roots outside a call (the reference filesystem server in roots mode
// asks at initialize and on list_changed, and lists what it was told) is
// told the roots of the gateway's one client while there is one, and its
// configured roots while there are several (no client's roots may answer
// for another's) or none; each change reaches it with list_changed.
func TestRootsOutsideCallsFollowTheOneClient(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	for _, d := range []string{a, b, c} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fs := interop.Filesystem(t)
	_, base := serve(t, []config.Server{{ID: "fs", Transport: config.TransportStdio, Command: fs[0], Args: fs[1:], Roots: []string{"file://" + c}}}, nil, nil)
	withRoots := func(root string) *mcp.ClientSession {
		cl := mcp.NewClient(&mcp.Implementation{Name: "rooted", Version: "1"}, nil)
		cl.AddRoots(&mcp.Root{URI: "file://" + root})
		cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	allowed := func(cs *mcp.ClientSession, want string) {
		t.Helper()
		var got string
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fs_list_allowed_directories", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("list_allowed_directories: %v", err)
			}
			got = textOf(res)
			if slices.Equal(strings.Fields(strings.TrimPrefix(got, "Allowed directories:")), []string{want}) {
				return
			}
			time.Sleep(50 * time.Millisecond) // polling a condition, bounded
		}
		t.Fatalf("list_allowed_directories = %q, want %s", got, want)
	}
	one := withRoots(a)
	allowed(one, a) // the one client's
	two := withRoots(b)
	allowed(one, c) // several clients: the configured roots
	two.Close()
	allowed(one, a) // one again
}
