package gateway_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
)

// TestHideTools: a tool named in Options.HideTools (what a published
// workflow with hide_tools calls) is neither listed nor callable through
// the gateway, while the host still calls it for its own callers.
func TestHideTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "t")}, nil, &gateway.Options{HideTools: []string{"mcp_t_echo"}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	defer ts.Close()
	defer ts.CloseClientConnections()
	cs := connect(t, ts.URL, clientOpts{})
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if strings.Contains(strings.Join(names, " "), "mcp_t_echo") || len(names) == 0 {
		t.Errorf("tools through the gateway: %v; want every tool but mcp_t_echo", names)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_t_echo", Arguments: map[string]any{"text": "hi"}})
	if err == nil && !r.IsError {
		t.Errorf("calling a hidden tool through the gateway: %q, want an error", textOf(r))
	}
	hr, err := g.Host().CallTool(ctx, "mcp_t_echo", []byte(`{"text":"hi"}`), nil)
	if err != nil || hr.IsError {
		t.Fatalf("the host's own call of the hidden tool: %v %v", err, hr)
	}
}
