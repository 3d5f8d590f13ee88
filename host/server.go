package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/transport"
)

// Bounds on what one server may make the host hold.
const (
	// maxListPages bounds pagination: a server whose cursor never ends
	// cannot keep the host listing forever.
	maxListPages = 200
	// maxListItems bounds how many tools (or resources, prompts) one server
	// may declare.
	maxListItems = 20000
	// stderrTailBytes is how much of a child's stderr is kept to explain its
	// death in an error.
	stderrTailBytes = 4 << 10
	// stderrLineBytes bounds one logged line of a child's stderr.
	stderrLineBytes = 4 << 10
)

// server is one configured MCP server and its connection.
type server struct {
	h   *Host
	cfg config.Server
	log *slog.Logger

	stderr *transport.TailBuffer // stdio only
	inproc *mcp.Server           // in-process only

	mu       sync.Mutex
	state    State
	err      error
	session  *mcp.ClientSession
	info     *mcp.InitializeResult
	tools    []discovered
	inflight map[*call]struct{}
	idle     []func()      // close the idle connections of the server's HTTP clients
	lost     error         // why the session ended, once it has
	done     chan struct{} // closed when the session has ended
	lastErr  error         // the last error, kept after recovery
	pid      int           // the stdio child's pid, while it runs

	// What the host cleaned in what the server declared, and skipped on
	// its stdout (declared.go).
	notes         map[string][]string // by listing; s.mu
	stdoutSkipped atomic.Int64        // stdout lines that were not messages

	// Supervision (supervise.go).
	readyCh     chan struct{} // closed while the server is usable (ready or degraded)
	stop        chan struct{} // closed by close
	demand      chan struct{} // a call wants a lazy or given-up server
	supervised  chan struct{} // closed when the supervisor has exited
	gaveUp      bool          // failed too often: left alone until asked
	restarts    int
	lastHealthy time.Time
	sem         chan struct{} // max_concurrency; nil: no limit
	brk         breaker

	// The 2026-07-28 connection for callers that answer input-required
	// results themselves (generation.go).
	irMu    sync.Mutex     // held while dialing it
	ir      *irConn        // nil: not open
	irWatch sync.WaitGroup // its watchers, until they have reported its end
	irOlder atomic.Bool    // the server answered it with an older version
	// legacySSE: the server's own connection is legacy HTTP+SSE
	// (transport "sse", or "http" fallen back), which 2026-07-28 does not
	// define; no 2026-07-28 connection is tried.
	legacySSE atomic.Bool
}

// discovered is one tool as the server declared it (its text cleaned),
// with its compiled schema.
type discovered struct {
	tool    *mcp.Tool
	schema  *schema.Schema
	err     error  // why the schema did not compile
	refused string // why else the tool cannot be offered
}

func newServer(h *Host, cfg config.Server) *server {
	if cfg.Timeout <= 0 {
		cfg.Timeout = config.DefaultTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = config.DefaultConnectTimeout
	}
	if cfg.Transport == "" {
		if cfg.Command != "" {
			cfg.Transport = config.TransportStdio
		} else {
			cfg.Transport = config.TransportHTTP
		}
	}
	if cfg.HealthInterval == 0 {
		cfg.HealthInterval = config.DefaultHealthInterval
	}
	if cfg.MaxRestarts <= 0 {
		cfg.MaxRestarts = config.DefaultMaxRestarts
	}
	s := &server{
		h:        h,
		cfg:      cfg,
		log:      h.log.With("server", cfg.ID),
		state:    StateConnecting,
		inflight: map[*call]struct{}{},
		readyCh:  make(chan struct{}),
		stop:     make(chan struct{}),
		demand:   make(chan struct{}, 1),
	}
	if cfg.MaxConcurrency > 0 {
		s.sem = make(chan struct{}, cfg.MaxConcurrency)
	}
	return s
}

func (s *server) setState(st State, err error) { s.setStateIf(nil, st, err) }

