package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/clientaddr"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/workflow"
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

// Run serves HTTP on the daemon's listener (and its local socket, when
// Options.Socket names one) at once, and starts the servers meanwhile:
// each is published as it comes up, and clients learn of it
// (notifications/tools/list_changed and the like). It serves until ctx
// ends, then shuts down gracefully (see the package doc) and closes the
// daemon. It returns nil after a shutdown asked for by ctx; an error when
// serving failed, or when a server that is not optional failed to start
// (once every server has had its first attempt; the clients served
// meanwhile are cut off). A server that fails after it was up once is
// supervision's: it is restarted, and serve goes on.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.Close()
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	if d.ln == nil {
		return errors.New("daemon: Run needs a listener; use ServeStdio")
	}
	gw := d.opts.Config.Gateway
	token, err := gw.ResolveAuthToken(d.lookupEnv(), d.opts.Host.Secrets, d.red)
	if err != nil {
		return err
	}
	gwOpts, err := d.gatewayOptions()
	if err != nil {
		return err
	}
	g, h, err := d.build(gwOpts)
	if err != nil {
		return err
	}
	// Starting from now, before the listener serves: a request that came
	// in before startHost ran found the host neither starting nor started,
	// and a listing was answered empty.
	h.WillStart()
	gopts := &guard.Options{
		AuthToken:      token,
		OAuth:          d.oauthOptions(ctx),
		AllowedOrigins: gw.AllowedOrigins,
		Loopback:       isLoopback(d.ln.Addr()),
		Logger:         d.opts.Logger,
	}
	// The listener's one guard: every route below is registered on it,
	// with what it asks of a request (faces.go). It lives until Run
	// returns: the OAuth issuer's keys are needed while the shutdown
	// drains, after ctx has ended.
	guardCtx, endGuard := context.WithCancel(context.WithoutCancel(ctx))
	defer endGuard()
	gd, err := guard.New(guardCtx, gopts)
	if err != nil {
		return fmt.Errorf("[gateway.auth]: %w", err)
	}
	d.mount(gd, g, token)
	ln, front, err := clientFront(d.ln, gd, gw, d.opts.Logger)
	if err != nil {
		return err
	}
	// The socket serves the same guard: every route is on both. It is
	// there first: once the listener answers, so does the socket.
	var faces []*httpFace
	if s := d.serveSocket(gd); s != nil {
		faces = append(faces, s)
	}
	faces = append(faces, d.serveHTTP(ln, front))
	st := d.startHost(ctx, h)
	defer st.stop()
	stopFollow := d.followStore(ctx, h)
	defer stopFollow()
	// Listening: the others may forward retries here.
	unregister := d.registerReplica(ctx)
	defer unregister()
	stopFence := d.watchExecutor(fail)
	defer stopFence()
	failed := d.await(ctx, st, faces)
	if failed == nil {
		d.drain() // told to stop: out of the balancer's rotation first
	}
	st.stop()
	grace := d.grace()
	if failed != nil {
		grace = 0 // the host is closed, or serving failed: nothing to wait for
	}
	if cause := context.Cause(ctx); failed == nil && errors.Is(cause, workflow.ErrExecutorLost) {
		failed = cause // fenced (watchExecutor): the calls in flight get their grace, then Run fails
	}
	// After the shutdown, which must follow a failed start at once (a
	// listing waiting for the start is ended by it, not answered), and
	// before the host closes.
	unregister() // first: a retry forwarded here now is told it has stopped
	d.shutdown(g, grace, faces)
	stopFollow()
	if err := d.Close(); failed == nil {
		return err
	}
	return failed
}

