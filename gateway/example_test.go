package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
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

// What a named endpoint offers of the host's tools: its servers, chosen by
// glob ("!" excludes), one renamed (its new name taking precedence over a
// tool's own) and overridden.
func ExampleEndpoint_Offer() {
	tool := func(server, name string) host.Tool {
		return host.Tool{Name: "mcp_" + server + "_" + name, Server: server, Tool: &mcp.Tool{Name: name, Description: name + "s"}}
	}
	tools := []host.Tool{
		tool("github", "get_issue"), tool("github", "delete_repo"), tool("github", "read"),
		tool("fs", "read_text_file"), tool("fs", "write_file"), tool("memory", "create_entities"),
	}
	e := gateway.Endpoint{
		Name:     "code",
		Servers:  []string{"github", "fs"},
		Tools:    []string{"github_*", "!github_delete_*", "fs_read_*"},
		Rename:   map[string]string{"mcp_github_read": "mcp_fs_read_text_file"},
		Override: map[string]config.ToolOverride{"mcp_github_read": {Description: "Read a file of the repository"}},
	}
	offered, shadowed := e.Offer(tools)
	for _, o := range offered {
		fmt.Printf("%s → %s: %s\n", o.Tool.Name, o.HostName, o.Tool.Description)
	}
	fmt.Println("left out:", shadowed)
	// Output:
	// mcp_github_get_issue → mcp_github_get_issue: get_issues
	// mcp_github_read → mcp_fs_read_text_file: Read a file of the repository
	// left out: map[mcp_github_read:mcp_fs_read_text_file]
}
