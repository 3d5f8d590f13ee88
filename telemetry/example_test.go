package telemetry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// Metrics of a host's calls to its servers, served in Prometheus's text
// format: the telemetry's client middleware on each upstream connection,
// its watcher on the host's events, and its handler at /metrics.
func Example() {
	tel, err := telemetry.New(nil) // metrics only: no OTLP endpoint
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	defer tel.Close(ctx)

	calc := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	type args struct{ A, B float64 }
	mcp.AddTool(calc, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
	})
	h, err := host.New(nil, &host.Options{
		ClientMiddleware: tel.ClientMiddleware,
		InProcess:        []host.InProcessServer{{ID: "calc", Server: calc}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tel.Watch(h)
	if err := h.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	for range 2 {
		h.CallTool(ctx, "mcp_calc_add", json.RawMessage(`{"A":2,"B":3}`), nil)
	}

	srv := httptest.NewServer(tel.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		// The two calls, by server, tool and method (and the
		// histogram's buckets, and the start's initialize and lists).
		if strings.HasPrefix(sc.Text(), "mcp_client_operation_duration_seconds_count") && strings.Contains(sc.Text(), "tools/call") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// mcp_client_operation_duration_seconds_count{gen_ai_tool_name="add",mcp_method_name="tools/call",mcp_protocol_version="2026-07-28",switchboard_server="calc"} 2
}
