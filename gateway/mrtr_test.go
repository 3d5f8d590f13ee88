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
