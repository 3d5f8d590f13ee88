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

// TestRootsFollowedOnceWanted: sessions opened before any upstream wants
// roots are followed from the moment one does. Two clients connect to a
// gateway whose only upstream never asks for roots (the gateway then
// waits on no session's end); an upstream that asks at initialize is
// added (the filesystem server in roots mode): it is told its configured
// roots (two clients), and its own again when the second client leaves
// and the first is the only one.
func TestRootsFollowedOnceWanted(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	for _, d := range []string{a, b, c} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logs := &interop.LogBuffer{}
	fx := interop.Build(t, fixturePkg)
	g, base := serve(t, []config.Server{{ID: "fx", Transport: config.TransportStdio, Command: fx}},
		&host.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}, nil)
	taken := func() int {
		return strings.Count(logs.String(), `line="Updated allowed directories`) + strings.Count(logs.String(), `line="No valid root directories`)
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
	one := withRoots(a)
	two := withRoots(b)
	if g.Host().RootsWanted() {
		t.Fatal("roots wanted before any upstream asked")
	}
	fs := interop.Filesystem(t)
	if err := g.Host().AddServer(config.Server{ID: "fs", Transport: config.TransportStdio, Command: fs[0], Args: fs[1:], Roots: []string{"file://" + c}}); err != nil {
		t.Fatal(err)
	}
	// As in TestRootsOutsideCallsFollowTheOneClient, the server's list is
	// read only once it said it took each list it was told.
	awaitTaken := func(n int) {
		t.Helper()
		wait.For(t, fmt.Sprintf("the server to take %d lists of roots", n), func() (string, bool) {
			return logs.String(), taken() >= n
		})
	}
	allowed := func(want string) {
		t.Helper()
		res, err := one.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fs_list_allowed_directories", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("list_allowed_directories: %v", err)
		}
		if got := strings.Fields(strings.TrimPrefix(textOf(res), "Allowed directories:")); !slices.Equal(got, []string{want}) {
			t.Fatalf("list_allowed_directories = %q, want %s\n%s", got, want, logs)
		}
	}
	awaitTaken(1)
	wait.For(t, "the filesystem server's tools", func() (string, bool) {
		res, err := one.ListTools(context.Background(), nil)
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprint(len(res.Tools)), slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "mcp_fs_list_allowed_directories" })
	})
	allowed(c) // two clients: the configured roots
	two.Close()
	awaitTaken(3) // one list_changed for the root that goes, one for the root that comes
	allowed(a)    // one again: its end was awaited, though it began before
}
