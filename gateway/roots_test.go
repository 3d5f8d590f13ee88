package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestRootsOutsideCallsFollowTheOneClient: over HTTP, an upstream asking
// for roots outside a call (the reference filesystem server in roots mode
// asks at initialize and on list_changed, and lists what it was told) is
// told the roots of the gateway's one client while there is one, and its
// configured roots while there are several (no client's roots may answer
// for another's) or none; each change reaches it with list_changed.
//
// The server's list is read with a call only once it has said (on
// stderr) that it took each list it was told: a roots/list that comes
// while a call is in flight belongs, as far as protocol 2025-11-25 can
// tell, to that call, and goes to its client.
func TestRootsOutsideCallsFollowTheOneClient(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	for _, d := range []string{a, b, c} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logs := &interop.LogBuffer{}
	fs := interop.Filesystem(t)
	_, base := serve(t, []config.Server{{ID: "fs", Transport: config.TransportStdio, Command: fs[0], Args: fs[1:], Roots: []string{"file://" + c}}},
		&host.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}, nil)
	// taken counts the lists the server said it took (or found empty).
	taken := func() int {
		return strings.Count(logs.String(), `line="Updated allowed directories`) + strings.Count(logs.String(), `line="No valid root directories`)
	}
	awaitTaken := func(n int) {
		t.Helper()
		wait.For(t, fmt.Sprintf("the server to take %d lists of roots", n), func() (string, bool) {
			return logs.String(), taken() >= n
		})
	}
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
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fs_list_allowed_directories", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("list_allowed_directories: %v", err)
		}
		if got := strings.Fields(strings.TrimPrefix(textOf(res), "Allowed directories:")); !slices.Equal(got, []string{want}) {
			t.Fatalf("list_allowed_directories = %q, want %s\n%s", got, want, logs)
		}
	}
	awaitTaken(1) // at initialize: the configured roots, no client yet
	// Each change below replaces one root by another: a list_changed for
	// the root that goes, one for the root that comes.
	one := withRoots(a)
	awaitTaken(3)
	allowed(one, a) // the one client's
	two := withRoots(b)
	awaitTaken(5)
	allowed(one, c) // several clients: the configured roots
	two.Close()
	awaitTaken(7)
	allowed(one, a) // one again
}
