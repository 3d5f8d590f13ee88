package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
)

// A host's servers re-published as one MCP endpoint over Streamable HTTP,
// and an MCP client (the go-sdk's) listing and calling its tools. The
// upstream is an in-process server here; configured servers (stdio
// children, remote endpoints) are re-published the same way.
func Example() {
	calc := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	type args struct{ A, B float64 }
	mcp.AddTool(calc, &mcp.Tool{Name: "add", Description: "adds A and B"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
	})
	ctx := context.Background()
	g, err := gateway.Start(ctx, nil, &host.Options{InProcess: []host.InProcessServer{{ID: "calc", Server: calc}}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	// Loopback: the Host header is checked against DNS rebinding. A
	// listener elsewhere needs guard.Options.AuthToken or OAuth.
	srv := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	defer srv.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(t.Name, "-", t.Description)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_calc_add", Arguments: map[string]any{"A": 2, "B": 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// mcp_calc_add - adds A and B
	// 5
}
