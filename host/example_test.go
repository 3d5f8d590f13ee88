package host_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
)

// A host over one server — here an in-process one; configured servers are
// stdio children or network endpoints — watched from before its start.
func Example() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	type args struct{ A, B float64 }
	mcp.AddTool(srv, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
	})
	ctx := context.Background()
	h, err := host.New(nil, &host.Options{InProcess: []host.InProcessServer{{ID: "calc", Server: srv}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := h.Watch(0) // before Start: it sees the start
	if err := h.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	for ev, err := w.Next(ctx); err == nil; ev, err = w.Next(ctx) {
		if ev.Kind == host.EventState {
			fmt.Println(ev.Server, ev.Status.State)
		}
		if ev.Status.State == host.StateReady {
			break
		}
	}
	res, err := h.CallTool(ctx, "mcp_calc_add", json.RawMessage(`{"A":2,"B":3}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// calc connecting
	// calc ready
	// 5
}
