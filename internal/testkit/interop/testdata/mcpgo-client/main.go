// mcpgo-client is a small MCP client written against mcp-go's client
// package, at the version go.mod pins: a client "in the wild" for
// Switchboard's compatibility tests (internal/testkit/interop.MCPGoClient). It
// connects over one transport, initializes as mcp-go does (a
// server/discover probe first, then initialize if the server is of the
// older generation), lists the tools, calls one, and prints one JSON
// object on stdout:
//
//	{"protocolVersion":"2025-11-25","server":"switchboard","tools":["…"],"result":"…"}
//
// Any failure is printed on stderr with exit status 1.
//
//	mcpgo-client -sse http://127.0.0.1:PORT/sse -call NAME -args '{"k":"v"}'
//	mcpgo-client -http http://127.0.0.1:PORT/mcp
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	sse := flag.String("sse", "", "URL of a legacy HTTP+SSE endpoint")
	httpURL := flag.String("http", "", "URL of a Streamable HTTP endpoint")
	version := flag.String("version", "", "protocol version to ask for (default: mcp-go's latest)")
	tool := flag.String("call", "", "tool to call")
	args := flag.String("args", "{}", "the call's arguments, a JSON object")
	flag.Parse()
	if err := run(*sse, *httpURL, *version, *tool, *args); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo-client:", err)
		os.Exit(1)
	}
}

type output struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Server          string   `json:"server"`
	Tools           []string `json:"tools"`
	Result          string   `json:"result,omitempty"`
}

func run(sse, httpURL, version, tool, args string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c *client.Client
	var err error
	switch {
	case sse != "" && httpURL == "":
		c, err = client.NewSSEMCPClient(sse)
	case httpURL != "" && sse == "":
		c, err = client.NewStreamableHttpClient(httpURL)
	default:
		return fmt.Errorf("give one of -sse and -http")
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpgo-client", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	out := output{ProtocolVersion: c.ProtocolVersion(), Server: res.ServerInfo.Name, Tools: []string{}}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	for _, t := range tools.Tools {
		out.Tools = append(out.Tools, t.Name)
	}
	if tool != "" {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		var a map[string]any
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return fmt.Errorf("-args: %w", err)
		}
		req.Params.Arguments = a
		r, err := c.CallTool(ctx, req)
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", tool, err)
		}
		var b strings.Builder
		for _, content := range r.Content {
			if tc, ok := content.(mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if r.IsError {
			return fmt.Errorf("tools/call %s: tool error: %s", tool, b.String())
		}
		out.Result = b.String()
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