// oauthOptions are the gateway's [gateway.auth], or nil. The resource is
// the configured one, else the listener's own /mcp URL (loopback only:
// Listen refuses to derive it elsewhere). The issuer's metadata and keys
// are fetched through the guarded client, which admits the issuer's own
// local address only with allow_local_issuer.
func (d *Daemon) oauthOptions(ctx context.Context) *guard.OAuthOptions {
	a := d.opts.Config.Gateway.Auth
	if a == nil {
		return nil
	}
	resource := a.Resource
	if resource == "" {
		resource = "http://" + d.ln.Addr().String() + gateway.DefaultEndpoint.Path
	}
	dialer := &netguard.Dialer{}
	if a.AllowLocalIssuer {
		for _, u := range []string{a.Issuer, a.JWKSURL} {
			if u == "" {
				continue
			}
			local, _ := netguard.LocalEndpoint(ctx, nil, u)
			dialer.AllowLocal = append(dialer.AllowLocal, local...)
		}
	}
	return &guard.OAuthOptions{
		Issuer:     a.Issuer,
		Resource:   resource,
		Audience:   a.Audience,
		Scopes:     a.Scopes,
		AdminScope: a.AdminScope,
		JWKSURL:    a.JWKSURL,
		HTTPClient: oauth.GuardedClient(dialer, d.opts.Host.Network),
	}
}

// clientFront puts package clientaddr in front of the listener's
// handler: the client of a request is who [gateway] trusted_proxies say it
// is (X-Forwarded-For; with proxy_protocol, the PROXY header read from
// each of their connections), for the per-client limits and the logs.
// The local socket has no proxies in front: it is served without.
func clientFront(ln net.Listener, h http.Handler, gw config.Gateway, logger *slog.Logger) (net.Listener, http.Handler, error) {
	trusted, err := clientaddr.ParseTrusted(gw.TrustedProxies)
	if err != nil {
		return nil, nil, &UsageError{"[gateway] trusted_proxies: " + err.Error()}
	}
	if gw.ProxyProtocol {
		if trusted == nil {
			return nil, nil, &UsageError{"[gateway] proxy_protocol needs trusted_proxies"}
		}
		// The header is the request's first bytes: the same bound as
		// the rest of its head.
		ln = &clientaddr.Listener{Listener: ln, Trusted: trusted, HeaderTimeout: readHeaderTimeout, Logger: logger}
	}
	return ln, clientaddr.Handler(h, trusted), nil
}

// await returns when ctx ends (nil), serving fails, or the start fails
// (their error).
func (d *Daemon) await(ctx context.Context, st *starting, faces []*httpFace) error {
	served := make(chan error, len(faces))
	for _, f := range faces {
		go func() {
			select {
			case <-f.served:
				served <- f.err
			case <-ctx.Done():
			}
		}()
	}
	started := st.done
	for {
		select {
		case err := <-served:
			return fmt.Errorf("serve: %w", err)
		case <-started:
			if st.err != nil && ctx.Err() == nil {
				return st.err
			}
			started = nil
		case <-ctx.Done():
			return nil
		}
	}
}

// An httpFace is an HTTP server of the daemon's on one listener.
type httpFace struct {
	srv        *http.Server
	posts      *requests
	served     chan struct{} // closed when Serve has returned
	err        error         // Serve's, once served is closed
	endStreams context.CancelFunc
}

// serveHTTP serves h on ln until shutdown.
func (d *Daemon) serveHTTP(ln net.Listener, h http.Handler) *httpFace {
	streams, endStreams := context.WithCancel(context.Background())
	errLog := d.opts.HTTPErrorLog
	if errLog == nil {
		errLog = log.New(io.Discard, "", 0)
	}
	posts := &requests{}
	f := &httpFace{
		posts: posts,
		srv: &http.Server{
			Handler:           posts.track(h),
			ReadHeaderTimeout: readHeaderTimeout,
			IdleTimeout:       idleConnTimeout,
			// Streams (GET /mcp, GET /sse) live on this context, so that a
			// shutdown can end them once the requests in flight are done.
			BaseContext: func(net.Listener) context.Context { return streams },
			ErrorLog:    errLog,
		},
		served:     make(chan struct{}),
		endStreams: endStreams,
	}
	go func() {
		defer close(f.served)
		f.err = f.srv.Serve(ln)
	}()
	return f
}

