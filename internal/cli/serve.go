package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
)

func (e *env) serveCommand() *cobra.Command {
	var listen string
	var stdio bool
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] [--stdio]",
		Short: "Serve the configured servers as one MCP server (the gateway)",
		Long: `Connects to the configured servers and serves their tools, resources and
prompts as one MCP server: Streamable HTTP at /mcp, the legacy HTTP+SSE
transport at /sse and WebSocket at /ws, on ` + config.DefaultGatewayListen + ` unless
--listen or [gateway] listen says otherwise (port 0 picks a free one). The
first line on stderr is the address actually bound:

  switchboard: serving MCP at http://127.0.0.1:7300/mcp (SSE at /sse, WebSocket at /ws)

With --stdio it serves one client over stdin and stdout instead, for clients
that start a process (Claude Desktop, Cursor); nothing else is written to
stdout.

The [gateway] table chooses the servers exposed, the tool names clients see,
allowed browser origins and a bearer token (required to listen beyond
loopback). Ctrl-C or SIGTERM shuts down gracefully: requests in flight get
[gateway] shutdown_grace (5 seconds unless set) to finish; past it they are
cancelled, upstream too, and serve exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stdio && cmd.Flags().Changed("listen") {
				return usageErr("serve: --listen and --stdio exclude each other")
			}
			return e.serve(cmd.Context(), listen, stdio)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "host:port to serve HTTP on (default [gateway] listen, else "+config.DefaultGatewayListen+")")
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve one client over stdin/stdout instead of HTTP")
	return cmd
}

func (e *env) serve(ctx context.Context, listen string, stdio bool) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	hostOpts, err := e.hostOptions(cfg)
	if err != nil {
		return err
	}
	var ln net.Listener
	if !stdio {
		// Listen early: bind before connecting the upstreams, so that the
		// address is known (and printed) at once and a busy port fails
		// fast.
		ln, err = daemon.Listen(listen, cfg.Gateway)
		if err != nil {
			return daemonErr(err)
		}
		fmt.Fprintf(e.stderr, "switchboard: serving MCP at http://%s/mcp (SSE at /sse, WebSocket at /ws)\n", ln.Addr())
	}
	// After the address line, which must come first: opening the secret
	// store may warn.
	hostOpts.Secrets = e.secretStore()
	var p *progress
	stopProgress := func() {}
	d, err := daemon.New(ln, &daemon.Options{
		Config:       cfg,
		Host:         hostOpts,
		Logger:       hostOpts.Logger,
		HTTPErrorLog: httpErrorLog(e),
		Store:        e.stateStore(cfg),
		OnHost: func(h *host.Host) {
			var servers []config.Server
			for _, st := range h.Servers() {
				servers = append(servers, config.Server{ID: st.ID})
			}
			p = e.startProgress(servers)
			stopProgress = p.follow(h)
		},
	})
	if err != nil {
		return daemonErr(err)
	}
	defer func() {
		stopProgress()
		if p != nil {
			p.done()
		}
	}()
	if stdio {
		err = d.ServeStdio(ctx, e.stdin, e.stdout)
	} else {
		err = d.Run(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return failed(fmt.Errorf("cancelled: %w", err))
		}
		return daemonErr(err)
	}
	return nil
}

// daemonErr is the exit of a daemon error: a usage error (an address or a
// configuration it cannot serve) or a failure.
func daemonErr(err error) error {
	var ue *daemon.UsageError
	if errors.As(err, &ue) {
		return usageErr("%s", ue.Msg)
	}
	return failed(err)
}

// httpErrorLog sends net/http's own error messages (malformed requests,
// panics in handlers) to stderr through the redactor, with -v.
func httpErrorLog(e *env) *log.Logger {
	if e.verbose == 0 {
		return log.New(io.Discard, "", 0)
	}
	return log.New(e.stderr, "switchboard: http: ", 0)
}
