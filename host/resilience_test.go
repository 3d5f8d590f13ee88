package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// states collects a host's state changes (EventState) so tests can wait
// for one; start sets its watcher.
type states struct{ w *host.Watcher }

func newStates() *states { return &states{} }

// await waits, bounded, for server id to reach state.
func (s *states) await(t *testing.T, id string, state host.State) host.ServerStatus {
	t.Helper()
	return s.awaitFn(t, id, string(state), func(st host.ServerStatus) bool { return st.State == state })
}

func (s *states) awaitFn(t *testing.T, id, what string, ok func(host.ServerStatus) bool) host.ServerStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ev, err := s.w.Next(ctx)
		if err != nil {
			t.Fatalf("server %q never reached %s: %v", id, what, err)
		}
		if ev.Kind == host.EventDropped {
			t.Fatalf("the test's watcher lost %d events", ev.Dropped)
		}
		if ev.Kind == host.EventState && ev.Server == id && ok(ev.Status) {
			return ev.Status
		}
	}
}

// awaitEvent waits, bounded, for the next event of kind about server.
func awaitEvent(t *testing.T, w *host.Watcher, kind host.EventKind, server string) host.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ev, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("no %s event from %q: %v", kind, server, err)
		}
		if ev.Kind == kind && ev.Server == server {
			return ev
		}
	}
}

