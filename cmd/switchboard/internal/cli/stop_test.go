package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestServeStopsWithQuestionsOpen (issue 23 §5): every request serve waits
// on ends with its session, its call or the shutdown grace. Held open
// across SIGTERM, one of each kind:
//
//   - a client's call that never ends (slow);
//   - upstream questions to 2025-11-25 clients that never answer them:
//     roots/list, elicitation/create and sampling/createMessage;
//   - upstream questions bridged to 2026-07-28 clients (pendingCall) that
//     never come back with the answers: roots twice at once, and
//     elicitation;
//
// each asked by an upstream that does not withdraw its question when its
// call is cancelled (ask_detached). Before SIGTERM, a 2025-11-25 client
// with a roots question open deletes its session: the DELETE returns.
// After SIGTERM serve returns within the grace and a small bound, the
// clients answer late (after the grace, to nobody), and no goroutine or
// child process is left.
func TestServeStopsWithQuestionsOpen(t *testing.T) {
	const grace = time.Second
	dir := isolate(t)
	bin := interop.Build(t, fixturePkg)
	var servers strings.Builder
	// One upstream per question: over 2025-11-25 a server's question does
	// not name its call, and one server with several calls in flight
	// cannot be answered by any one client.
	ids := []string{"slow", "roots", "elicit", "sample", "roots2", "elicit2", "gone"}
	for _, id := range ids {
		fmt.Fprintf(&servers, "[[mcp_servers]]\nid = %q\ncommand = %q\ntimeout = \"10m\"\n", id, bin)
		if strings.HasSuffix(id, "2") {
			// Bridged for a 2026-07-28 client only when the upstream does
			// not speak that version itself.
			servers.WriteString("args = [\"-protocol-version\", \"2025-11-25\"]\n")
		}
	}
	cfg := writeConfig(t, dir, servers.String()+"\n[gateway]\nshutdown_grace = \"1s\"\n")

	goroutines := runtime.NumGoroutine()
	children := childPIDs(t)
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	base, code, stderr := startServe(t, ctx, "--config", cfg, "-vv", "serve", "--listen", "127.0.0.1:0")

	callCtx, callCancel := context.WithTimeout(context.Background(), testTimeout)
	defer callCancel()
	rt := &http.Transport{}
	defer rt.CloseIdleConnections()
	hc := &http.Client{Transport: rt}

	// The clients never answer until release is closed, after serve has
	// returned.
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	type client struct {
		cs    *mcp.ClientSession
		asked chan string // the method of each question that reached it
	}
	connect := func(version string, mrtr bool) *client {
		c := &client{asked: make(chan string, 8)}
		never := func(ctx context.Context) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		opts := &mcp.ClientOptions{
			// Declared, so that the gateway forwards the questions.
			ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, never(ctx)
			},
			CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "late"}}, never(ctx)
			},
		}
		if !mrtr {
			opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
		}
		cl := mcp.NewClient(&mcp.Implementation{Name: "stop-test", Version: "1"}, opts)
		cl.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				switch method {
				case "roots/list", "elicitation/create", "sampling/createMessage":
					c.asked <- method
					if method == "roots/list" {
						if err := never(ctx); err != nil {
							return nil, err
						}
					}
				}
				return next(ctx, method, req)
			}
		})
		cs, err := cl.Connect(callCtx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect (%s): %v\n%s", version, err, stderr())
		}
		c.cs = cs
		return c
	}
	type outcome struct {
		name string
		res  *mcp.CallToolResult
		err  error
	}
	ended := make(chan outcome, len(ids))
	call := func(c *client, name string, args map[string]any) {
		go func() {
			res, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: name, Arguments: args})
			ended <- outcome{name, res, err}
		}()
	}
	awaitAsked := func(c *client, want string) {
		t.Helper()
		select {
		case got := <-c.asked:
			if got != want {
				t.Fatalf("the client was asked %s, want %s", got, want)
			}
		case <-time.After(testTimeout):
			t.Fatalf("the client was never asked %s\n%s", want, stderr())
		}
	}
	var clients []*client

	// A client that leaves with a question open: its DELETE returns.
	gone := connect("2025-11-25", false)
	clients = append(clients, gone)
	call(gone, "mcp_gone_ask_detached", map[string]any{"kind": "roots"})
	awaitAsked(gone, "roots/list")
	del, err := http.NewRequestWithContext(callCtx, http.MethodDelete, base+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	del.Header.Set("Mcp-Session-Id", gone.cs.ID())
	deleted := make(chan error, 1)
	go func() {
		resp, err := hc.Do(del)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
		deleted <- err
	}()
	select {
	case err := <-deleted:
		if err != nil {
			t.Errorf("DELETE of a session with a question open: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("DELETE of a session with a roots question open did not return within 5 s\n%s", stderr())
	}

	// A client's call that never ends.
	slow := connect("2025-11-25", false)
	clients = append(clients, slow)
	call(slow, "mcp_slow_slow", map[string]any{"ms": 600000})
	waitFor(t, stderr, "slow: started (600000 ms)")

	// Questions to 2025-11-25 clients, never answered.
	for _, q := range []struct{ server, kind, method string }{
		{"roots", "roots", "roots/list"},
		{"elicit", "elicitation", "elicitation/create"},
		{"sample", "sampling", "sampling/createMessage"},
	} {
		c := connect("2025-11-25", false)
		clients = append(clients, c)
		call(c, "mcp_"+q.server+"_ask_detached", map[string]any{"kind": q.kind})
		awaitAsked(c, q.method)
	}

	// Questions bridged to 2026-07-28 clients, who never come back.
	for _, q := range []struct {
		server, kind string
		times        int
	}{
		{"roots2", "roots", 2},
		{"elicit2", "elicitation", 1},
	} {
		c := connect("2026-07-28", false)
		clients = append(clients, c)
		res, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mcp_" + q.server + "_ask_detached",
			Arguments: map[string]any{"kind": q.kind, "times": q.times}})
		if err != nil {
			t.Fatalf("%s: %v\n%s", q.server, err, stderr())
		}
		if len(res.InputRequests) == 0 {
			t.Fatalf("%s: the 2026-07-28 client got %+v, want input requests", q.server, res)
		}
		// Both questions of the upstream that asks twice, else the second
		// one still to come.
		for n := len(res.InputRequests); n < q.times; n += len(res.InputRequests) {
			res, err = c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mcp_" + q.server + "_ask_detached",
				Arguments: map[string]any{"kind": q.kind, "times": q.times}, RequestState: res.RequestState})
			if err != nil || len(res.InputRequests) == 0 {
				t.Fatalf("%s: the retry without answers got %+v, %v; want the question still open", q.server, res, err)
			}
		}
	}

	start := time.Now()
	sigterm()
	select {
	case c := <-code:
		if c != cli.ExitOK {
			t.Errorf("serve exited %d, want 0\n%s", c, stderr())
		}
	case <-time.After(grace + 20*time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("serve still running %s after SIGTERM (grace %s)\n%s\ngoroutines:\n%s", time.Since(start).Round(time.Second), grace, stderr(), buf[:runtime.Stack(buf, true)])
	}
	took := time.Since(start)
	t.Logf("serve returned %s after SIGTERM (grace %s)", took.Round(time.Millisecond), grace)
	if bound := grace + 3*time.Second; took > bound {
		t.Errorf("serve returned %s after SIGTERM, want at most %s (grace %s)", took.Round(time.Millisecond), bound, grace)
	}
	// The clients answer now, after the grace: to nobody.
	releaseOnce.Do(func() { close(release) })
	for range 5 { // the 2025-11-25 calls, the deleted session's included
		select {
		case o := <-ended:
			if o.err == nil && (o.res == nil || !o.res.IsError) {
				t.Errorf("%s succeeded across the shutdown: %+v", o.name, o.res)
			}
		case <-time.After(testTimeout):
			t.Fatal("a call to the stopped serve never returned")
		}
	}
	for _, c := range clients {
		c.cs.Close()
	}
	rt.CloseIdleConnections()
	checkNoLeaks(t, goroutines, children)
}
