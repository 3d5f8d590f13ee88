package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/transport"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// TestWebSocket connects the host to a go-sdk server served over WebSocket
// on loopback, and checks that a URL without allow_local_endpoint is refused
// before anything is dialed.
func TestWebSocket(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ws-server", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
	})
	handler := transport.NewWebSocketHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(handler)
	t.Cleanup(func() {
		handler.Close()
		ts.Close()
	})
	url := "ws" + strings.TrimPrefix(ts.URL, "http")

	h, _ := start(t, []config.Server{{ID: "ws", Transport: config.TransportWebSocket, URL: url, AllowLocalEndpoint: true}}, nil)
	if got := callText(t, h, "mcp_ws_greet", `{"name":"Ada"}`, nil); got != "hello Ada" {
		t.Errorf("greet = %q", got)
	}
	if st := h.Servers()[0]; st.ServerInfo == nil || st.ServerInfo.Name != "ws-server" {
		t.Errorf("server info = %+v", st.ServerInfo)
	}

	_, err := host.Start(context.Background(), []config.Server{{ID: "ws2", Transport: config.TransportWebSocket, URL: url}}, nil)
	if err == nil || !strings.Contains(err.Error(), "allow_local_endpoint") {
		t.Errorf("loopback without allow_local_endpoint: err = %v, want a refusal naming allow_local_endpoint", err)
	}
}

// TestInProcess offers the tools of a server running in this process, named,
// validated and routed like any other.
func TestInProcess(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "builtin", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + in.Name}}}, nil, nil
	})
	h, _ := start(t, []config.Server{fixture(t, "fx")}, &host.Options{InProcess: []host.InProcessServer{{ID: "builtin", Server: srv}}})
	if got := callText(t, h, "mcp_builtin_greet", `{"name":"Ada"}`, nil); got != "hi Ada" {
		t.Errorf("greet = %q", got)
	}
	if _, err := h.CallTool(context.Background(), "mcp_builtin_greet", json.RawMessage(`{"name":5}`), nil); !errors.Is(err, host.ErrInvalidArguments) {
		t.Errorf("invalid arguments: err = %v", err)
	}
}

// TestListChanged: a server that adds a tool announces it, and the host
// re-reads its tools and reports the change.
func TestListChanged(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "dyn", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "one"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}}}, nil, nil
	})
	events := newStates()
	h, _ := start(t, nil, &host.Options{
		InProcess: []host.InProcessServer{{ID: "dyn", Server: srv}},
	}, events)
	if hasTool(h, "mcp_dyn_two") {
		t.Fatal("two before it was added")
	}
	drainEvents(events.w) // the start's own
	mcp.AddTool(srv, &mcp.Tool{Name: "two"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "two"}}}, nil, nil
	})
	if ev := awaitEvent(t, events.w, host.EventCatalog, "dyn"); ev.Change != host.ToolsChanged {
		t.Errorf("change = %+v, want tools", ev)
	}
	if got := callText(t, h, "mcp_dyn_two", `{"name":"x"}`, nil); got != "two" {
		t.Errorf("two = %q", got)
	}
}

// TestProgressOverStreamableHTTP: every progress notification a Streamable
// HTTP server sends before its result reaches the caller before the call
// returns, and the SDK's session hooks (protocol-version header, standalone
// stream) still work.
func TestProgressOverStreamableHTTP(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "p", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	h, _ := start(t, []config.Server{{ID: "p", Transport: config.TransportHTTP, URL: ts.URL, AllowLocalEndpoint: true}}, nil)
	for i := range 20 {
		var n atomic.Int32
		callText(t, h, "mcp_p_steps", `{"name":"x"}`, &host.CallOptions{Progress: func(*mcp.ProgressNotificationParams) { n.Add(1) }})
		if got := n.Load(); got != 3 {
			t.Fatalf("call %d: %d progress notifications before the result, want 3", i, got)
		}
	}
}