// drainEvents returns the events w holds now, without waiting for more.
func drainEvents(w *host.Watcher) []host.Event {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Next returns what is queued before looking at ctx
	var out []host.Event
	for {
		ev, err := w.Next(ctx)
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

func pidOf(t *testing.T, h *host.Host, id string) int {
	t.Helper()
	for _, st := range h.Servers() {
		if st.ID == id && st.PID > 0 {
			return st.PID
		}
	}
	t.Fatalf("no pid for %q", id)
	return 0
}

// TestRestartAfterKill: kill -9 mid-call fails that call at once, the server
// is restarted, and a call made while it restarts waits for it.
func TestRestartAfterKill(t *testing.T) {
	st := newStates()
	h, _ := start(t, []config.Server{fixture(t, "k")}, &host.Options{}, st)
	pid := pidOf(t, h, "k")

	errc := make(chan error, 1)
	go func() {
		_, err := h.CallTool(context.Background(), "mcp_k_slow", json.RawMessage(`{"ms":60000}`), nil)
		errc <- err
	}()
	// Kill once the call is in flight.
	waitFor(t, func() bool { return h.Servers()[0].InFlight == 1 }, "the call to be in flight")
	start := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if !errors.Is(err, host.ErrUnavailable) || !strings.Contains(err.Error(), "connection lost") {
		t.Fatalf("in-flight call: err = %v, want ErrUnavailable: connection lost", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the in-flight call took %v to fail", d)
	}
	// A call made now waits for the restart, within its own timeout.
	if got := callText(t, h, "mcp_k_echo", `{"text":"after restart"}`, nil); got != "after restart" {
		t.Errorf("echo after restart = %q", got)
	}
	s := h.Servers()[0]
	if s.State != host.StateReady || s.Restarts != 1 || s.PID == pid || s.LastError == nil {
		t.Errorf("status after restart = state %s, restarts %d, pid %d (was %d), last error %v", s.State, s.Restarts, s.PID, pid, s.LastError)
	}
}

// TestFlappingServerMarkedFailed: a server that keeps dying is restarted a
// bounded number of times, then left alone (calls fail at once) until asked.
func TestFlappingServerMarkedFailed(t *testing.T) {
	st := newStates()
	// Optional, so that an early death during the start does not fail it.
	s := fixture(t, "flap", "-exit-after", "200")
	s.MaxRestarts = 2
	s.Optional = true
	h, _ := start(t, []config.Server{s}, &host.Options{}, st)
	st.awaitFn(t, "flap", "failed, not restarting", func(s host.ServerStatus) bool {
		return s.State == host.StateFailed && s.Err != nil && strings.Contains(s.Err.Error(), "not restarting")
	})
	begin := time.Now()
	_, err := h.CallTool(context.Background(), "mcp_flap_echo", json.RawMessage(`{"text":"x"}`), nil)
	if !errors.Is(err, host.ErrUnavailable) || time.Since(begin) > 2*time.Second {
		t.Errorf("call to a failed server: err = %v after %v; want ErrUnavailable at once", err, time.Since(begin))
	}
	// Asked to, it is started again.
	if err := h.Restart("flap"); err != nil {
		t.Fatal(err)
	}
	st.awaitFn(t, "flap", "ready after Restart", func(s host.ServerStatus) bool { return s.State == host.StateReady })
}

// TestHealthPingReconnects: a server that stops answering (SIGSTOP) misses
// its health pings, is marked degraded, then reconnected.
func TestHealthPingReconnects(t *testing.T) {
	st := newStates()
	s := fixture(t, "frozen")
	s.HealthInterval = 100 * time.Millisecond
	s.Timeout = 300 * time.Millisecond
	h, _ := start(t, []config.Server{s}, &host.Options{}, st)
	pid := pidOf(t, h, "frozen")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	st.await(t, "frozen", host.StateDegraded)
	st.await(t, "frozen", host.StateRestarting)
	st.await(t, "frozen", host.StateReady)
	if got := callText(t, h, "mcp_frozen_echo", `{"text":"thawed"}`, nil); got != "thawed" {
		t.Errorf("echo = %q", got)
	}
	if newPid := pidOf(t, h, "frozen"); newPid == pid {
		t.Errorf("still the frozen process %d", pid)
	}
}

// TestOptionalRetriedInBackground: an optional server that fails at start
// joins when it comes up.
func TestOptionalRetriedInBackground(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "tried")
	script := filepath.Join(dir, "server.sh")
	bin := fixture(t, "x").Command
	// Fails the first time, serves after.
	err := os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\nif [ ! -e %q ]; then touch %q; exit 1; fi\nexec %q\n", marker, marker, bin)), 0o755)
	if err != nil {
		t.Fatal(err)
	}
	st := newStates()
	h, _ := start(t, []config.Server{fixture(t, "good"), {ID: "late", Command: script, Optional: true}}, &host.Options{}, st)
	if s := h.Servers()[1]; s.State != host.StateFailed && s.State != host.StateConnecting && s.State != host.StateReady {
		t.Errorf("late at start = %s", s.State)
	}
	st.await(t, "late", host.StateReady)
	waitFor(t, func() bool { _, ok := h.Tool("mcp_late_echo"); return ok }, "late's tools in the catalog")
	if got := callText(t, h, "mcp_late_echo", `{"text":"joined"}`, nil); got != "joined" {
		t.Errorf("echo = %q", got)
	}
}

// TestNetworkSessionLost: a Streamable HTTP server that forgets the session
// (as after its own restart: 404 for the old session id) is re-initialised.
func TestNetworkSessionLost(t *testing.T) {
	newHandler := func() http.Handler {
		srv := mcp.NewServer(&mcp.Implementation{Name: "net", Version: "1"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "hi"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + in.Name}}}, nil, nil
		})
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	var current atomic.Value
	current.Store(newHandler())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		current.Load().(http.Handler).ServeHTTP(w, r)
	}))

	st := newStates()
	s := config.Server{ID: "net", Transport: config.TransportHTTP, URL: ts.URL, AllowLocalEndpoint: true}
	s.HealthInterval = 100 * time.Millisecond
	h, _ := start(t, []config.Server{s}, &host.Options{}, st)
	callText(t, h, "mcp_net_hi", `{"name":"a"}`, nil)

	current.Store(newHandler()) // the server "restarted": our session id is unknown
	ts.CloseClientConnections()
	st.await(t, "net", host.StateRestarting)
	st.await(t, "net", host.StateReady)
	if got := callText(t, h, "mcp_net_hi", `{"name":"b"}`, nil); got != "hi b" {
		t.Errorf("after re-initialising = %q", got)
	}
	// Close the host before the server, so that the leak check (a cleanup)
	// does not count the server's own goroutines.
	h.Close()
	ts.Close()
}

