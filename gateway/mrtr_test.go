package gateway_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestInputRequiredOverStdio: a 2026-07-28 client (here over the SDK's
// in-memory transport, as over `serve --stdio`) answers an upstream's
// elicitation and sampling through input-required results and retries; the
// upstream's call waits and completes.
func TestInputRequiredOverStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ct, st := mcp.NewInMemoryTransports()
	go g.Server().Run(ctx, st)
	var elicited, sampled int
	c := mcp.NewClient(&mcp.Implementation{Name: "new", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Newer Nell"}}, nil
		},
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled++
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled by the new client"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///tmp/new-client-root"})
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	if got := textOf(call(t, cs, "mcp_fx_elicit", map[string]any{})); !strings.Contains(got, "Newer Nell") {
		t.Errorf("elicit = %q", got)
	}
	if got := textOf(call(t, cs, "mcp_fx_sample", map[string]any{})); !strings.Contains(got, "sampled by the new client") {
		t.Errorf("sample = %q", got)
	}
	if got := textOf(call(t, cs, "mcp_fx_roots", map[string]any{})); !strings.Contains(got, "file:///tmp/new-client-root") {
		t.Errorf("roots = %q, want the downstream client's root", got)
	}
	if elicited != 1 || sampled != 1 {
		t.Errorf("handlers ran %d and %d times, want once each", elicited, sampled)
	}
}

// TestInputRequiredBridgeOverHTTP: a 2026-07-28 client, served statelessly
// over Streamable HTTP, reaches an upstream that speaks only 2025-11-25 and
// asks during the call: the gateway bridges the generations with its own
// input-required results, whose requestState finds the waiting call again
// from a request with no session. With an upstream that speaks 2026-07-28
// (TestElicitationSamplingRootsForwarded), the upstream's own results pass
// through instead.
func TestInputRequiredBridgeOverHTTP(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "old", "-protocol-version", "2025-11-25")}, nil, nil)
	var elicited int
	cs := connect(t, base, clientOpts{version: "2026-07-28", opts: &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bridget"}}, nil
		},
	}})
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	if got := textOf(call(t, cs, "mcp_old_elicit", map[string]any{})); !strings.Contains(got, "Bridget") {
		t.Errorf("elicit = %q, want the downstream answer", got)
	}
	if elicited != 1 {
		t.Errorf("elicitation handler ran %d times, want 1", elicited)
	}
	// A requestState the gateway never gave out is refused, naming it.
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}, RequestState: "forged"})
	if err == nil || !strings.Contains(err.Error(), "requestState") {
		t.Errorf("forged requestState: err = %v, want a refusal naming requestState", err)
	}
}

// TestBridgedCallsLeaveNothing: 50 calls of a 2026-07-28 client bridged to
// an upstream that speaks only 2025-11-25, each answered, leave no
// goroutine and no pending call behind while the gateway runs on (each
// used to wait for its InputTimeout on a timer channel that never fires).
func TestBridgedCallsLeaveNothing(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "old", "-protocol-version", "2025-11-25")}, nil, nil)
	cs := connect(t, base, clientOpts{version: "2026-07-28", opts: &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Fifty"}}, nil
		},
	}})
	for i := range 50 {
		if got := textOf(call(t, cs, "mcp_old_elicit", map[string]any{})); !strings.Contains(got, "Fifty") {
			t.Fatalf("call %d: %q", i, got)
		}
	}
	waitGoroutines(t, "gateway.(*Gateway).callToolInput", "the goroutines of 50 bridged calls that ended")
}

// TestInputTimeout: a 2026-07-28 client that never comes back with the
// input the upstream asked for has its bridged call ended after
// InputTimeout: the upstream call is cancelled and the requestState
// expires.
func TestInputTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "old", "-protocol-version", "2025-11-25")}, nil,
		&gateway.Options{InputTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ct, st := mcp.NewInMemoryTransports()
	go g.Server().Run(ctx, st)
	// No MultiRoundTrip handling: the client sees the input-required result
	// and walks away.
	c := mcp.NewClient(&mcp.Implementation{Name: "gone", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}})
	if err != nil || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("first round: %+v, %v; want an input-required result", res, err)
	}
	if countGoroutines("gateway.(*Gateway).callToolInput") == 0 {
		t.Fatalf("no goroutine of the bridged call while it waits: the check below proves nothing")
	}
	// Past InputTimeout the call is gone: its goroutine ends, and the
	// requestState is refused.
	waitGoroutines(t, "gateway.(*Gateway).callToolInput", "the bridged call's goroutine, past InputTimeout,")
	var key string
	for k := range res.InputRequests {
		key = k
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Late"}}}})
	if err == nil || !strings.Contains(err.Error(), "unknown or expired") {
		t.Errorf("retry after InputTimeout: %v, want the requestState refused as expired", err)
	}
}

// countGoroutines counts the goroutines with fn in their stack.
func countGoroutines(fn string) int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

// waitGoroutines waits until no goroutine has fn in its stack; what says
// whose they are.
func waitGoroutines(t *testing.T, fn, what string) {
	t.Helper()
	wait.For(t, what+" to end", func() (int, bool) {
		n := countGoroutines(fn)
		return n, n == 0
	})
}