// setStateIf changes the state, unless the server is closed or cond (if
// not nil, called with s.mu held) is false, and announces it. It reports
// whether it did.
func (s *server) setStateIf(cond func() bool, st State, err error) bool {
	s.mu.Lock()
	if s.state == StateClosed || (cond != nil && !cond()) {
		s.mu.Unlock()
		return false
	}
	s.setStateLocked(st, err)
	snap := s.statusLocked()
	s.mu.Unlock()
	s.announce(snap)
	return true
}

// announce calls Options.OnState with st, a snapshot taken when the state
// changed: read again later, the state may already be another one, and
// the change would never be announced.
func (s *server) announce(st ServerStatus) {
	if s.h.opts.OnState != nil {
		s.h.opts.OnState(s.withTools(st))
	}
}

// setStateLocked changes the state, keeping readyCh closed exactly while
// the server is usable. s.mu is held.
func (s *server) setStateLocked(st State, err error) {
	err = s.h.redactErr(err) // it reaches events, logs and every face
	usable := func(st State) bool { return st == StateReady || st == StateDegraded }
	if usable(st) && !usable(s.state) {
		close(s.readyCh)
	} else if !usable(st) && usable(s.state) {
		s.readyCh = make(chan struct{})
	}
	s.state = st
	if err != nil || st == StateReady {
		s.err = err
	}
	if err != nil {
		s.lastErr = err
	}
}

// statusWithTools is status with the count of tools the catalog offers.
func (s *server) statusWithTools() ServerStatus { return s.withTools(s.status()) }

func (s *server) withTools(st ServerStatus) ServerStatus {
	s.h.mu.RLock()
	if cat := s.h.catalog; cat != nil {
		st.Tools = cat.counts[st.ID]
	}
	s.h.mu.RUnlock()
	return st
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked()
}

// statusLocked is status with s.mu held.
func (s *server) statusLocked() ServerStatus {
	st := ServerStatus{
		ID:          s.cfg.ID,
		Description: s.cfg.Description,
		Transport:   s.cfg.Transport,
		State:       s.state,
		Optional:    s.cfg.Optional,
		Err:         s.err,
		LastError:   s.lastErr,
		Restarts:    s.restarts,
		LastHealthy: s.lastHealthy,
		InFlight:    len(s.inflight),
		PID:         s.pid,
		Warnings:    s.warningsLocked(),
	}
	if s.info != nil {
		st.ServerInfo = s.info.ServerInfo
		st.ProtocolVersion = s.info.ProtocolVersion
		st.Instructions = s.info.Instructions
	}
	return st
}

// connect connects, initializes and lists the server's tools, within the
// server's connect timeout. It never returns an error: the outcome is the
// server's state.
func (s *server) connect(ctx context.Context) bool {
	s.setState(StateConnecting, nil)
	start := time.Now()
	err := s.connectErr(ctx)
	if err != nil {
		// The error is reported as this server's; drop a prefix that
		// already names it (config.Resolve's errors do).
		msg := strings.TrimPrefix(s.h.red.Redact(err.Error()), fmt.Sprintf("server %q: ", s.cfg.ID))
		err = errors.New(msg)
		s.log.Warn("server failed to start", "err", err, "after", time.Since(start).Round(time.Millisecond))
		s.setState(StateFailed, err)
		return false
	}
	s.log.Info("server ready", "tools", len(s.tools), "after", time.Since(start).Round(time.Millisecond))
	s.mu.Lock()
	s.lastHealthy = time.Now()
	s.mu.Unlock()
	s.setState(StateReady, nil)
	return true
}

