package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
)

// TestHideTools: a tool named in Endpoint.HideTools (what a published
// workflow with hide_tools calls) is neither listed nor callable through
// the gateway, while the host still calls it for its own callers.
func TestHideTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "t")}, nil, &gateway.Options{Endpoints: []gateway.Endpoint{{HideTools: []string{"mcp_t_echo"}}}})
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

// TestEndpoints: a gateway serves a list of endpoints over its one host,
// each at its own paths with its own servers and hidden tools: a client of
// one lists, calls and reads only what that one publishes. Two endpoints
// at one path are refused, naming it.
func TestEndpoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "a"), fixture(t, "b")}, nil, &gateway.Options{Endpoints: []gateway.Endpoint{
		{Path: "/a", Servers: []string{"a"}},
		{Path: "/b", SSE: "/b/sse", Message: "/b/message", Servers: []string{"b"}, HideTools: []string{"mcp_b_echo"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	defer ts.Close()
	defer ts.CloseClientConnections()

	sessions := map[string]mcp.Transport{
		"a": &mcp.StreamableClientTransport{Endpoint: ts.URL + "/a"},
		"b": &mcp.SSEClientTransport{Endpoint: ts.URL + "/b/sse"},
	}
	for ep, tr := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "client-" + ep, Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("endpoint %s: connect: %v", ep, err)
		}
		defer cs.Close()
		other := map[string]string{"a": "b", "b": "a"}[ep]
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("endpoint %s: tools/list: %v", ep, err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if !strings.HasPrefix(tool.Name, "mcp_"+ep+"_") {
				t.Errorf("endpoint %s lists %s, a tool of another server", ep, tool.Name)
			}
		}
		hasEcho := strings.Contains(" "+strings.Join(names, " ")+" ", " mcp_"+ep+"_echo ")
		if len(names) == 0 || hasEcho != (ep == "a") {
			t.Errorf("endpoint %s lists %v; want its server's tools, mcp_b_echo hidden on b", ep, names)
		}
		if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_" + other + "_echo", Arguments: map[string]any{"text": "hi"}}); err == nil && !r.IsError {
			t.Errorf("endpoint %s calls mcp_%s_echo, another endpoint's tool: %q", ep, other, textOf(r))
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp_" + ep + "_greet", Arguments: map[string]string{"name": "Ada"}}); err != nil {
			t.Errorf("endpoint %s: its own prompt: %v", ep, err)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp_" + other + "_greet", Arguments: map[string]string{"name": "Ada"}}); err == nil {
			t.Errorf("endpoint %s gets mcp_%s_greet, another endpoint's prompt", ep, other)
		}
	}
	// The default paths belong to no endpoint here.
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mcp with endpoints /a and /b: %s, want 404", resp.Status)
	}

	_, err = gateway.New(g.Host(), &gateway.Options{Endpoints: []gateway.Endpoint{{Path: "/x"}, {Path: "/y", SSE: "/x"}}})
	if err == nil || !strings.Contains(err.Error(), "/x") {
		t.Errorf("two endpoints at /x: %v, want an error naming /x", err)
	}
}
