package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
)

// What `switchboard serve` does: listen first, serve at once while the
// servers start, say when they are up, and shut down gracefully when
// interrupted.
func Example() {
	cfg, err := config.Load(&config.LoadOptions{File: "switchboard.toml"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := daemon.Listen("127.0.0.1:0", cfg.Gateway)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("serving MCP at http://%s/mcp\n", ln.Addr())
	// Ctrl-C interrupts the start (a database that does not answer) too.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	socket, _ := daemon.SocketPath(cfg, os.Getenv) // CLI commands of cfg find the daemon there
	d, err := daemon.New(ctx, ln, &daemon.Options{
		Config:  cfg,
		Socket:  socket,
		OnReady: func(servers []host.ServerStatus) { fmt.Printf("ready: %d servers\n", len(servers)) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := d.Run(ctx); err != nil {
		fmt.Println(err)
	}
}

// A CLI command of the same configuration finds the running daemon on
// its local socket, and reads it there as the owner, without a token:
// /api/v1 (api.Client) and the MCP endpoint are served there as on the
// daemon's listener.
func ExampleSocketClient() {
	cfg, err := config.Load(&config.LoadOptions{File: "switchboard.toml"})
	if err != nil {
		fmt.Println(err)
		return
	}
	socket, err := daemon.SocketPath(cfg, os.Getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	hc, err := daemon.SocketClient(socket)
	if err != nil {
		fmt.Println(err) // daemon.ErrNoDaemon: start a host instead
		return
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://" + daemon.SocketHost + "/readyz")
	if err != nil {
		fmt.Println(err) // daemon.ErrNoDaemon too: its daemon is gone
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
}