func (s *server) connectErr(ctx context.Context) error {
	rs, err := s.cfg.Resolve(s.h.lookupEnv(), s.h.opts.Secrets, s.h.red)
	if err != nil {
		return err
	}
	if rs.Transport != config.TransportStdio && rs.Transport != transportInProcess {
		if err := s.h.opts.Network.CheckURL(rs.URL, rs.AllowLocalEndpoint); err != nil {
			return err
		}
	}

	cctx, cancel := context.WithTimeout(ctx, rs.ConnectTimeout)
	defer cancel()
	session, err := s.dial(cctx, rs)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s (connect_timeout): %w", rs.ConnectTimeout, err)
		}
		return s.explain(err)
	}
	s.noteSession(session.ID())
	tools, err := s.listTools(cctx, session)
	if err != nil {
		session.Close()
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("listing tools: no answer within %s (connect_timeout): %w", rs.ConnectTimeout, err)
		} else {
			err = fmt.Errorf("listing tools: %w", err)
		}
		return s.explain(err)
	}
	s.irOlder.Store(false) // it may have been upgraded
	info, notes := s.h.lim.cleanInit(session.InitializeResult())
	s.setNotes("server", notes)
	s.mu.Lock()
	s.session = session
	s.info = info
	s.tools = tools
	s.lost = nil
	s.done = make(chan struct{})
	done := s.done
	s.mu.Unlock()
	go s.watch(session, done)
	return nil
}

// noteIsolation logs how a started stdio child is contained, and once per
// host that the kernel refused the PID namespace that would hold all it
// starts (see transport.Isolation): not a warning, since nothing is wrong
// with the server and many kernels refuse one, but what an operator who
// wonders why a server's helper outlived it needs to know.
func (s *server) noteIsolation(cmd *transport.Command) {
	iso, refused := cmd.Isolation()
	if iso == transport.IsolationNone {
		return // not started
	}
	s.log.Debug("server process started", "pid", cmd.Pid(), "isolation", iso.String())
	if refused != nil {
		s.h.isolationRefused.Do(func() {
			s.log.Info("stdio servers run in a process group, not a PID namespace of their own: a process one starts that leaves its group may outlive it",
				"reason", refused.Error())
		})
	}
}

// explain adds the tail of a stdio child's stderr to err, which is usually
// where the real reason is.
func (s *server) explain(err error) error {
	if s.stderr == nil {
		return err
	}
	raw := s.stderr.String()
	if len(raw) >= stderrTailBytes {
		// The buffer dropped older bytes: its first line may begin inside
		// a secret, where the redactor cannot recognise it. Drop that line.
		if i := strings.IndexByte(raw, '\n'); i >= 0 {
			raw = raw[i+1:]
		} else {
			raw = ""
		}
	}
	// The child may print the secrets it was given (its environment), and
	// terminal escapes: the error reaches terminals.
	raw, _ = s.h.lim.cleanText(raw, len(raw))
	tail := strings.TrimSpace(s.h.red.Redact(raw))
	if tail == "" {
		return err
	}
	if i := strings.LastIndexByte(tail, '\n'); i >= 0 && len(tail)-i < 200 {
		// Keep the last few lines only.
		lines := strings.Split(tail, "\n")
		if len(lines) > 5 {
			lines = lines[len(lines)-5:]
		}
		tail = strings.Join(lines, "\n")
	}
	return fmt.Errorf("%w\nstderr: %s", err, tail)
}

// watch notices when the session ends on its own (the child exited, the
// connection dropped) and fails the calls in flight.
func (s *server) watch(session *mcp.ClientSession, done chan struct{}) {
	defer close(done)
	err := session.Wait()
	s.mu.Lock()
	closing := s.state == StateClosed
	if !closing {
		if err == nil {
			err = errors.New("connection closed by the server")
		}
		s.lost = s.explain(fmt.Errorf("connection lost: %w", err))
		s.session = nil
		s.pid = 0
		// The supervisor restarts it; calls meanwhile wait.
		s.setStateLocked(StateRestarting, s.lost)
	}
	snap := s.statusLocked()
	s.mu.Unlock()
	if !closing {
		// Release what the SDK still holds for the dead session.
		session.Close()
		s.log.Warn("server connection lost", "err", snap.Err)
		s.announce(snap)
	}
}

