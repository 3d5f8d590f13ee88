package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

func fixture(t *testing.T, id string, flags ...string) config.Server {
	t.Helper()
	return config.Server{ID: id, Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg), Args: flags}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// running is a daemon serving HTTP on loopback until the test ends.
type running struct {
	d     *daemon.Daemon
	url   string
	stop  context.CancelFunc
	done  chan error
	ready chan []host.ServerStatus // OnReady's
}

// run runs a daemon over cfg. opts, when given, is the base of its
// options (Config, Store and OnReady are the test's).
func run(t *testing.T, cfg *config.Config, st *store.Store, mount func(*daemon.Daemon), opts ...daemon.Options) *running {
	t.Helper()
	before := runtime.NumGoroutine()
	kids := interop.Children(os.Getpid())
	ln, err := daemon.Listen("127.0.0.1:0", cfg.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan []host.ServerStatus, 1)
	var o daemon.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Config, o.Store = cfg, st
	o.OnReady = func(sts []host.ServerStatus) { ready <- sts }
	d, err := daemon.New(t.Context(), ln, &o)
	if err != nil {
		t.Fatal(err)
	}
	if mount != nil {
		mount(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, url: "http://" + ln.Addr().String(), stop: cancel, done: make(chan error, 1), ready: ready}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		r.shutdown(t)
		wait.Goroutines(t, before)
		for pid, k := range interop.Children(os.Getpid()) {
			if _, ok := kids[pid]; !ok {
				t.Errorf("child process left: %v", k)
			}
		}
	})
	return r
}

// awaitReady waits for OnReady and returns what it was given.
func (r *running) awaitReady(t *testing.T) []host.ServerStatus {
	t.Helper()
	select {
	case sts := <-r.ready:
		return sts
	case err := <-r.done:
		r.done <- err
		t.Fatalf("Run returned before the daemon was ready: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("the daemon was never ready")
	}
	return nil
}

// testTimeout bounds each wait of a test.
const testTimeout = 30 * time.Second

func (r *running) shutdown(t *testing.T) {
	t.Helper()
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		r.done <- nil // for a second shutdown
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func connect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	var cs *mcp.ClientSession
	wait.For(t, "a session with the daemon", func() (err error, ok bool) {
		// The listener is bound before the servers start: a request
		// before then waits in the accept queue, not refused.
		cs, err = c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		return err, err == nil
	})
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestRun: the daemon serves its servers' tools at /mcp, a face mounted
// beside the gateway answers on the same listener, and ending Run's
// context stops everything (no goroutine, no child left).
func TestRun(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	r := run(t, cfg, openStore(t), func(d *daemon.Daemon) {
		d.Handle("/hello", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "beside the gateway") }))
	})
	r.awaitReady(t)
	cs := connect(t, r.url)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "through the daemon"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %v", res, err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "through the daemon" {
		t.Errorf("echo = %q", got)
	}
	resp, err := http.Get(r.url + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "beside the gateway" {
		t.Errorf("mounted face answered %q", body)
	}
	if h := r.d.Host(); h == nil || len(h.Servers()) != 1 {
		t.Errorf("Host() = %v", h)
	}
	cs.Close()
	r.shutdown(t)
	if st := r.d.Host().Servers()[0]; st.State != host.StateClosed {
		t.Errorf("after Run: server %s, want closed", st.State)
	}
}

// TestStoredServers: servers added at run time (in the state store) are
// served beside the configured ones; a disabled one is not started; one
// whose id a configured server has loses to it.
func TestStoredServers(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	bin := interop.Build(t, fixturePkg)
	add := func(id string, enabled bool, m map[string]any) {
		raw, _ := json.Marshal(m)
		if _, err := st.AddServer(ctx, store.ServerRecord{ID: id, Config: raw, Enabled: enabled}); err != nil {
			t.Fatal(err)
		}
	}
	add("added", true, map[string]any{"command": bin, "args": []string{"-tool-name", "only_added"}})
	add("off", false, map[string]any{"command": bin})
	add("fx", true, map[string]any{"command": bin, "args": []string{"-tool-name", "from_the_store"}})
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	r := run(t, cfg, st, nil)
	r.awaitReady(t)
	// A server added at run time is optional to the daemon (issue 24):
	// ready need not wait for it, and it joins when it is up.
	opts, changed := listChanged()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	awaitTool(t, cs, changed, "mcp_added_only_added")
	names := strings.Join(toolNames(t, cs), " ")
	if strings.Contains(names, "mcp_off_") {
		t.Errorf("a disabled stored server is served: %s", names)
	}
	if strings.Contains(names, "from_the_store") || !strings.Contains(names, "mcp_fx_echo") {
		t.Errorf("the stored fx won over the configured one: %s", names)
	}
}

