package host

// A server's state: the states, the status a caller sees, and the one
// place a state changes and is announced.

import (
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardmcp/switchboard/config"
)

// State is a server's connection state.
type State string

// The states of a server.
const (
	StateConnecting State = "connecting" // starting, or connecting again
	// StateInstalling: starting through a package runner (npx, uvx, pipx
	// run, …) that is still fetching or installing the server, which has
	// not begun to read; ServerStatus.Detail says which runner installs
	// which package. connect_timeout waits; install_timeout bounds it.
	StateInstalling State = "installing"
	StateReady      State = "ready"      // connected and listed
	StateDegraded   State = "degraded"   // connected, but missed a health ping
	StateRestarting State = "restarting" // lost; being reconnected
	StateLazy       State = "lazy-idle"  // lazy, not started; its cached tools are offered
	StateFailed     State = "failed"     // could not start, or failed too often; left alone
	StateClosed     State = "closed"     // the host was closed
)

// ServerStatus describes one server.
type ServerStatus struct {
	ID          string
	Description string // from the configuration
	Transport   config.Transport
	State       State
	// Detail says what a server that is starting is doing, when the host
	// can tell: "npx is installing @modelcontextprotocol/server-memory"
	// while StateInstalling; "" otherwise.
	Detail   string
	Optional bool
	// ServerInfo, ProtocolVersion and Instructions are what the server
	// announced (serverInfo and instructions cleaned and bounded).
	ServerInfo      *mcp.Implementation
	ProtocolVersion string
	Instructions    string
	// Tools is how many of the server's tools the host offers.
	Tools int
	// Skipped lists the server's tools the host does not offer, and why.
	Skipped []Skipped
	// Warnings are problems that did not stop the server: an allowlisted
	// tool the server does not have, what the host cleaned in what the
	// server declared (a description cut, invisible characters removed; a
	// listing's last word), lines on its stdout that were not messages.
	Warnings []string
	// Findings are the signs of poisoning the host found in the
	// definitions of the server's tools, and of the prompts, resources and
	// resource templates it last listed (scan.go), and what it did: warned,
	// held or dropped (the server's scan setting). At most 100.
	Findings []ToolFinding
	// Err is why the server failed, when it did.
	Err error
	// LastError is the last error the server had, kept after it recovered.
	LastError error
	// Restarts counts reconnections after the first start.
	Restarts int
	// LastHealthy is when the server last connected or answered a ping.
	LastHealthy time.Time
	// ReadySince is when the server last became usable (ready or
	// degraded), while it is; zero otherwise. Its uptime is time.Since.
	ReadySince time.Time
	// InFlight is how many calls are waiting for the server now.
	InFlight int
	// PID is the stdio child's process id while it runs.
	PID int
	// Isolation is how the stdio child is contained while it runs
	// (transport.Isolation's name): "PID namespace, private /proc" where
	// the kernel allows it; with less, a server can read the environment of
	// other processes of its user (docs/security.md).
	Isolation string
}

// FailedToStart reports whether the server is failed (it could not start,
// or failed too often and is left alone), or has never been up and its
// attempts so far failed (an optional server that failed at the start
// and is being tried again): a run that begins now goes without its
// tools. RobotLab calls these failed_mcp_server_names.
func (st ServerStatus) FailedToStart() bool {
	switch st.State {
	case StateFailed:
		return true
	case StateReady, StateDegraded, StateLazy, StateClosed:
		return false
	}
	return st.LastHealthy.IsZero() && st.LastError != nil
}

// StateEvent is the JSON form of a server:state event.
type StateEvent struct {
	Type        string    `json:"type"` // "server:state"
	Time        time.Time `json:"time"`
	Server      string    `json:"server"`
	State       State     `json:"state"`
	Detail      string    `json:"detail,omitempty"`
	Restarts    int       `json:"restarts"`
	Tools       int       `json:"tools"`
	InFlight    int       `json:"in_flight"`
	Error       string    `json:"error,omitempty"`
	LastError   string    `json:"last_error,omitempty"`
	LastHealthy time.Time `json:"last_healthy,omitzero"`
}

// Event is the server:state event for this status, as of now.
func (st ServerStatus) Event() StateEvent {
	e := StateEvent{Type: "server:state", Time: time.Now().UTC(), Server: st.ID, State: st.State, Detail: st.Detail,
		Restarts: st.Restarts, Tools: st.Tools, InFlight: st.InFlight, LastHealthy: st.LastHealthy}
	if st.Err != nil {
		e.Error = st.Err.Error()
	}
	if st.LastError != nil {
		e.LastError = st.LastError.Error()
	}
	return e
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

// announce publishes st (EventState), a snapshot taken when the state
// changed: read again later, the state may already be another one, and the
// change would never be announced.
func (s *server) announce(st ServerStatus) {
	s.h.events.publish(Event{Kind: EventState, Server: st.ID, Status: s.withTools(st)})
}

// setStateLocked changes the state, keeping readyCh closed exactly while
// the server is usable. s.mu is held.
func (s *server) setStateLocked(st State, err error) {
	err = s.h.redactErr(err) // it reaches events, logs and every face
	usable := func(st State) bool { return st == StateReady || st == StateDegraded }
	s.noteIncident(s.state, st, err)
	if usable(st) && !usable(s.state) {
		close(s.readyCh)
		s.readySince = time.Now()
		if s.reconnecting {
			s.reconnecting = false
			s.restarts++
			s.hist.incident(Incident{Kind: IncidentRestarted, Reason: fmt.Sprintf("restart %d", s.restarts)})
		}
	} else if !usable(st) && usable(s.state) {
		s.readyCh = make(chan struct{})
		s.readySince = time.Time{}
	}
	s.state = st
	if st != StateInstalling {
		s.detail = ""
	}
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
		Detail:      s.detail,
		Optional:    s.cfg.Optional,
		Err:         s.err,
		LastError:   s.lastErr,
		Restarts:    s.restarts,
		LastHealthy: s.lastHealthy,
		ReadySince:  s.readySince,
		InFlight:    len(s.inflight),
		PID:         s.pid,
		Isolation:   s.iso,
		Warnings:    s.warningsLocked(),
		Findings:    s.findingsLocked(),
	}
	if s.info != nil {
		st.ServerInfo = s.info.ServerInfo
		st.ProtocolVersion = s.info.ProtocolVersion
		st.Instructions = s.info.Instructions
	}
	return st
}