func (s *server) close() error {
	s.mu.Lock()
	session := s.session
	s.session = nil
	if s.state != StateClosed {
		s.setStateLocked(StateClosed, nil)
		close(s.stop)
	}
	idle := s.idle
	s.idle = nil
	supervised := s.supervised
	s.mu.Unlock()
	if supervised != nil {
		<-supervised
	}
	s.closeInputRequired()
	s.mu.Lock()
	// The supervisor may have connected while stopping.
	if session == nil {
		session = s.session
	}
	s.session = nil
	idle = append(idle, s.idle...)
	s.idle = nil
	// The last session's watcher, which may still be reporting its end
	// (a log line, an OnState call): after close, nothing more may come.
	watcher := s.done
	s.mu.Unlock()
	// Idle keep-alive connections hold a goroutine each until closed.
	defer func() {
		for _, f := range idle {
			f()
		}
	}()
	var err error
	if session != nil {
		err = session.Close()
	}
	if watcher != nil {
		<-watcher
	}
	if err != nil && isBenignCloseErr(err) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("server %q: closing: %w", s.cfg.ID, err)
	}
	return nil
}

func isBenignCloseErr(err error) bool {
	// A child stopped by a signal during shutdown, or a pipe already closed,
	// is what closing is for.
	msg := err.Error()
	return strings.Contains(msg, "signal: ") || strings.Contains(msg, "file already closed") ||
		strings.Contains(msg, "exit status") || errors.Is(err, io.EOF)
}

// liveSession returns the session to send a request on, waiting, within
// ctx, for a server that is starting, restarting or lazily idle; a failed
// server fails at once.
func (s *server) liveSession(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		s.mu.Lock()
		state, session, ch, err := s.state, s.session, s.readyCh, s.err
		s.mu.Unlock()
		switch state {
		case StateClosed:
			return nil, ErrClosed
		case StateReady, StateDegraded:
			if session != nil {
				return session, nil
			}
		case StateFailed:
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			return nil, ErrUnavailable
		case StateLazy:
			s.want()
		}
		select {
		case <-ch:
		case <-s.stop:
			return nil, ErrClosed
		case <-ctx.Done():
			if err != nil {
				return nil, fmt.Errorf("%w: still %s when the call's time ran out (last error: %v)", ErrUnavailable, state, err)
			}
			return nil, fmt.Errorf("%w: still %s when the call's time ran out", ErrUnavailable, state)
		}
	}
}

// want asks the supervisor to start the server now.
func (s *server) want() {
	select {
	case s.demand <- struct{}{}:
	default:
	}
}

func (s *server) dial(ctx context.Context, rs config.Server) (*mcp.ClientSession, error) {
	return s.dialAs(ctx, rs, false)
}

