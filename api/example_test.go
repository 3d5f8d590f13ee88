package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
)

// The REST API mounted on a daemon, as `switchboard serve` mounts it, and
// its tools listed with GET /api/v1/tools. The daemon's one server is an
// in-process one here; its state database a file in a temporary folder.
func Example() {
	calc := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	type args struct{ A, B float64 }
	mcp.AddTool(calc, &mcp.Tool{Name: "add", Description: "adds A and B"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
	})
	dir, _ := os.MkdirTemp("", "api-example")
	defer os.RemoveAll(dir)
	cfg := &config.Config{}
	cfg.State.Database = filepath.Join(dir, "switchboard.db")

	ln, err := daemon.Listen("127.0.0.1:0", cfg.Gateway)
	if err != nil {
		fmt.Println(err)
		return
	}
	ready := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	d, err := daemon.New(ctx, ln, &daemon.Options{
		Config:  cfg,
		Host:    &host.Options{InProcess: []host.InProcessServer{{ID: "calc", Server: calc}}},
		OnReady: func([]host.ServerStatus) { close(ready) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Behind the listener's guard: on loopback without [gateway]
	// auth_token every caller is the owner.
	d.HandleAdmin(api.Prefix, api.New(d, nil))
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	defer func() { stop(); <-done }()
	<-ready

	resp, err := http.Get("http://" + ln.Addr().String() + "/api/v1/tools")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var page struct {
		Items []daemon.ToolItem `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	for _, t := range page.Items {
		fmt.Println(t.Name, t.Server, t.Tool.Description)
	}
	// Output:
	// 200 OK application/json
	// mcp_calc_add calc adds A and B
}
