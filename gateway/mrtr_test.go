package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
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