// dialAs connects to the server: its own connection, or (inputRequired) a
// 2026-07-28 one that returns input-required results (generation.go).
func (s *server) dialAs(ctx context.Context, rs config.Server, inputRequired bool) (*mcp.ClientSession, error) {
	client := s.newClient(inputRequired)
	sopts := s.h.sessionOptions()
	if inputRequired {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: InputRequiredVersion}
	}
	if len(rs.Roots) > 0 {
		roots := make([]*mcp.Root, len(rs.Roots))
		for i, r := range rs.Roots {
			roots[i] = &mcp.Root{URI: r}
		}
		client.AddRoots(roots...)
	}
	switch rs.Transport {
	case config.TransportStdio:
		var stderr io.Writer = &lineLogger{log: s.log, red: s.h.red}
		if !inputRequired {
			s.stderr = transport.NewTailBuffer(stderrTailBytes)
			stderr = io.MultiWriter(s.stderr, stderr)
		}
		cmd := &transport.Command{
			Path:            rs.Command,
			Args:            rs.Args,
			Env:             transport.MinimalEnv(rs.Env),
			Dir:             rs.Cwd,
			Stderr:          stderr,
			MaxMessageBytes: s.h.opts.MaxMessageBytes,
			SkippedLine:     s.stdoutLine,
		}
		session, err := client.Connect(ctx, s.tap(cmd), sopts)
		if err == nil && !inputRequired {
			s.mu.Lock()
			s.pid = cmd.Pid()
			s.mu.Unlock()
		}
		s.noteIsolation(cmd)
		return session, err
	case config.TransportHTTP:
		rec := &statusRecorder{progress: s.h}
		t := &mcp.StreamableClientTransport{
			Endpoint:     rs.URL,
			HTTPClient:   s.httpClient(rs, rec),
			MaxEventSize: s.h.opts.MaxMessageBytes,
		}
		// Not s.tap: wrapping the SDK's Streamable HTTP connection would
		// hide its unexported session hooks (the standalone stream and the
		// protocol-version header); its progress is read from the response
		// bodies instead (see sseProgressTap).
		session, err := client.Connect(ctx, t, sopts)
		if err == nil {
			if !inputRequired {
				s.legacySSE.Store(false)
			}
			return session, nil
		}
		// The spec's backwards compatibility: a server that answers the
		// initialize POST with 4xx may be an old HTTP+SSE server. The
		// initialize POST is the last one of a failed connect (a
		// 2026-07-28 offer's server/discover probe comes first, and any
		// answer to it makes the SDK fall back to initialize).
		if code := rec.last(); code >= 400 && code < 500 && ctx.Err() == nil && !inputRequired {
			s.log.Info("Streamable HTTP refused; trying the legacy SSE transport", "status", code)
			session, err2 := s.dialSSE(ctx, rs, client)
			if err2 == nil {
				return session, nil
			}
			return nil, fmt.Errorf("%w (legacy SSE fallback also failed: %v)", err, err2)
		}
		return nil, err
	case config.TransportSSE:
		return s.dialSSE(ctx, rs, client)
	case transportInProcess:
		ct, st := mcp.NewInMemoryTransports()
		// The server session ends when the client closes the connection.
		if _, err := s.inproc.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return client.Connect(ctx, s.tap(ct), sopts)
	case config.TransportWebSocket:
		t := &transport.WebSocket{
			URL:             rs.URL,
			Header:          headerOf(rs.Headers),
			HTTPClient:      s.httpClient(rs, nil),
			MaxMessageBytes: int64(s.h.opts.MaxMessageBytes),
		}
		return client.Connect(ctx, s.tap(t), sopts)
	}
	return nil, fmt.Errorf("unknown transport %q", rs.Transport)
}

// dialSSE connects client to a legacy HTTP+SSE server, offering at most
// legacySSEVersion.
func (s *server) dialSSE(ctx context.Context, rs config.Server, client *mcp.Client) (*mcp.ClientSession, error) {
	t := detachedConnect{&mcp.SSEClientTransport{
		Endpoint:     rs.URL,
		HTTPClient:   s.httpClient(rs, nil),
		MaxEventSize: s.h.opts.MaxMessageBytes,
	}}
	v := s.h.opts.ProtocolVersion
	if v == "" || v > legacySSEVersion {
		v = legacySSEVersion
	}
	session, err := client.Connect(ctx, s.tap(t), &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err == nil {
		s.legacySSE.Store(true)
	}
	return session, err
}

// legacySSEVersion is the newest protocol version offered over the legacy
// HTTP+SSE transport. 2026-07-28 defines only stdio and Streamable HTTP,
// and a client offering it begins with a server/discover POST that no
// legacy SSE server knows: go-sdk v1.1.0–v1.6.1 answer it 400, which the
// go-sdk's SSE client (v1.8.0) takes for a broken connection, so the
// initialize the spec says to fall back to is never sent. Offering this
// version makes initialize the first request: no probe, no extra round
// trip, for old and new SSE servers alike.
const legacySSEVersion = "2025-11-25"

func (s *server) newClient(inputRequired bool) *mcp.Client {
	o := s.clientOptions()
	if inputRequired {
		// The caller answers input-required results itself; list changes
		// arrive on the server's own connection.
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
		o.ToolListChangedHandler, o.ResourceListChangedHandler, o.PromptListChangedHandler = nil, nil, nil
	}
	c := mcp.NewClient(s.h.opts.ClientInfo, o)
	// Redaction runs first on what arrives (the outermost middleware):
	// nothing a server sends is seen unredacted (redact.go).
	c.AddReceivingMiddleware(s.callMiddleware)
	c.AddReceivingMiddleware(s.redactRequests)
	c.AddSendingMiddleware(s.redactResults)
	// Cleaning (declared.go) runs before redaction: a secret split by
	// invisible characters is whole once they are gone.
	c.AddReceivingMiddleware(s.cleanRequests)
	return c
}

func (s *server) clientOptions() *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
	}
	if len(s.cfg.Roots) > 0 || s.h.opts.AdvertiseRoots {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	o := &mcp.ClientOptions{
		Capabilities:          caps,
		ElicitationHandler:    s.elicit,
		LoggingMessageHandler: s.logMessage,
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			go s.refreshTools()
		},
		ResourceListChangedHandler: func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
			s.h.changed(Change{Server: s.cfg.ID, Kind: ResourcesChanged})
		},
		PromptListChangedHandler: func(ctx context.Context, req *mcp.PromptListChangedRequest) {
			s.h.changed(Change{Server: s.cfg.ID, Kind: PromptsChanged})
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if f := s.h.opts.OnResourceUpdated; f != nil {
				f(s.cfg.ID, req.Params)
			}
		},
	}
	if s.h.opts.Sampling != nil {
		o.CreateMessageHandler = s.sample
	}
	return o
}