func TestMaxConcurrency(t *testing.T) {
	s := fixture(t, "one")
	s.MaxConcurrency = 1
	h, _ := start(t, []config.Server{s}, nil)
	first := make(chan error, 1)
	go func() {
		_, err := h.CallTool(context.Background(), "mcp_one_slow", json.RawMessage(`{"ms":1500}`), nil)
		first <- err
	}()
	waitFor(t, func() bool { return h.Servers()[0].InFlight == 1 }, "the first call to be in flight")
	// The second queues for the place, within its own deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := h.CallTool(ctx, "mcp_one_echo", json.RawMessage(`{"text":"x"}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "max_concurrency = 1") {
		t.Errorf("second call: err = %v, want its deadline while waiting for max_concurrency", err)
	}
	if err := <-first; err != nil {
		t.Errorf("first call: %v", err)
	}
	// With the place free, calls go through.
	callText(t, h, "mcp_one_echo", `{"text":"x"}`, nil)
}

func TestCircuitBreaker(t *testing.T) {
	s := fixture(t, "hung", "-hang")
	s.Timeout = 50 * time.Millisecond
	h, _ := start(t, []config.Server{s}, nil)
	for i := range 5 {
		if _, err := h.CallTool(context.Background(), "mcp_hung_echo", json.RawMessage(`{"text":"x"}`), nil); !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("call %d: err = %v, want ErrTimeout", i, err)
		}
	}
	// ErrCircuitOpen, not ErrTimeout: the call failed without reaching the
	// server (the open circuit's cool-down is timed in TestBreakerTiming).
	_, err := h.CallTool(context.Background(), "mcp_hung_echo", json.RawMessage(`{"text":"x"}`), nil)
	if !errors.Is(err, host.ErrCircuitOpen) || errors.Is(err, host.ErrTimeout) {
		t.Fatalf("sixth call: err = %v, want ErrCircuitOpen", err)
	}
}

// TestLazyServers: a lazy server's first run connects and fills the cache;
// the next host offers its cached tools without starting it, and starts it
// on the first call.
func TestLazyServers(t *testing.T) {
	cache := openStore(t)
	s := fixture(t, "lz")
	s.Lazy = true
	h1, _ := start(t, []config.Server{s}, &host.Options{ToolCache: cache})
	if st := h1.Servers()[0]; st.State != host.StateReady {
		t.Fatalf("first run: state = %s, want ready (the first run always connects)", st.State)
	}
	h1.Close()

	st := newStates()
	h2, _ := start(t, []config.Server{s}, &host.Options{ToolCache: cache}, st)
	if got := h2.Servers()[0]; got.State != host.StateLazy || got.PID != 0 {
		t.Fatalf("second run: state = %s pid %d, want lazy-idle and no process", got.State, got.PID)
	}
	if !hasTool(h2, "mcp_lz_echo") {
		t.Fatalf("cached tools not offered: %v", toolNames(h2))
	}
	if got, want := st.await(t, "lz", host.StateLazy).Tools, len(toolNames(h2)); got != want {
		t.Errorf("the lazy-idle event counts %d tools; the catalog offers %d", got, want)
	}
	if got := callText(t, h2, "mcp_lz_echo", `{"text":"woken"}`, nil); got != "woken" {
		t.Errorf("echo = %q", got)
	}
	if got := h2.Servers()[0]; got.State != host.StateReady || got.PID == 0 {
		t.Errorf("after the call: state = %s pid %d, want ready and running", got.State, got.PID)
	}

	// A changed launch spec does not use the old list.
	s.Args = []string{"-tools", "3"}
	h3, _ := start(t, []config.Server{s}, &host.Options{ToolCache: cache})
	if got := h3.Servers()[0]; got.State != host.StateReady {
		t.Errorf("changed spec: state = %s, want ready (connected, not cached)", got.State)
	}
}

