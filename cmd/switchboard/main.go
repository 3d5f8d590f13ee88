// Command switchboard connects LLM agents and people to the tools, resources
// and prompts of many MCP servers. Run 'switchboard --help'.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/switchboardmcp/switchboard/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
