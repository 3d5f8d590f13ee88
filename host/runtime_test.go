package host_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// interopAlive reports whether pid is a live child of this process.
func interopAlive(pid int) bool {
	_, ok := interop.Children(os.Getpid())[pid]
	return ok
}

// TestAddRemoveServer: a server added to a running host starts at once and
// its tools are offered, with the events a face needs to say list_changed;
// removed, its child is stopped, its tools are withdrawn, and watchers are
// told. (start's cleanup checks that no child or goroutine is left.)
func TestAddRemoveServer(t *testing.T) {
	w := newStates()
	h, _ := start(t, []config.Server{fixture(t, "a")}, nil, w)
	if err := h.AddServer(fixture(t, "b", "-tool-name", "only_b")); err != nil {
		t.Fatalf("AddServer(b): %v", err)
	}
	st := w.await(t, "b", host.StateReady)
	if st.PID == 0 {
		t.Errorf("b is ready with no child pid: %+v", st)
	}
	awaitEvent(t, w.w, host.EventCatalog, "b")
	if got := callText(t, h, "mcp_b_only_b", `{}`, nil); got != "called only_b" {
		t.Errorf("mcp_b_only_b = %q", got)
	}
	if err := h.AddServer(fixture(t, "b")); !errors.Is(err, host.ErrServerExists) {
		t.Errorf("AddServer(b) again = %v, want ErrServerExists", err)
	}
	if err := h.AddServer(fixture(t, "a")); !errors.Is(err, host.ErrServerExists) {
		t.Errorf("AddServer(a), a configured one = %v, want ErrServerExists", err)
	}

	if err := h.RemoveServer("b"); err != nil {
		t.Fatalf("RemoveServer(b): %v", err)
	}
	if hasTool(h, "mcp_b_only_b") {
		t.Errorf("b's tool is still offered after RemoveServer: %v", toolNames(h))
	}
	if !hasTool(h, "mcp_a_echo") {
		t.Errorf("a's tools went with b's: %v", toolNames(h))
	}
	for _, s := range h.Servers() {
		if s.ID == "b" {
			t.Errorf("Servers() still lists b: %+v", s)
		}
	}
	if interopAlive(st.PID) {
		t.Errorf("b's child %d still runs after RemoveServer", st.PID)
	}
	w.await(t, "b", host.StateClosed)
	awaitEvent(t, w.w, host.EventRemoved, "b")
	awaitEvent(t, w.w, host.EventCatalog, "b")
	if _, err := h.CallTool(context.Background(), "mcp_b_only_b", []byte(`{}`), nil); err == nil {
		t.Error("a call of a removed server's tool succeeded")
	}
	if err := h.RemoveServer("b"); !errors.Is(err, host.ErrUnknownServer) {
		t.Errorf("RemoveServer(b) again = %v, want ErrUnknownServer", err)
	}
	// The id is free again.
	if err := h.AddServer(fixture(t, "b")); err != nil {
		t.Fatalf("AddServer(b) after its removal: %v", err)
	}
	w.await(t, "b", host.StateReady)
}

