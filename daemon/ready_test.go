package daemon_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
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
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// slowStart is how long the slow fixture waits before it answers: long
// enough that a test sees the daemon serve before the server is up.
const slowStart = "3000"

// listChanged returns client options whose tools/list_changed handler
// signals the channel.
func listChanged() (*mcp.ClientOptions, chan struct{}) {
	changed := make(chan struct{}, 16)
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}, changed
}

// awaitTool waits, bounded, for a tools/list_changed after which the
// client sees tool name.
func awaitTool(t *testing.T, cs *mcp.ClientSession, changed chan struct{}, name string) {
	t.Helper()
	timeout := time.After(testTimeout)
	for !slices.Contains(toolNames(t, cs), name) {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("no list_changed brought %s: %v", name, toolNames(t, cs))
		}
	}
}

// TestServesBeforeServersAreUp: the daemon answers initialize while its
// only server is still starting; a listing waits for that server, which is
// required (a client that lists once gets what the configuration
// requires); OnReady says it is up then, and not before.
func TestServesBeforeServersAreUp(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{fixture(t, "slow", "-slow-start", slowStart)}}
	r := run(t, cfg, openStore(t), nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "early", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if st := r.d.Host().Servers()[0].State; st != host.StateConnecting {
		t.Fatalf("initialize was answered when slow was %s; want it answered while slow starts", st)
	}
	select {
	case <-r.ready:
		t.Fatal("OnReady was called while the only required server was starting")
	default:
	}
	if names := toolNames(t, cs); !slices.Contains(names, "mcp_slow_echo") {
		t.Fatalf("tools/list answered %v while the required slow server started; want it to wait for slow's tools", names)
	}
	sts := r.awaitReady(t)
	if len(sts) != 1 || sts[0].State != host.StateReady {
		t.Errorf("OnReady got %+v, want slow ready", sts)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_slow_echo", Arguments: map[string]any{"text": "joined"}})
	if err != nil || res.IsError {
		t.Fatalf("echo after joining: %v %v", res, err)
	}
}

// TestReadyWithOptionalStillStarting: an optional server does not hold the
// daemon back: it is ready when the required ones are up, says which
// optional one is still starting and which failed, and the slow one joins
// later.
func TestReadyWithOptionalStillStarting(t *testing.T) {
	slow := fixture(t, "slow", "-slow-start", slowStart)
	slow.Optional = true
	broken := config.Server{ID: "broken", Command: "/nonexistent/switchboard-test-server", Optional: true}
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx"), slow, broken}}
	r := run(t, cfg, openStore(t), nil)
	sts := r.awaitReady(t)
	got := map[string]host.State{}
	for _, st := range sts {
		got[st.ID] = st.State
	}
	if got["fx"] != host.StateReady || got["slow"] != host.StateConnecting {
		t.Errorf("at ready: %v; want fx ready and slow still connecting", got)
	}
	// The ready daemon serves fx's tools at once.
	opts, changed := listChanged()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A listing does not wait for an optional server: list_changed brings
	// it when it joins.
	if names := toolNames(t, cs); !slices.Contains(names, "mcp_fx_echo") || slices.Contains(names, "mcp_slow_echo") {
		t.Errorf("tools when ready: %v, want fx's and not yet slow's", names)
	}
	awaitTool(t, cs, changed, "mcp_slow_echo")
	for _, st := range r.d.Host().Servers() {
		if st.ID == "broken" && st.State != host.StateFailed && st.State != host.StateRestarting {
			t.Errorf("broken is %s", st.State)
		}
	}
}

// TestRequiredServerFails: a required server that fails to start fails
// Run, naming it, after the daemon served the others' tools meanwhile
// (calls; a listing waits for every required server, and ends with the
// shutdown);
// OnReady is never called, and nothing is left behind.
func TestRequiredServerFails(t *testing.T) {
	st := openStore(t)
	before := runtime.NumGoroutine()
	kids := interop.Children(os.Getpid())
	bad := fixture(t, "bad", "-hang-init")
	bad.ConnectTimeout = 5 * time.Second
	// fx comes up after the client has its session (so it is told), and
	// long before bad gives up.
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx", "-slow-start", "1000"), bad}}
	ln, err := daemon.Listen("127.0.0.1:0", cfg.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(t.Context(), ln, &daemon.Options{Config: cfg, Store: st, OnReady: func([]host.ServerStatus) {
		t.Error("OnReady called though a required server failed")
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	opts, changed := listChanged()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A listing waits for every required server; the call of a tool
	// published meanwhile does not.
	listed := make(chan error, 1)
	go func() {
		_, err := cs.ListTools(context.Background(), nil)
		listed <- err
	}()
	select {
	case <-changed:
	case <-time.After(testTimeout):
		t.Fatal("no list_changed when fx came up")
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "meanwhile"}})
	if err != nil || res.IsError {
		t.Errorf("a call while bad is starting: %v %v", res, err)
	}
	select {
	case err := <-listed:
		t.Errorf("tools/list answered (%v) while a required server was starting", err)
	default:
	}
	select {
	case err := <-done:
		var se *host.StartError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), `server "bad"`) || !strings.Contains(err.Error(), "connect_timeout") {
			t.Errorf("Run = %v, want a StartError naming bad and its connect_timeout", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Run did not fail")
	}
	if err := <-listed; err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("the listing waiting at the failure: %v, want it ended by the shutdown", err)
	}
	cs.Close()
	// The listener is closed: nothing answers any more.
	if resp, err := http.Get("http://" + ln.Addr().String() + "/mcp"); err == nil {
		resp.Body.Close()
		t.Errorf("the daemon still answers after Run failed: %s", resp.Status)
	}
	checkNoLeaks(t, before, kids)
}

// TestServeStdioAnswersAtOnce: over stdio, the client's initialize is
// answered while the servers are still starting; its listing waits for the
// required one (fx, whose start is made slow too) and not for the
// optional one, whose tools list_changed brings later.
func TestServeStdioAnswersAtOnce(t *testing.T) {
	opt := fixture(t, "opt", "-slow-start", "4000")
	opt.Optional = true
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx", "-slow-start", "1000"), opt}}
	ready := make(chan struct{})
	d, err := daemon.New(t.Context(), nil, &daemon.Options{Config: cfg, Store: openStore(t), OnReady: func([]host.ServerStatus) { close(ready) }})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- d.ServeStdio(context.Background(), inR, outW) }()
	opts, changed := listChanged()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Host().Servers()[0].State; st != host.StateConnecting {
		t.Errorf("initialize answered when fx was %s; want it answered while fx starts", st)
	}
	select {
	case <-ready:
		t.Error("ready before the required server is up")
	default:
	}
	names := toolNames(t, cs)
	if !slices.Contains(names, "mcp_fx_echo") || slices.Contains(names, "mcp_opt_echo") {
		t.Errorf("the first listing: %v; want fx's tools (it waited for fx) and not yet opt's", names)
	}
	awaitTool(t, cs, changed, "mcp_opt_echo")
	<-ready
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeStdio did not return after its client left")
	}
	outW.Close()
}

