package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
)

// What `switchboard serve` does: listen first, then serve the configured
// servers until interrupted, and shut down gracefully.
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
	d, err := daemon.New(ln, &daemon.Options{Config: cfg})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := d.Run(ctx); err != nil {
		fmt.Println(err)
	}
}
