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
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/transport"
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
	var snap *ServerStatus
	if s.state != StateClosed {
		s.setStateLocked(StateClosed, nil)
		close(s.stop)
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
