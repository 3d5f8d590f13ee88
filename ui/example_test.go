package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/ui"
)

// The web UI mounted on a daemon, as `switchboard serve` mounts it, with
// [gateway] auth_token set: a browser without a session is sent to the
// login page; with the owner's token the servers page lists the server.
func Example() {
	calc := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	dir, _ := os.MkdirTemp("", "ui-example")
	defer os.RemoveAll(dir)
	cfg := &config.Config{}
	cfg.State.Database = filepath.Join(dir, "switchboard.db")
	cfg.Gateway.AuthToken = "{{env.SWITCHBOARD_TOKEN}}"
	env := map[string]string{"SWITCHBOARD_TOKEN": "example-owner-token"}

	ln, err := daemon.Listen("127.0.0.1:0", cfg.Gateway)
	if err != nil {
		fmt.Println(err)
		return
	}
	ready := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	d, err := daemon.New(ctx, ln, &daemon.Options{
		Config: cfg,
		Host: &host.Options{
			InProcess: []host.InProcessServer{{ID: "calc", Server: calc}},
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		},
		OnReady: func([]host.ServerStatus) { close(ready) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ui.New(d, nil).Mount(d) // before Run
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	defer func() { stop(); <-done }()
	<-ready

	// A client that shows redirects instead of following them.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(token string) {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/servers", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		if loc := resp.Header.Get("Location"); loc != "" {
			fmt.Println(resp.Status, "->", loc)
			return
		}
		fmt.Println(resp.Status, "lists calc:", strings.Contains(string(page), `href="/servers/calc"`))
	}
	get("")
	get(env["SWITCHBOARD_TOKEN"])
	// Output:
	// 303 See Other -> /login
	// 200 OK lists calc: true
}