// shutdown is one grace period for everything: requests in flight, over
// every transport and listener, get until the deadline; then the gateway
// cancels those left (upstream too), their answers get answerTime to go
// out, and every connection is closed.
func (d *Daemon) shutdown(g *gateway.Gateway, grace time.Duration, faces []*httpFace) {
	d.log.Info("shutting down", "grace", grace)
	deadline := time.Now().Add(grace)
	hctx, hcancel := context.WithDeadline(context.Background(), deadline.Add(answerTime))
	defer hcancel()
	closed := make(chan error, len(faces))
	for _, f := range faces {
		go func() { closed <- f.srv.Shutdown(hctx) }() // no new connections from now on
	}
	gctx, gcancel := context.WithDeadline(context.Background(), deadline)
	if g.Shutdown(gctx) != nil {
		d.log.Warn("shutdown: cancelled the requests still in flight", "grace", grace)
	}
	gcancel()
	for _, f := range faces {
		// The gateway counts a request done when its handler returns; its
		// answer is written to the HTTP stream after that. Let those
		// writes finish (bounded by answerTime) before the streams are
		// ended.
		f.posts.wait(hctx)
	}
	for _, f := range faces {
		// Streams never become idle: end them, now that no request needs
		// them.
		f.endStreams()
	}
	for range faces {
		if err := <-closed; err != nil {
			d.log.Warn("shutdown: closing the connections still open", "err", err)
			for _, f := range faces {
				f.srv.Close()
			}
		}
	}
	for _, f := range faces {
		<-f.served
	}
}

// requests counts the HTTP requests in flight that are not streams (GET):
// POSTs and DELETEs, whose answers a shutdown lets go out.
type requests struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n is 0
}

func (rq *requests) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			h.ServeHTTP(w, r) // a stream (GET /mcp, /sse, /ws): never idle
			return
		}
		rq.mu.Lock()
		rq.n++
		rq.mu.Unlock()
		defer func() {
			rq.mu.Lock()
			rq.n--
			if rq.n == 0 && rq.idle != nil {
				close(rq.idle)
				rq.idle = nil
			}
			rq.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// wait returns when no request is in flight, or ctx is done.
func (rq *requests) wait(ctx context.Context) {
	rq.mu.Lock()
	if rq.n == 0 {
		rq.mu.Unlock()
		return
	}
	if rq.idle == nil {
		rq.idle = make(chan struct{})
	}
	idle := rq.idle
	rq.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// ServeStdio serves one client over in and out (stdin and stdout of a
// process a client started) until the client leaves or ctx ends, then
// shuts down like Run and closes the daemon; the local socket is served as
// well when Options.Socket names one. The client's first message is read
// before anything starts: its initialize says what it can answer, and the
// servers are offered only that (a 2026-07-28 client sends no initialize:
// then everything). Then the client is answered at once and the servers
// start meanwhile, joining as they come up (the client gets list_changed).
// A server that is not optional and fails to start ends the session with
// an error, like Run. out is not closed. The client is served the
// endpoint Options.Endpoint names (the default one if none), its tools
// and names as over HTTP; the local socket serves every endpoint.
func (d *Daemon) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	defer d.Close()
	gwOpts, err := d.gatewayOptions()
	if err != nil {
		return err
	}
	if err := d.checkStdioEndpoint(gwOpts.Endpoints); err != nil {
		return err
	}
	rd := bufio.NewReaderSize(in, 64<<10)
	first, err := readFirstMessage(ctx, rd)
	switch {
	case ctx.Err() != nil || (errors.Is(err, io.EOF) && len(first) == 0):
		return nil // stopped, or the client left, before it said anything
	case err != nil && !errors.Is(err, io.EOF):
		return fmt.Errorf("serving over stdio: reading the first message: %w", err)
	}
	gwOpts.OnlyClient = initializeCapabilities(first)
	g, h, err := d.build(gwOpts)
	if err != nil {
		return err
	}
	h.WillStart() // before the local socket serves (see Run)
	var faces []*httpFace
	if d.opts.Socket != "" {
		// The routes of Run's listener, on the socket alone: whoever
		// reaches it is the owner (serveSocket). No OAuth: no error.
		gd, _ := guard.New(ctx, &guard.Options{Loopback: true, Logger: d.opts.Logger})
		d.mount(gd, g, "")
		if s := d.serveSocket(gd); s != nil {
			faces = append(faces, s)
		}
	}
	st := d.startHost(ctx, h)
	defer st.stop()
	// The session is closed once its requests are done or cancelled:
	// closing it first would wait for them, however long they hang.
	run, endRun := context.WithCancel(context.WithoutCancel(ctx))
	defer endRun()
	grace := d.grace()
	var once sync.Once
	shutdown := func(grace time.Duration) {
		once.Do(func() {
			d.shutdown(g, grace, faces)
			endRun()
		})
	}
	stop := context.AfterFunc(ctx, func() { shutdown(grace) })
	defer stop()
	var failed error // a failed start, once watched is closed
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-st.done:
		case <-run.Done():
			return
		}
		if st.err != nil && ctx.Err() == nil && run.Err() == nil {
			failed = st.err
			shutdown(0) // the host is closed: nothing in flight can finish
		}
	}()
	var closer io.Closer = io.NopCloser(nil)
	if c, ok := in.(io.Closer); ok {
		closer = c
	}
	// The stdio client started this process: its calls are the owner's.
	err = g.EndpointServer(d.opts.Endpoint).Run(guard.OwnerContext(run), &mcp.IOTransport{
		Reader: struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(first), rd), closer},
		Writer: nopWriteCloser{out},
	})
	endRun()
	<-watched
	stop()
	st.stop()
	if len(faces) > 0 {
		shutdown(grace) // the client left; CLI commands over the socket get the grace
	}
	if failed != nil {
		return failed
	}
	if err != nil && ctx.Err() == nil && !clientLeft(err) {
		return fmt.Errorf("serving over stdio: %w", err)
	}
	return d.Close()
}

