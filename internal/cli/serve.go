package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
)

// answerTime bounds how long, after the shutdown grace, the answers of the
// requests it ended (cancellation errors included) get to reach their
// clients before every connection is closed.
const answerTime = time.Second

// readHeaderTimeout bounds how long a client may take to send its request
// headers (slowloris); bodies are bounded by the gateway, in size
// (MaxBodyBytes) and in time (BodyTimeout).
const readHeaderTimeout = 10 * time.Second

// idleConnTimeout closes a keep-alive connection idle that long: each holds
// a goroutine and about 20 KiB (docs/performance.md, "Idle sessions"), and
// a client opens a new one when it next calls. Open streams are requests
// in flight, not idle.
const idleConnTimeout = 2 * time.Minute

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
	gw := cfg.Gateway
	servers := cfg.Servers
	if gw.Servers != nil {
		servers = nil
		for _, id := range gw.Servers {
			s, _ := cfg.Server(id) // Load has checked every id
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		return usageErr("no MCP servers to serve: add [[mcp_servers]] to ./switchboard.toml or pass --config FILE")
	}
	log := e.logger()
	hostOpts, err := e.hostOptions(cfg)
	if err != nil {
		return err
	}
	hostOpts.Logger = log
	if gw.ToolNameFormat != "" {
		hostOpts.ToolNameFormat = gw.ToolNameFormat
	}
	gwOpts := &gateway.Options{Logger: log, MaxWaitingCalls: gw.MaxSessions}
	grace := cmp.Or(gw.ShutdownGrace, config.DefaultGatewayShutdownGrace)

	if stdio {
		// The client's first message, before the upstreams start: its
		// initialize says what it can answer, and the upstreams are offered
		// only that (a 2026-07-28 client sends no initialize; then both).
		in := bufio.NewReaderSize(e.stdin, 64<<10)
		first, err := readFirstMessage(ctx, in)
		switch {
		case ctx.Err() != nil || (errors.Is(err, io.EOF) && len(first) == 0):
			return nil // stopped, or the client left, before it said anything
		case err != nil && !errors.Is(err, io.EOF):
			return failed(fmt.Errorf("serving over stdio: reading the first message: %w", err))
		}
		gwOpts.OnlyClient = initializeCapabilities(first)
		hostOpts.Secrets = e.secretStore()
		g, err := e.startGateway(ctx, servers, hostOpts, gwOpts)
		if err != nil {
			return err
		}
		defer g.Close()
		// The session is closed once its requests are done or cancelled:
		// closing it first would wait for them, however long they hang.
		run, endRun := context.WithCancel(context.WithoutCancel(ctx))
		defer endRun()
		stop := context.AfterFunc(ctx, func() {
			log.Info("shutting down", "grace", grace)
			sctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			if g.Shutdown(sctx) != nil {
				log.Warn("shutdown: cancelled the requests still in flight", "grace", grace)
			}
			endRun()
		})
		defer stop()
		stdin := readCloser(e.stdin)
		err = g.Server().Run(run, &mcp.IOTransport{Reader: struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(first), in), stdin}, Writer: writeCloser(e.stdout)})
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return failed(fmt.Errorf("serving over stdio: %w", err))
		}
		return nil
	}

	if listen == "" {
		listen = gw.Listen
	}
	if listen == "" {
		listen = config.DefaultGatewayListen
	}
	// Listen early: bind before connecting the upstreams, so that the
	// address is known (and printed) at once and a busy port fails fast.
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return failed(fmt.Errorf("serve: %w", err))
	}
	defer ln.Close()
	loopback := false
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		loopback = ta.IP.IsLoopback()
	}
	if !loopback && gw.AuthToken == "" {
		return usageErr("serve: listening on %s: serving beyond loopback needs auth_token (set [gateway] auth_token to a {{secrets.NAME}} placeholder)", ln.Addr())
	}
	fmt.Fprintf(e.stderr, "switchboard: serving MCP at http://%s/mcp (SSE at /sse, WebSocket at /ws)\n", ln.Addr())

	// After the address line, which must come first: opening the store may
	// warn.
	hostOpts.Secrets = e.secretStore()
	token, err := gw.ResolveAuthToken(e.lookupEnv, hostOpts.Secrets, e.red)
	if err != nil {
		return failed(err)
	}

	g, err := e.startGateway(ctx, servers, hostOpts, gwOpts)
	if err != nil {
		return err
	}
	defer g.Close()

	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler: g.Handler(&gateway.HTTPOptions{
			AuthToken:         token,
			AllowedOrigins:    gw.AllowedOrigins,
			Loopback:          loopback,
			SessionTimeout:    gw.SessionTimeout,
			MaxSessions:       gw.MaxSessions,
			MaxClientSessions: gw.MaxClientSessions,
			JSONResponse:      gw.JSONResponse,
			Logger:            log,
		}),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleConnTimeout,
		// Streams (GET /mcp, GET /sse) live on this context, so that a
		// shutdown can end them once the requests in flight are done.
		BaseContext: func(net.Listener) context.Context { return streams },
		ErrorLog:    httpErrorLog(e),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		endStreams()
		g.Close()
		return failed(fmt.Errorf("serve: %w", err))
	case <-ctx.Done():
	}
	// One grace period for everything: requests in flight, over every
	// transport, get until the deadline; then the gateway cancels those
	// left (upstream too), their answers get answerTime to go out, and
	// every connection is closed.
	log.Info("shutting down", "grace", grace)
	deadline := time.Now().Add(grace)
	hctx, hcancel := context.WithDeadline(context.Background(), deadline.Add(answerTime))
	defer hcancel()
	closed := make(chan error, 1)
	go func() { closed <- srv.Shutdown(hctx) }() // no new connections from now on
	gctx, gcancel := context.WithDeadline(context.Background(), deadline)
	if g.Shutdown(gctx) != nil {
		log.Warn("shutdown: cancelled the requests still in flight", "grace", grace)
	}
	gcancel()
	// Streams never become idle: end them, now that no request needs them.
	endStreams()
	if err := <-closed; err != nil {
		log.Warn("shutdown: closing the connections still open", "err", err)
		srv.Close()
	}
	<-serveErr
	if err := g.Close(); err != nil {
		return failed(err)
	}
	return nil
}

