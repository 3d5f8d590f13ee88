package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/transport"
)

// server is one configured MCP server and its connection.
type server struct {
	h   *Host
	cfg config.Server
	log *slog.Logger

	// pinChecks counts the rechecks of this server's pins begun
	// (RecheckPins): see storeTools.
	pinChecks atomic.Uint64

	// life ends when the server is closed (or the host): the requests
	// in flight on its sessions end with it, since closing a session
	// waits for them.
	life    context.Context
	endLife context.CancelFunc

	stderr *transport.TailBuffer // stdio only
	inproc *mcp.Server           // in-process only
	// ownNames: the tools keep their own names (InProcessServer.OwnNames)
	ownNames bool

	mu      sync.Mutex
	state   State
	err     error
	session *mcp.ClientSession
	info    *mcp.InitializeResult
	tools   []discovered
	// listed: tools is a list the server gave (or its cached one), not
	// the nothing of a server still starting; its tools_allowlist is
	// checked against it from then on.
	listed   bool
	inflight map[*call]struct{}
	idle     []func()      // close the idle connections of the server's HTTP clients
	lost     error         // why the session ended, once it has
	done     chan struct{} // closed when the session has ended
	lastErr  error         // the last error, kept after recovery
	pid      int           // the stdio child's pid, while it runs
	iso      string        // how the stdio child is contained, while it runs
	detail   string        // what it is doing while it starts (ServerStatus.Detail)

	// The stdio child being started (install.go).
	starting *transport.Command
	// missing: the last start failed because the server's program is not
	// installed, which retrying does not mend (supervise.go).
	missing bool
	// lastFailure is the last start failure logged, so that the same one
	// again is not a warning again.
	lastFailure string

	// What the host cleaned in what the server declared, and skipped on
	// its stdout (declared.go).
	notes         map[string][]string // by listing; s.mu
	stdoutSkipped atomic.Int64        // stdout lines that were not messages
	refused       atomic.Int64        // messages refused (transport's RefusedMessage)
	// findings are the signs of poisoning in its latest tool list
	// (scan.go); s.mu.
	findings []ToolFinding
	// declScans are the scans of its latest prompt, resource and template
	// listings, by kind (scan.go); s.mu.
	declScans map[string]declScan

	// envKeys are the names of the stdio child's environment (stderr.go);
	// read by explain, which runs with s.mu held.
	envKeys atomic.Pointer[map[string]bool]

	// Supervision (supervise.go).
	readyCh    chan struct{} // closed while the server is usable (ready or degraded)
	stop       chan struct{} // closed by close
	demand     chan struct{} // a call wants a lazy or given-up server
	supervised chan struct{} // closed when the supervisor has exited
	gaveUp     bool          // failed too often: left alone until asked
	restarts   int
	// reconnecting: the supervisor is connecting again; the restart is
	// counted when the server becomes usable, in the same change, so that
	// no status shows it ready with the old count.
	reconnecting bool
	lastHealthy  time.Time
	readySince   time.Time     // when it last became usable, while it is
	sem          chan struct{} // max_concurrency; nil: no limit
	brk          breaker
	// hist is its recent stderr and incidents (history.go).
	hist history

	// The 2026-07-28 connection for callers that answer input-required
	// results themselves (generation.go).
	irMu    sync.Mutex     // held while dialing it
	ir      *irConn        // nil: not open
	irWatch sync.WaitGroup // its watchers, until they have reported its end
	irOlder atomic.Bool    // the server answered it with an older version

	// taskRequired holds the tools (own names) the server refused to call
	// without the tasks extension (task.go).
	taskRequired sync.Map

	// rootsClient is the go-sdk client of the server's own connection,
	// which Host.SetRoots updates (roots.go); h.rootsMu.
	rootsClient *rootsClient
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
	// flagged summarises the scanner's findings when the server's scan
	// is hold: the tool is held unless its definition is approved.
	flagged string
	// held says why the tool is held until a person approves its
	// definition (pin.go); "" when it is not.
	held string
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
	s.life, s.endLife = context.WithCancel(h.ctx)
	return s
}