// checkNoLeaks waits, bounded, for the goroutines to come back to before
// and checks that no child process is left.
func checkNoLeaks(t *testing.T, before int, kids map[int]string) {
	t.Helper()
	wait.Goroutines(t, before)
	for pid, k := range interop.Children(os.Getpid()) {
		if _, ok := kids[pid]; !ok {
			t.Errorf("child process left: %v", k)
		}
	}
}

// TestCallWaitsForTheStart: a client that calls a tool right after
// initialize, without listing (the MCP inspector's CLI, a script), while
// the tool's server is still starting, gets its call made once the server
// is up, not "unknown tool"; a tool no server has is unknown at once
// after the start.
func TestCallWaitsForTheStart(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{fixture(t, "slow", "-slow-start", slowStart)}}
	r := run(t, cfg, openStore(t), nil)
	cs := connect(t, r.url)
	if st := r.d.Host().Servers()[0].State; st != host.StateConnecting {
		t.Fatalf("slow is %s at initialize, want connecting", st)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_slow_echo", Arguments: map[string]any{"text": "waited"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "waited" {
		t.Fatalf("a call made while its server starts: %v %v, want it made once the server is up", res, err)
	}
	r.awaitReady(t)
	start := time.Now()
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_slow_nope"})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") || time.Since(start) > 5*time.Second {
		t.Errorf("an unknown tool after the start: %v after %s, want unknown at once", err, time.Since(start))
	}
}