// listTools lists the server's tools, every page, compiling their schemas,
// and records them in the tool cache.
func (s *server) listTools(ctx context.Context, cs *mcp.ClientSession) ([]discovered, error) {
	if init := cs.InitializeResult(); init != nil && init.Capabilities != nil && init.Capabilities.Tools == nil {
		return nil, nil
	}
	ttl := 0
	tools, err := paginate(ctx, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		if t := res.GetTTLMs(); t > 0 && (ttl == 0 || t < ttl) {
			ttl = t
		}
		return res.Tools, res.NextCursor, nil
	})
	if notImplemented(err) {
		// No tools/list (a server that sent no capabilities, as some
		// older ones do, or declared tools it cannot list): it has no
		// tools to offer, but may have resources or prompts.
		s.log.Debug("the server does not implement tools/list: no tools")
		tools, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	out, notes := s.h.lim.compileTools(tools)
	s.setNotes("tools", notes)
	s.saveCache(out, ttl)
	return out, nil
}

// detachedConnect gives a transport's Connect a context that outlives the
// connect timeout. The go-sdk's SSE client opens its event stream with the
// context passed to Connect, so the connect timeout's cancellation would end
// the session; here ctx bounds only the connecting itself, and the stream
// lives until the connection is closed.
type detachedConnect struct{ mcp.Transport }

func (d detachedConnect) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := d.Transport.Connect(life)
	if !stop() {
		// ctx ended while connecting.
		if conn != nil {
			conn.Close()
		}
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{Connection: conn, cancel: cancel}, nil
}

type cancelOnClose struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// paginate collects every page of a list, within the host's bounds.
func paginate[T any](ctx context.Context, list func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	var all []T
	cursor := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, fmt.Errorf("more than %d pages: giving up", maxListPages)
		}
		items, next, err := list(ctx, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if len(all) > maxListItems {
			return nil, fmt.Errorf("more than %d items: giving up", maxListItems)
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("pagination cursor %q repeats", next)
		}
		seen[next] = true
		cursor = next
	}
}