// connect connects, initializes and lists the server's tools, within the
// server's connect timeout. It never returns an error: the outcome is the
// server's state. reported says that the caller reports a failure itself
// (Start's error names a required server that fails): it is then logged at
// info level only, so that it is not printed twice.
func (s *server) connect(ctx context.Context, reported bool) bool {
	s.setState(StateConnecting, nil)
	start := time.Now()
	err := s.connectErr(ctx)
	if err != nil {
		var me *missingError
		missing := errors.As(err, &me)
		// The error is reported as this server's; drop a prefix that
		// already names it (config.Resolve's errors do).
		msg := strings.TrimPrefix(s.h.red.Redact(err.Error()), fmt.Sprintf("server %q: ", s.cfg.ID))
		err = errors.New(msg)
		s.mu.Lock()
		again := msg == s.lastFailure
		s.lastFailure = msg
		s.missing = missing
		if missing {
			// Not retried in the background: only a call or Restart asks
			// again (supervise.go).
			s.gaveUp = true
		}
		s.mu.Unlock()
		log := s.log.Warn
		if reported || again || ctx.Err() != nil {
			log = s.log.Info
		}
		log("server failed to start", "err", oneLine(msg), "after", time.Since(start).Round(time.Millisecond))
		s.setState(StateFailed, err)
		return false
	}
	s.log.Info("server ready", "tools", len(s.tools), "after", time.Since(start).Round(time.Millisecond))
	s.mu.Lock()
	s.lastHealthy = time.Now()
	s.lastFailure, s.missing = "", false
	s.mu.Unlock()
	s.offer(StateReady)
	return true
}

// offer installs a catalog with the server's tools, then sets st (ready,
// or lazily idle with cached tools): the state's event counts the tools
// the catalog offers from it. The caller then tells the watchers
// (Host.joined).
func (s *server) offer(st State) {
	s.h.catalogMu.Lock()
	s.h.rebuildCatalog()
	s.h.catalogMu.Unlock()
	s.setState(st, nil)
}

func (s *server) connectErr(ctx context.Context) error {
	defer func() {
		s.mu.Lock()
		s.starting = nil
		s.mu.Unlock()
	}()
	rs, err := s.cfg.Resolve(s.h.lookupEnv(), s.h.opts.Secrets, s.h.red)
	if err != nil {
		return err
	}
	if rs.Transport != config.TransportStdio && rs.Transport != TransportInProcess {
		if err := s.h.opts.Network.CheckURL(rs.URL, rs.AllowLocalEndpoint); err != nil {
			return err
		}
	}
	err = s.startOnce(ctx, rs)
	if err == nil || rs.Transport != config.TransportStdio || ctx.Err() != nil {
		return err
	}
	// An npx whose cache entry an earlier install, killed half-way, left
	// broken fails every start until the entry is gone (install.go).
	rn, _ := packageRunner(rs.Command, rs.Args)
	s.mu.Lock()
	cmd := s.starting
	s.mu.Unlock()
	dir, broken := s.brokenNPXEntry(rn, cmd, s.stderr.String())
	if !broken {
		return err
	}
	if rmErr := os.RemoveAll(dir); rmErr != nil {
		return fmt.Errorf("%w\nnpx's cache entry %s is half-installed (an install was interrupted) and could not be removed: %v; remove it and start again", err, dir, rmErr)
	}
	s.log.Warn("npx's cache entry was left half-installed by an interrupted install, and failed the start; removed it, starting again",
		"entry", dir, "err", oneLine(err.Error()))
	return s.startOnce(ctx, rs)
}