// clientLeft reports whether a stdio session ended because its client
// left: its input ended, or its output was closed while something was
// being written (a notification, say that a server joined, can go out at
// any moment).
func clientLeft(err error) bool {
	// EPIPE: a write to stdout after the client closed it (SIGPIPE is
	// ignored while serving stdio). os.ErrClosed, io.ErrClosedPipe: the
	// read the session had pending on stdin (an os.File, or an io.Pipe in
	// process), after the session closed stdin when that write failed.
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe)
}

// nopWriteCloser keeps the session from closing out, which belongs to the
// caller.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// readFirstMessage reads the first line of r (a stdio client's first
// message), at most maxFirstMessage bytes of it, returning when ctx is done
// too. The newline stays on the line.
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

// maxFirstMessage bounds what readFirstMessage holds: an initialize is a few
// hundred bytes; the SDK reads the rest of a longer message itself.
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

// lookupEnv is the host options' LookupEnv, else os.LookupEnv.
// checkStdioEndpoint says why the endpoint Options.Endpoint names is not
// among eps, those to serve: a configured one, or one stored (added at run
// time) that checks; nil when it is, or names none.
func (d *Daemon) checkStdioEndpoint(eps []gateway.Endpoint) error {
	name := d.opts.Endpoint
	if name == "" || slices.ContainsFunc(eps, func(e gateway.Endpoint) bool { return e.Name == name }) {
		return nil
	}
	d.mu.Lock()
	why := d.epBroken[name]
	d.mu.Unlock()
	if why != nil {
		return fmt.Errorf("serving over stdio: %w", why)
	}
	return fmt.Errorf("serving over stdio: no endpoint %q in the configuration ([[endpoints]] name) or in %s", name, d.store.Where())
}

func (d *Daemon) lookupEnv() func(string) (string, bool) {
	if f := d.opts.Host.LookupEnv; f != nil {
		return f
	}
	return osLookupEnv
}