// httpClient is the client for one network server: its configured headers on
// every request, no proxy from the environment (a proxy would hide the real
// target), no cross-origin redirects, and bounded response bodies.
func (s *server) httpClient(rs config.Server, rec *statusRecorder) *http.Client {
	// The guarded dialer resolves once and dials the checked address;
	// allow_local_endpoint admits exactly the authored host:port (resolved
	// now for names like localhost), never a metadata address or a redirect
	// target. The operator's [network] ranges and proxy apply on top.
	ctx, cancel := context.WithTimeout(context.Background(), rs.ConnectTimeout)
	defer cancel()
	d := &netguard.Dialer{Timeout: rs.ConnectTimeout}
	if rs.AllowLocalEndpoint {
		d.AllowLocal, _ = netguard.LocalEndpoint(ctx, nil, rs.URL) // unresolved: the dialer refuses, saying why
	}
	base := s.h.opts.Network.Transport(ctx, d)
	base.TLSHandshakeTimeout = rs.ConnectTimeout
	s.mu.Lock()
	s.idle = append(s.idle, base.CloseIdleConnections)
	s.mu.Unlock()
	ht := &headerTransport{base: base, header: headerOf(rs.Headers), rec: rec}
	if u, err := url.Parse(rs.URL); err == nil {
		ht.origin = netguard.Origin(u)
	}
	rt := transport.LimitBodies(ht, int64(s.h.opts.MaxMessageBytes))
	// headerTransport adds the configured headers only to requests to the
	// server's own origin, and the policy drops them (and Authorization,
	// Cookie) from a cross-origin hop, which it refuses unless the server
	// sets allow_cross_origin_redirects.
	policy := &netguard.RedirectPolicy{
		AllowLocal:        rs.AllowLocalEndpoint,
		AllowCrossOrigin:  rs.AllowCrossOriginRedirects,
		CredentialHeaders: slices.Collect(maps.Keys(rs.Headers)),
		Network:           s.h.opts.Network,
	}
	return &http.Client{Transport: rt, CheckRedirect: policy.CheckRedirect}
}

func headerOf(m map[string]string) http.Header {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// headerTransport adds a server's configured headers to every request to
// the server's own origin, and records the status of each POST.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	// origin is the server URL's (netguard.Origin); the headers carry
	// credentials, so a request elsewhere (after a cross-origin redirect
	// the server allows) gets none of them. "" (an unparsable URL, which
	// CheckURL refuses before any request): no request gets them.
	origin string
	rec    *statusRecorder
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) > 0 && t.origin != "" && netguard.Origin(req.URL) == t.origin {
		req = req.Clone(req.Context())
		for k, v := range t.header {
			if req.Header.Get(k) == "" {
				req.Header[k] = v
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && t.rec != nil && req.Method == http.MethodPost {
		t.rec.record(resp.StatusCode)
	}
	if err == nil && t.rec != nil && t.rec.progress != nil && resp.Body != nil &&
		strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseProgressTap{rc: resp.Body, h: t.rec.progress}
	}
	return resp, err
}

type statusRecorder struct {
	// progress, when set, routes progress notifications read from event
	// stream bodies (Streamable HTTP).
	progress *Host

	code atomic.Int32 // of the last POST answered
}

func (r *statusRecorder) record(code int) { r.code.Store(int32(code)) }

// last is the status of the last POST answered.
func (r *statusRecorder) last() int { return int(r.code.Load()) }

// lineLogger logs a child's stderr line by line, each line bounded.
type lineLogger struct {
	log *slog.Logger
	red *secret.Redactor
	mu  sync.Mutex
	buf []byte
	cut bool // the current line was longer than the bound
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.keep(p)
			break
		}
		l.keep(p[:i])
		l.flush()
		p = p[i+1:]
	}
	return n, nil
}

// keep adds p to the current line, within the bound.
func (l *lineLogger) keep(p []byte) {
	room := stderrLineBytes - len(l.buf)
	if len(p) > room {
		l.cut = true
	}
	if room > 0 {
		l.buf = append(l.buf, p[:min(room, len(p))]...)
	}
}

func (l *lineLogger) flush() {
	if l.cut {
		if l.red != nil {
			// A secret may straddle the cut, where the redactor cannot see
			// it whole: drop what could be its beginning. With no secret
			// registered MaxLen is 0 and nothing is dropped.
			l.buf = l.buf[:len(l.buf)-min(len(l.buf), max(0, l.red.MaxLen()-1))]
		}
		l.buf = append(l.buf, " [cut]"...)
	}
	l.cut = false
	line := strings.TrimRight(string(l.buf), "\r")
	l.buf = l.buf[:0]
	if line != "" {
		l.log.Info("server stderr", "line", line)
	}
}

// lookupEnv is os.LookupEnv unless the options say otherwise.
func (h *Host) lookupEnv() func(string) (string, bool) {
	if h.opts.LookupEnv != nil {
		return h.opts.LookupEnv
	}
	return os.LookupEnv
}