// TestBreakerTiming checks the breaker's cool-down and half-open trial in a
// synctest bubble, where time is simulated.
func TestBreakerTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := host.NewBreakerForTest()
		for range 5 {
			b.Record(time.Now(), false)
		}
		if err := b.Allow(time.Now()); !errors.Is(err, host.ErrCircuitOpen) {
			t.Fatalf("after 5 failures: %v, want open", err)
		}
		time.Sleep(29 * time.Second)
		if err := b.Allow(time.Now()); err == nil {
			t.Fatal("open circuit allowed a call before the cool-down ended")
		}
		time.Sleep(2 * time.Second)
		if err := b.Allow(time.Now()); err != nil {
			t.Fatalf("after the cool-down: %v, want one trial call", err)
		}
		if err := b.Allow(time.Now()); err == nil {
			t.Fatal("a second call went through while the trial is out")
		}
		b.Record(time.Now(), true)
		if err := b.Allow(time.Now()); err != nil {
			t.Fatalf("after a successful trial: %v, want closed", err)
		}
	})
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		n      int
		lo, hi time.Duration
	}{
		{0, 400 * time.Millisecond, 600 * time.Millisecond},
		{1, 800 * time.Millisecond, 1200 * time.Millisecond},
		{3, 3200 * time.Millisecond, 4800 * time.Millisecond},
		{10, 24 * time.Second, 36 * time.Second},
		{100, 24 * time.Second, 36 * time.Second},
	} {
		lo, hi := host.BackoffForTest(tc.n, 0), host.BackoffForTest(tc.n, 1)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("backoff(%d) spans [%v, %v], want [%v, %v]", tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// blockOnLine is a log writer that blocks the write of the first line
// containing line until release is closed, signalling entered.
type blockOnLine struct {
	line             string
	once             sync.Once
	entered, release chan struct{}
}

func (b *blockOnLine) Write(p []byte) (int, error) {
	if strings.Contains(string(p), b.line) {
		b.once.Do(func() {
			close(b.entered)
			<-b.release
		})
	}
	return len(p), nil
}

// TestCloseWaitsForWatchers: Close returns only once the goroutines that
// watch a server's connections have finished reporting a lost one (a log
// line, an OnState call): such a line used to be written after Close had
// returned, into a caller's buffer (seen as a data race in TestCanary).
// Both connections: the server's own, and its 2026-07-28 one.
func TestCloseWaitsForWatchers(t *testing.T) {
	for _, c := range []struct {
		name, line string
		opts       *host.CallOptions
	}{
		{"own", "server connection lost", nil},
		{"2026-07-28", "connection ended", &host.CallOptions{RequestOptions: host.RequestOptions{InputRequired: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &blockOnLine{line: c.line, entered: make(chan struct{}), release: make(chan struct{})}
			h, _ := start(t, []config.Server{fixture(t, "boom", "-crash-on-call")}, &host.Options{Logger: slog.New(slog.NewTextHandler(w, nil))})
			if _, err := h.CallTool(context.Background(), "mcp_boom_echo", json.RawMessage(`{"text":"x"}`), c.opts); err == nil {
				t.Fatal("the crashing call succeeded")
			}
			select {
			case <-w.entered:
			case <-time.After(30 * time.Second):
				t.Fatalf("no %q logged", c.line)
			}
			closed := make(chan struct{})
			go func() {
				h.Close()
				close(closed)
			}()
			// Close must not return while the watcher is still reporting.
			// Nothing signals a Close that wrongly returned: give it a
			// bounded while.
			select {
			case <-closed:
				t.Error("Close returned while a watcher was still reporting the lost connection")
			case <-time.After(time.Second):
			}
			close(w.release)
			<-closed
		})
	}
}