// TestStoredServerInvalid: a stored server never stops the daemon (issue
// 24): one that is not a valid server entry is reported failed, naming the
// field, and one that cannot start fails alone, though its entry says it
// is not optional; the configured server is served, Run goes on.
func TestStoredServerInvalid(t *testing.T) {
	st := openStore(t)
	for id, cfg := range map[string]string{
		"bad":   `{"command":"x","url":"https://example.com/mcp","timeout":"soon"}`,
		"quits": `{"command":"/usr/bin/true","optional":false}`,
	} {
		if _, err := st.AddServer(context.Background(), store.ServerRecord{ID: id, Enabled: true, Config: json.RawMessage(cfg)}); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, &config.Config{Servers: []config.Server{fixture(t, "fx")}}, st, nil)
	r.awaitReady(t)
	ms, err := r.d.ListServers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == "bad" && (m.Status == nil || m.Status.State != host.StateFailed || !strings.Contains(m.Status.Err.Error(), "timeout")) {
			t.Errorf("bad: %+v, want failed naming its timeout", m.Status)
		}
	}
	if names := toolNames(t, connect(t, r.url)); !slices.Contains(names, "mcp_fx_echo") {
		t.Errorf("the configured server is not served: %v", names)
	}
	if d := r.d.Host(); d != nil {
		if st, err := d.Status("quits"); err != nil || !st.Optional {
			t.Errorf("quits: %+v %v, want run as optional", st, err)
		}
	}
	select {
	case err := <-r.done:
		r.done <- err
		t.Fatalf("Run returned: %v", err)
	default:
	}
}

// TestListenBeyondLoopbackNeedsToken: serving beyond loopback without a
// bearer token is refused as a usage error, before anything starts.
func TestListenBeyondLoopbackNeedsToken(t *testing.T) {
	_, err := daemon.Listen("0.0.0.0:0", config.Gateway{})
	var ue *daemon.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "auth_token") {
		t.Errorf("Listen beyond loopback without a token: %v, want a UsageError naming auth_token", err)
	}
	ln, err := daemon.Listen("0.0.0.0:0", config.Gateway{AuthToken: "{{secrets.t}}"})
	if err != nil {
		t.Fatalf("with a token: %v", err)
	}
	ln.Close()
}

// TestServeStdio: one client over a pair of pipes; its leaving ends the
// daemon. Meanwhile the local socket serves the daemon's routes, a face
// mounted with Handle among them, as it does beside a listener.
func TestServeStdio(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	ready := make(chan struct{})
	sock := filepath.Join(runtimeDir(t), "switchboard", "t.sock")
	d, err := daemon.New(t.Context(), nil, &daemon.Options{Config: cfg, Store: openStore(t), Socket: sock, OnReady: func([]host.ServerStatus) { close(ready) }})
	if err != nil {
		t.Fatal(err)
	}
	d.Handle("/added-later", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "added later") }))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- d.ServeStdio(context.Background(), inR, outW) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	<-ready
	if names := toolNames(t, cs); !slices.Contains(names, "mcp_fx_echo") {
		t.Errorf("tools over stdio: %v", names)
	}
	hc, err := daemon.SocketClient(sock)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get("http://" + daemon.SocketHost + "/added-later")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	hc.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK || string(b) != "added later" {
		t.Errorf("GET /added-later on the socket beside stdio: %d %q, want the face's answer", resp.StatusCode, b)
	}
	cs.Close() // closes inW: the client left
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ServeStdio did not return after its client left")
	}
	outW.Close()
}

// TestShutdownWithACallInFlight: ending Run's context while a call hangs
// gives it the grace period, then cancels it (upstream too) with a clear
// error; Run returns and no child is left (run's cleanup checks).
func TestShutdownWithACallInFlight(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	cfg.Servers[0].Timeout = time.Minute
	cfg.Gateway.ShutdownGrace = 300 * time.Millisecond
	r := run(t, cfg, openStore(t), nil)
	r.awaitReady(t)
	cs := connect(t, r.url)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_slow", Arguments: map[string]any{"ms": 60000}})
		called <- result{res, err}
	}()
	// The call is in flight once the server has it.
	wait.For(t, "the call to be in flight", func() (int, bool) {
		n := r.d.Host().Servers()[0].InFlight
		return n, n > 0
	})
	start := time.Now()
	r.shutdown(t)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("shutdown took %s with a 300ms grace", took)
	}
	got := <-called
	text := ""
	if got.err != nil {
		text = got.err.Error()
	} else if got.res != nil && got.res.IsError {
		text = got.res.Content[0].(*mcp.TextContent).Text
	}
	if !strings.Contains(text, "shutting down") {
		t.Errorf("the call in flight ended with %v %v, want a clear shutting-down error", got.res, got.err)
	}
}

// TestNewCancelled: a start held up by a database that never answers (a
// listener that accepts and then says nothing, where PostgreSQL should
// be) ends as soon as its context does, as Ctrl-C ends serve's, with
// context.Canceled: it waited for a fixed 30 s before.
func TestNewCancelled(t *testing.T) {
	database, connected := testpg.Silent(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		d, err := daemon.New(ctx, nil, &daemon.Options{Config: &config.Config{}, Database: database})
		if err == nil {
			d.Close()
		}
		done <- err
	}()
	select {
	case <-connected:
	case err := <-done:
		t.Fatalf("New returned before it connected to the database: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("New never connected to the database")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("New after its context was cancelled: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("New still runs 5 s after its context was cancelled")
	}
}
