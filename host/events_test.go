package host_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// chatty is an in-process server whose tool "chat" logs n messages to the
// session (belonging to no call's handler: each is an EventLog).
func chatty() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "1"}, nil)
	type in struct {
		N int `json:"n"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "chat"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		for i := range a.N {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("message %d", i)})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "said"}}}, nil, nil
	})
	return srv
}

// TestWatchers: a watcher that is never read does not slow calls or the
// other watchers; it keeps its buffer and is told how many events it lost;
// a closed watcher gets nothing more; closing the host ends the rest.
func TestWatchers(t *testing.T) {
	const n = 200 // within the reader's buffer (DefaultWatchBuffer): it reads after the call
	reader, blocked, gone := newStates(), newStates(), newStates()
	h, _ := start(t, nil, &host.Options{
		InProcess: []host.InProcessServer{{ID: "c", Server: chatty()}},
		// logging/setLevel is a 2025-11-25 request (2026-07-28 sets the
		// level per request).
		ProtocolVersion: "2025-11-25",
	}, reader, gone)
	blocked.w = h.Watch(8) // after the start: only the calls' events
	gone.w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.SetLoggingLevel(ctx, "info"); err != nil {
		t.Fatal(err)
	}
	// The call returns though one watcher reads nothing: publishing never
	// waits for a watcher.
	if got := callText(t, h, "mcp_c_chat", fmt.Sprintf(`{"n":%d}`, n), nil); got != "said" {
		t.Fatalf("chat = %q", got)
	}
	// The watcher that reads gets every message, in order.
	for i := range n {
		ev := awaitEvent(t, reader.w, host.EventLog, "c")
		if want := fmt.Sprintf("message %d", i); ev.Log.Data != want {
			t.Fatalf("event %d: %v, want %q", i, ev.Log.Data, want)
		}
	}
	// The reader may see the last message while publish is still handing
	// it to the other watchers; Watch waits for a publish to finish (a
	// watcher sees the events from its making on, none half-published).
	h.Watch(1).Close()
	// The blocked one kept its first 8, then learns it lost the rest.
	var logs, dropped int
	for _, ev := range drainEvents(blocked.w) {
		switch ev.Kind {
		case host.EventLog:
			logs++
		case host.EventDropped:
			dropped += ev.Dropped
		}
	}
	if logs != 8 || logs+dropped != n {
		t.Errorf("the blocked watcher got %d messages and a loss of %d, want 8 and %d", logs, dropped, n-8)
	}
	// An unsubscribed watcher gets nothing more.
	if ev, err := gone.w.Next(ctx); !errors.Is(err, host.ErrClosed) {
		t.Errorf("a closed watcher got %+v, %v; want ErrClosed", ev, err)
	}
	// Closing the host ends the watchers, after what they hold: the
	// server's closed state.
	h.Close()
	var closed bool
	for {
		ev, err := reader.w.Next(ctx)
		if errors.Is(err, host.ErrClosed) {
			break
		}
		if err != nil {
			t.Fatalf("after Close: %v", err)
		}
		closed = closed || (ev.Kind == host.EventState && ev.Status.State == host.StateClosed)
	}
	if !closed {
		t.Errorf("no closed state before the watcher ended")
	}
	if _, err := h.Watch(0).Next(ctx); !errors.Is(err, host.ErrClosed) {
		t.Errorf("a watcher of a closed host: %v, want ErrClosed", err)
	}
}

// TestWatchSeesTheStart: a watcher made between New and Start sees each
// server connect and become ready.
func TestWatchSeesTheStart(t *testing.T) {
	st := newStates()
	start(t, []config.Server{fixture(t, "a")}, nil, st)
	st.await(t, "a", host.StateConnecting)
	st.await(t, "a", host.StateReady)
}

// TestReadyEventCountsTools: the event saying a server is ready counts the
// tools the catalog offers from it, at the start and after a restart
// (before, it was published before the catalog took them: "tools": 0).
func TestReadyEventCountsTools(t *testing.T) {
	st := newStates()
	h, _ := start(t, []config.Server{fixture(t, "a", "-tools", "3")}, nil, st)
	want := h.Servers()[0].Tools
	if want < 4 {
		t.Fatalf("the fixture with 3 extra tools offers %d", want)
	}
	if got := st.await(t, "a", host.StateReady).Tools; got != want {
		t.Errorf("the ready event at the start counts %d tools; the catalog offers %d", got, want)
	}
	if err := syscall.Kill(pidOf(t, h, "a"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st.await(t, "a", host.StateRestarting)
	if got := st.await(t, "a", host.StateReady).Tools; got != want {
		t.Errorf("the ready event after a restart counts %d tools; the catalog offers %d", got, want)
	}
}

// TestStartOffersEachServerWhenReady: during Start, a server that is up is
// offered (its tools in the catalog, EventCatalog to the watchers) while a
// slower one is still starting, not once the slowest is up: a face
// published before Start serves what is there (issue 13 §2).
func TestStartOffersEachServerWhenReady(t *testing.T) {
	before := runtime.NumGoroutine()
	kidsBefore := children(t)
	h, err := host.New([]config.Server{fixture(t, "fast"), fixture(t, "slow", "-slow-start", "4000")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := h.Watch(0)
	if h.Starting() != nil {
		t.Error("Starting() is not nil before Start")
	}
	started := make(chan error, 1)
	go func() { started <- h.Start(context.Background()) }()
	t.Cleanup(func() {
		<-started
		h.Close()
		checkNoLeaks(t, before, kidsBefore)
	})
	ev := awaitEvent(t, w, host.EventCatalog, "fast")
	select {
	case err := <-started:
		started <- err
		t.Fatalf("the fast server's tools were announced only when Start returned (%v)", err)
	default:
	}
	if ev.Change != host.ToolsChanged {
		t.Errorf("first catalog event of fast: %s, want tools", ev.Change)
	}
	if _, ok := h.Tool("mcp_fast_echo"); !ok {
		t.Error("fast is announced but its tools are not offered")
	}
	if _, ok := h.Tool("mcp_slow_echo"); ok {
		t.Error("slow's tools are offered before it is up")
	}
	if st := h.Servers()[1].State; st != host.StateConnecting {
		t.Errorf("slow is %s while fast is offered, want connecting", st)
	}
	starting := h.Starting()
	if starting == nil {
		t.Fatal("Starting() is nil while slow starts")
	}
	awaitEvent(t, w, host.EventCatalog, "slow")
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	started <- nil
	select {
	case <-starting:
	default:
		t.Error("Starting()'s channel is open after Start returned")
	}
	if h.Starting() != nil {
		t.Error("Starting() is not nil after Start")
	}
	if _, ok := h.Tool("mcp_slow_echo"); !ok {
		t.Error("slow's tools are not offered once it joined")
	}
}

// TestSkippedToolsLoggedOnce: a server's skipped tools are logged when its
// listing is read, not again at each catalog rebuild another server
// causes — one per server that joins during the start, and one per
// restart of a flapping one.
func TestSkippedToolsLoggedOnce(t *testing.T) {
	st := newStates()
	h, logs := start(t, []config.Server{
		fixture(t, "a", "-tool-name", "dup.tool", "-tool-name", "dup_tool"),
		fixture(t, "b"),
		fixture(t, "c", "-exit-after", "300"),
	}, nil, st)
	// c exits and is restarted: a rebuild of the catalog.
	st.await(t, "c", host.StateRestarting)
	st.await(t, "c", host.StateReady)
	if _, ok := h.Tool("mcp_c_echo"); !ok {
		t.Fatal("c's tools are not offered after its restart")
	}
	if n := strings.Count(logs.String(), `msg="tool skipped" server=a tool=dup_tool`); n != 1 {
		t.Errorf("a's skipped tool logged %d times, want once:\n%s", n, logs)
	}
}

// TestWillStart: a host made starting before Start runs (the daemon
// serves at once and starts the host in another goroutine) reports so
// until Start returns, so that a face's request in between waits for the
// servers instead of finding the host neither starting nor started; a
// start that cannot happen (the host closed first) still ends it.
func TestWillStart(t *testing.T) {
	h, err := host.New([]config.Server{fixture(t, "fx")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Starting() != nil {
		t.Fatal("Starting before WillStart: want nil")
	}
	h.WillStart()
	starting := h.Starting()
	if starting == nil {
		t.Fatal("Starting after WillStart: nil, want the start's channel")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-starting:
	default:
		t.Fatal("the channel WillStart gave is still open after Start returned")
	}
	if h.Starting() != nil {
		t.Error("Starting after Start: want nil")
	}
	h.WillStart() // after Start: changes nothing
	if h.Starting() != nil {
		t.Error("WillStart after Start made the host starting again")
	}

	closed, err := host.New([]config.Server{fixture(t, "fy")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.WillStart()
	ch := closed.Starting()
	closed.Close()
	if err := closed.Start(ctx); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	select {
	case <-ch:
	default:
		t.Error("a start refused after Close left the host starting")
	}
}