// TestAddServerBeforeStart: a server added before Start starts with the
// others.
func TestAddServerBeforeStart(t *testing.T) {
	h, err := host.New([]config.Server{fixture(t, "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.AddServer(fixture(t, "b")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !hasTool(h, "mcp_b_echo") {
		t.Errorf("b's tools are not offered after Start: %v", toolNames(h))
	}
}

// TestRemoveServerWhileConnecting: removing a server that is still
// starting cuts its start short, rather than waiting for its connect
// timeout, and leaves no child behind.
func TestRemoveServerWhileConnecting(t *testing.T) {
	w := newStates()
	h, _ := start(t, []config.Server{fixture(t, "a")}, nil, w)
	slow := fixture(t, "slow", "-slow-start", "60000")
	slow.ConnectTimeout = time.Minute
	if err := h.AddServer(slow); err != nil {
		t.Fatal(err)
	}
	w.await(t, "slow", host.StateConnecting)
	begin := time.Now()
	if err := h.RemoveServer("slow"); err != nil {
		t.Fatalf("RemoveServer(slow): %v", err)
	}
	if d := time.Since(begin); d > 20*time.Second {
		t.Errorf("RemoveServer of a starting server took %s: it waited for the start", d)
	}
}

// TestReplaceServer: a server replaced runs its new configuration in its
// place, and its old child is stopped.
func TestReplaceServer(t *testing.T) {
	w := newStates()
	h, _ := start(t, []config.Server{fixture(t, "a", "-tool-name", "old_tool"), fixture(t, "z")}, nil, w)
	before := w.await(t, "a", host.StateReady)
	if err := h.ReplaceServer(fixture(t, "a", "-tool-name", "new_tool")); err != nil {
		t.Fatalf("ReplaceServer(a): %v", err)
	}
	after := w.awaitFn(t, "a", "ready again", func(st host.ServerStatus) bool { return st.State == host.StateReady })
	if after.PID == before.PID || interopAlive(before.PID) {
		t.Errorf("the old child %d still runs (new %d)", before.PID, after.PID)
	}
	awaitEvent(t, w.w, host.EventCatalog, "a")
	if hasTool(h, "mcp_a_old_tool") || !hasTool(h, "mcp_a_new_tool") {
		t.Errorf("tools after ReplaceServer: %v", toolNames(h))
	}
	var ids []string
	for _, s := range h.Servers() {
		ids = append(ids, s.ID)
	}
	if len(ids) != 2 || ids[0] != "a" {
		t.Errorf("servers after ReplaceServer = %v, want a in its place", ids)
	}
	if err := h.ReplaceServer(fixture(t, "nope")); !errors.Is(err, host.ErrUnknownServer) {
		t.Errorf("ReplaceServer(nope) = %v, want ErrUnknownServer", err)
	}
}

// TestRefreshTools: RefreshTools re-reads a server's tools that changed
// without list_changed.
func TestRefreshTools(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "quiet", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}) // no list_changed
	mcp.AddTool(srv, &mcp.Tool{Name: "one"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	w := newStates()
	h, _ := start(t, nil, &host.Options{InProcess: []host.InProcessServer{{ID: "q", Server: srv}}}, w)
	mcp.AddTool(srv, &mcp.Tool{Name: "two"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	if hasTool(h, "mcp_q_two") {
		t.Fatal("the host saw the new tool without a refresh: the test proves nothing")
	}
	if err := h.RefreshTools(context.Background(), "q"); err != nil {
		t.Fatalf("RefreshTools(q): %v", err)
	}
	if !hasTool(h, "mcp_q_two") {
		t.Errorf("after RefreshTools: %v", toolNames(h))
	}
	awaitEvent(t, w.w, host.EventCatalog, "q")
	if err := h.RefreshTools(context.Background(), "nope"); !errors.Is(err, host.ErrUnknownServer) {
		t.Errorf("RefreshTools(nope) = %v, want ErrUnknownServer", err)
	}
	if err := h.RemoveServer("q"); !errors.Is(err, host.ErrInProcess) {
		t.Errorf("RemoveServer of an in-process server = %v, want ErrInProcess", err)
	}
}

// TestReadySince: a ready server says since when (its uptime); a
// restarted one counts from its new start.
func TestReadySince(t *testing.T) {
	w := newStates()
	begin := time.Now()
	h, _ := start(t, []config.Server{fixture(t, "a")}, nil, w)
	first := w.await(t, "a", host.StateReady).ReadySince
	if first.Before(begin) || first.After(time.Now()) {
		t.Fatalf("ReadySince = %v, want between %v and now", first, begin)
	}
	if err := h.ReplaceServer(fixture(t, "a")); err != nil {
		t.Fatal(err)
	}
	if st := w.await(t, "a", host.StateClosed); !st.ReadySince.IsZero() {
		t.Errorf("a closed server has ReadySince %v", st.ReadySince)
	}
	if again := w.await(t, "a", host.StateReady).ReadySince; !again.After(first) {
		t.Errorf("ReadySince after a restart = %v, want after %v", again, first)
	}
}