// readFirstMessage reads the first line of r (a stdio client's first message), at
// most maxFirstMessage bytes of it, returning when ctx is done too. The
// newline stays on the line.
func readFirstMessage(ctx context.Context, r *bufio.Reader) ([]byte, error) {
	type result struct {
		line []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var line []byte
		for {
			chunk, err := r.ReadSlice('\n')
			line = append(line, chunk...)
			if err == bufio.ErrBufferFull && len(line) < maxFirstMessage {
				continue
			}
			if err == bufio.ErrBufferFull {
				err = nil // too long to be an initialize: the SDK will say what it is
			}
			done <- result{line, err}
			return
		}
	}()
	select {
	case res := <-done:
		return res.line, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// maxFirstMessage bounds what readFirstMessage holds: an initialize is a few hundred
// bytes; the SDK reads the rest of a longer message itself.
const maxFirstMessage = 1 << 20

// initializeCapabilities returns the capabilities an initialize request
// declares, or nil if line is not one.
func initializeCapabilities(line []byte) *mcp.ClientCapabilities {
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(line))
	if err != nil {
		return nil
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" {
		return nil
	}
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	caps := &mcp.ClientCapabilities{}
	if json.Unmarshal(req.Params, &p) != nil || p.Capabilities == nil {
		return caps // declared nothing
	}
	raw, _ := json.Marshal(p.Capabilities)
	json.Unmarshal(raw, caps)
	// The go-sdk (v1.8.0) reads roots into RootsV2 only in its own
	// initialize handler (its issue 607): RootsV2 is not JSON.
	caps.RootsV2 = nil
	if r, ok := p.Capabilities["roots"]; ok {
		caps.RootsV2 = &mcp.RootCapabilities{}
		json.Unmarshal(r, caps.RootsV2)
	}
	return caps
}

// startGateway connects the upstreams and starts the gateway over them.
func (e *env) startGateway(ctx context.Context, servers []config.Server, hostOpts *host.Options, opts *gateway.Options) (*gateway.Gateway, error) {
	p := e.startProgress(servers)
	log := hostOpts.Logger
	hostOpts.OnState = func(st host.ServerStatus) {
		p.update(st)
		// A long-running gateway reports every server:state change.
		if log != nil {
			ev := st.Event()
			log.Info("server:state", "server", ev.Server, "state", ev.State, "restarts", ev.Restarts, "error", ev.Error)
		}
	}
	g, err := gateway.Start(ctx, servers, hostOpts, opts)
	p.done()
	if err != nil {
		if ctx.Err() != nil {
			return nil, failed(fmt.Errorf("cancelled: %w", err))
		}
		return nil, failed(err)
	}
	return g, nil
}

// httpErrorLog sends net/http's own error messages (malformed requests,
// panics in handlers) to stderr through the redactor, with -v.
func httpErrorLog(e *env) *log.Logger {
	if e.verbose == 0 {
		return log.New(io.Discard, "", 0)
	}
	return log.New(e.stderr, "switchboard: http: ", 0)
}

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// writeCloser keeps the session from closing stdout, which belongs to the
// caller of Main.
func writeCloser(w io.Writer) io.WriteCloser {
	return nopWriteCloser{w}
}