// startOnce starts the resolved server once: connect, initialize, list
// its tools, within the start's deadline (install.go).
func (s *server) startOnce(ctx context.Context, rs config.Server) error {
	cctx, done := s.startDeadline(ctx, rs)
	defer done()
	rn, _ := packageRunner(rs.Command, rs.Args)
	session, err := s.dial(cctx, rs)
	if err != nil {
		var le *oauth.LoginRequiredError
		if errors.As(err, &le) {
			// Its error would repeat at every attempt: failed at once,
			// tried again quietly like a missing program (supervise.go),
			// and at once by a call or Host.Restart after the sign-in.
			return &missingError{le}
		}
		var lf *oauth.LoginFailedError
		if errors.As(err, &lf) {
			// A sign-in that failed (a refused callback, an authorization
			// server without PKCE): said at once, as it is, rather than
			// after the connect timeout; not retried unasked.
			return &missingError{lf}
		}
		if ctx.Err() != nil {
			return err // stopped: how the child then died is no news
		}
		if cause := context.Cause(cctx); cctx.Err() != nil {
			err = startTimeoutErr(cause, rs, rn, "", err)
		} else {
			err = s.startFailure(rs, err)
		}
		return s.explain(err)
	}
	s.noteSession(session.ID())
	pins := s.pinChecks.Load() // before the list is pinned: storeTools
	tools, err := s.listTools(cctx, session)
	if err != nil {
		s.closeSession(session)
		if ctx.Err() != nil {
			return err
		}
		if cause := context.Cause(cctx); cctx.Err() != nil {
			err = startTimeoutErr(cause, rs, rn, "listing tools: ", err)
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
	repin := s.storeTools(tools, pins)
	s.lost = nil
	s.done = make(chan struct{})
	done2 := s.done
	s.mu.Unlock()
	go s.watch(session, done2)
	if repin {
		s.h.recheckPins(s)
	}
	return nil
}

// A missingError is a start that failed because the server's program, or
// a program it runs, is not installed: starting again will not help until
// it is, so the server is not retried in the background.
type missingError struct{ err error }

func (e *missingError) Error() string { return e.err.Error() }
func (e *missingError) Unwrap() error { return e.err }

// childExitWait bounds how long a failed start waits to learn how the
// child died: the connection ends when its stdout closes, an instant
// before the child is reaped.
const childExitWait = time.Second

// startFailure says why a stdio start failed in the user's words: a
// program that is not installed, and what to install; a child that exited
// before answering, and how it died (instead of the SDK's "connection
// closed: calling initialize: client is closing: EOF").
func (s *server) startFailure(rs config.Server, err error) error {
	var nf *transport.NotFoundError
	if errors.As(err, &nf) {
		return &missingError{fmt.Errorf("%w: %s", err, missingProgramHint(nf.Program))}
	}
	s.mu.Lock()
	cmd := s.starting
	s.mu.Unlock()
	if cmd == nil || rs.Transport != config.TransportStdio || cmd.Pid() == 0 {
		return err
	}
	t := time.NewTimer(childExitWait)
	defer t.Stop()
	select {
	case <-cmd.Exited():
	case <-t.C:
		return err // alive, or stuck: the SDK's error is all there is
	}
	how := "exit status 0"
	if ps := cmd.ProcessState(); ps != nil {
		how = ps.String()
	}
	exited := fmt.Errorf("the server exited before answering (%s)", how)
	if ps := cmd.ProcessState(); ps != nil && ps.ExitCode() == 127 {
		// The shell's and env's "command not found": a program the
		// server's script runs is not installed.
		hint := "a program it runs is not installed"
		if m := shebangMissing().FindStringSubmatch(s.stderr.String()); m != nil {
			hint = fmt.Sprintf("%q is not installed: %s", m[1], missingProgramHint(m[1]))
		}
		return &missingError{fmt.Errorf("%w: %s", exited, hint)}
	}
	return exited
}

// noteIsolation logs how a started stdio child is contained, and once per
// host that the kernel refused a stronger containment (see
// transport.Isolation): not a warning, since nothing is wrong with the
// server and many kernels refuse, but what an operator who wonders why a
// server's helper outlived it, or whether one server can read another's
// secrets, needs to know.
func (s *server) noteIsolation(cmd *transport.Command) {
	iso, refused := cmd.Isolation()
	if iso == transport.IsolationNone {
		return // not started
	}
	s.log.Debug("server process started", "pid", cmd.Pid(), "isolation", iso.String())
	if refused == nil {
		return
	}
	s.h.isolationRefused.Do(func() {
		if iso == transport.IsolationPIDNamespace {
			s.log.Info("stdio servers run in a PID namespace without a /proc of their own: each may read the environment, secrets included, of other processes of its user through /proc (docs/security.md)",
				"reason", refused.Error())
			return
		}
		s.log.Info("stdio servers run in a process group, not a PID namespace of their own: a process one starts that leaves its group may outlive it, and each may read the environment, secrets included, of other processes of its user through /proc (docs/security.md)",
			"reason", refused.Error())
	})
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
		s.pid, s.iso = 0, ""
		// The supervisor restarts it; calls meanwhile wait.
		s.setStateLocked(StateRestarting, s.lost)
	}
	snap := s.statusLocked()
	s.mu.Unlock()
	if !closing {
		// Release what the SDK still holds for the dead session.
		s.closeSession(session)
		s.log.Warn("server connection lost", "err", oneLine(snap.Err.Error()))
		s.announce(snap)
	}
}

func (s *server) close() error {
	s.mu.Lock()
	session := s.session
	s.session = nil
	var snap *ServerStatus
	if s.state != StateClosed {
		s.setStateLocked(StateClosed, nil)
		close(s.stop)
		s.endLife()
		st := s.statusLocked()
		snap = &st
	}
	idle := s.idle
	s.idle = nil
	supervised := s.supervised
	s.mu.Unlock()
	if snap != nil {
		s.announce(*snap)
	}
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
	// (a log line, a state event): after close, nothing more may come.
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
		err = s.closeSession(session)
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

// isBenignCloseErr reports whether err, from closing a session, says only
// that the connection or child ended, which is what closing is for: a child
// stopped by a signal or that exited, a pipe or connection already closed.
func isBenignCloseErr(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed)
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
