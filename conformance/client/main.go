// Command client is the MCP client that the official conformance suite
// (@modelcontextprotocol/conformance) runs: it is invoked as
//
//	client SERVER_URL
//
// with the scenario's name in MCP_CONFORMANCE_SCENARIO. It is a thin wrapper
// over Switchboard's host package: every scenario goes through host.Start and
// the host's API, so the suite measures Switchboard, not the SDK alone.
//
// The non-auth client scenarios of conformance 0.1.16 are handled:
// initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry.
// OAuth scenarios come with a later issue and fail here with a clear message.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// scenario runs one conformance scenario against a started host.
type scenario struct {
	opts func(*host.Options)
	run  func(ctx context.Context, h *host.Host) error
}

var scenarios = map[string]scenario{
	"initialize": {run: func(ctx context.Context, h *host.Host) error {
		// host.Start initialized the session and listed the tools.
		return nil
	}},
	"tools_call": {run: func(ctx context.Context, h *host.Host) error {
		return call(ctx, h, "add_numbers", `{"a":5,"b":3}`)
	}},
	"elicitation-sep1034-client-defaults": {
		// Accept with no content: the schema's defaults must be applied.
		opts: func(o *host.Options) {
			o.Elicitation = func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			}
		},
		run: func(ctx context.Context, h *host.Host) error {
			return call(ctx, h, "test_client_elicitation_defaults", `{}`)
		},
	},
	"sse-retry": {run: func(ctx context.Context, h *host.Host) error {
		return call(ctx, h, "test_reconnection", `{}`)
	}},
}

func call(ctx context.Context, h *host.Host, tool, args string) error {
	res, err := h.CallTool(ctx, tool, json.RawMessage(args), nil)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %q returned an error result", tool)
	}
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "client: scenario %q is not supported\n", name)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], sc); err != nil {
		fmt.Fprintf(os.Stderr, "client: %s: %v\n", name, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url string, sc scenario) error {
	opts := &host.Options{
		ToolNameFormat: "{tool}",
		Logger:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if sc.opts != nil {
		sc.opts(opts)
	}
	servers := []config.Server{{
		ID:        "conformance",
		Transport: config.TransportHTTP,
		URL:       url,
		// The suite's test server listens on loopback.
		AllowLocalEndpoint: true,
		Timeout:            20 * time.Second,
		ConnectTimeout:     20 * time.Second,
	}}
	h, err := host.Start(ctx, servers, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	return sc.run(ctx, h)
}
