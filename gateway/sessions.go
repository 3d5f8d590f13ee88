package gateway

import (
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/clientaddr"
	"github.com/switchboardmcp/switchboard/config"
)

// DefaultMaxSessions is the default [HTTPOptions.MaxSessions]. A
// 2025-11-25 session with its GET stream open costs the gateway about
// 57 KiB (docs/performance.md, "Idle sessions"), and `switchboard serve`
// runs with GOGC=400, so 256 of them come to ≈ 15 MB live and up to ≈ 75 MB
// of heap: far more clients than one person's tools open, enough for a
// team behind one gateway, and no more memory than a browser tab.
const DefaultMaxSessions = config.DefaultGatewayMaxSessions

// DefaultMaxClientSessions is the default [HTTPOptions.MaxClientSessions]:
// a quarter of the default MaxSessions, so that no one client address can
// hold every session. On loopback every local client has the same
// address, and this is what they hold together.
const DefaultMaxClientSessions = config.DefaultGatewayMaxClientSessions

// codeTooManySessions is the JSON-RPC error code of an answer refusing a
// new session: in the range JSON-RPC leaves to implementations.
const codeTooManySessions = -32000

// sessionLimits counts the downstream sessions an HTTP handler holds, in
// all and per client address, and makes room for a new one by closing the
// longest-idle Streamable HTTP session when a limit is reached.
//
// What is counted: Streamable HTTP sessions (from the initialize that
// created them until they are deleted, expire, or are closed), and streams
// that are sessions in all but name: legacy SSE sessions and WebSocket
// connections (for as long as their GET is open) and 2026-07-28
// subscriptions/listen requests. Only Streamable HTTP sessions can be
// idle: no request of theirs in flight, not even a GET stream. The others
// are open connections by definition, and end when their client hangs up.
type sessionLimits struct {
	sessions  func() iter.Seq[*mcp.ServerSession] // every session the limits hold
	max       int
	perClient int
	log       func(msg string, args ...any)
	closeSS   func(*mcp.ServerSession) // ends a session's requests and closes it (Gateway.endSession)

	mu      sync.Mutex
	tracked map[string]*trackedSession // Streamable HTTP sessions by id
	held    map[string]int             // sessions (tracked, streams, reserved) per client
	total   int
	// evicted are the sessions closed to make room whose closing (on a
	// goroutine of its own) may not have finished: their requests get 404
	// at once, as the spec says a closed session's do.
	evicted map[string]bool
}

type trackedSession struct {
	id, client string
	user       string    // the OAuth user it belongs to, as the go-sdk binds it; "" for none
	active     int       // requests of this session in flight
	last       time.Time // when the last one ended (or began)
}

func newSessionLimits(sessions func() iter.Seq[*mcp.ServerSession], max, perClient int, log func(string, ...any), closeSS func(*mcp.ServerSession)) *sessionLimits {
	return &sessionLimits{sessions: sessions, max: max, perClient: perClient, log: log, closeSS: closeSS,
		tracked: map[string]*trackedSession{}, held: map[string]int{}, evicted: map[string]bool{}}
}

// limitError is a refused new session: the HTTP status and the message of
// the JSON-RPC error that say so.
type limitError struct {
	status int
	msg    string
}

// reserve takes a place for a new session of client. At a limit it
// closes the client's own longest-idle Streamable HTTP session, else (at
// max_sessions only) the longest-idle one of any client; when none is
// idle it refuses. Release the place with release, or make it a tracked
// session with track.
func (l *sessionLimits) reserve(client string) *limitError {
	l.mu.Lock()
	defer l.mu.Unlock()
	pruned := false
	for {
		overAll, overMine := l.total >= l.max, l.held[client] >= l.perClient
		if !overAll && !overMine {
			break
		}
		if !pruned {
			// Sessions end without us: the SDK's idle timeout, a failed
			// initialize. Forget those before closing anything.
			l.pruneLocked()
			pruned = true
			continue
		}
		victim := l.idlestLocked(client, true)
		if victim == nil && !overMine {
			victim = l.idlestLocked(client, false)
		}
		if victim == nil {
			if overAll {
				return &limitError{http.StatusServiceUnavailable, fmt.Sprintf(
					"too many sessions: %d open, the most [gateway] max_sessions allows, and none idle; try again later", l.max)}
			}
			return &limitError{http.StatusTooManyRequests, fmt.Sprintf(
				"too many sessions: this client (%s) holds %d, the most [gateway] max_client_sessions allows, and none idle; end one (DELETE it) or try again later", client, l.perClient)}
		}
		l.log("closing the longest-idle session to make room for a new one",
			"client", victim.client, "idle", time.Since(victim.last).Round(time.Second), "new_client", client)
		l.dropLocked(victim.id)
		l.evicted[victim.id] = true
		l.closeSession(victim.id)
	}
	l.held[client]++
	l.total++
	return nil
}

// release gives back a place taken by reserve and not tracked.
func (l *sessionLimits) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(client)
}

func (l *sessionLimits) releaseLocked(client string) {
	l.total--
	if l.held[client]--; l.held[client] <= 0 {
		delete(l.held, client)
	}
}

// track makes a reserved place the Streamable HTTP session id of user (""
// for none), with one request (its initialize) in flight; end that request
// with done.
func (l *sessionLimits) track(client, id, user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.tracked[id]; dup {
		l.releaseLocked(client)
		return
	}
	l.tracked[id] = &trackedSession{id: id, client: client, user: user, active: 1, last: time.Now()}
}

// owns reports whether user may end session id: the go-sdk's rule for a
// DELETE (a session made without a user may be deleted by anyone who
// knows its id).
func (l *sessionLimits) owns(id, user string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.tracked[id]
	return s != nil && (s.user == "" || s.user == user)
}

// begin records a request of session id in flight; the returned func ends
// it. A session the limits do not know (an unknown or expired id, which
// the SDK answers with 404) records nothing.
func (l *sessionLimits) begin(id string) (end func()) {
	l.mu.Lock()
	s := l.tracked[id]
	if s != nil {
		s.active++
		s.last = time.Now()
	}
	l.mu.Unlock()
	if s == nil {
		return func() {}
	}
	return func() { l.endSession(s) }
}

// end ends the request of session id that track counted.
func (l *sessionLimits) end(id string) {
	l.mu.Lock()
	s := l.tracked[id]
	l.mu.Unlock()
	if s != nil {
		l.endSession(s)
	}
}

func (l *sessionLimits) endSession(s *trackedSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.active--
	s.last = time.Now()
}

// forget stops counting session id (deleted by its client, or never
// initialized).
func (l *sessionLimits) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropLocked(id)
}

func (l *sessionLimits) dropLocked(id string) {
	if s := l.tracked[id]; s != nil {
		delete(l.tracked, id)
		l.releaseLocked(s.client)
	}
}

// pruneLocked forgets tracked sessions that have ended.
func (l *sessionLimits) pruneLocked() {
	live := make(map[string]bool, len(l.tracked))
	for ss := range l.sessions() {
		if id := ss.ID(); id != "" {
			live[id] = true
		}
	}
	for id := range l.tracked {
		if !live[id] {
			l.dropLocked(id)
		}
	}
	for id := range l.evicted {
		if !live[id] {
			delete(l.evicted, id) // closed: the SDK answers 404 itself now
		}
	}
}

// gone reports whether session id was closed to make room (its requests
// get 404 even while its closing finishes).
func (l *sessionLimits) gone(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted[id]
}

// idlestLocked is the tracked session idle the longest (of client only, if
// mine), or nil when none is idle.
func (l *sessionLimits) idlestLocked(client string, mine bool) *trackedSession {
	var v *trackedSession
	for _, s := range l.tracked {
		if s.active > 0 || (mine && s.client != client) {
			continue
		}
		if v == nil || s.last.Before(v.last) {
			v = s
		}
	}
	return v
}

// closeSession closes the server session id. Its client learns of it at
// its next request (404: the spec tells it to initialize again). Closing
// ends what the session still waits on (a question put to its client, a
// call whose client hung up) first, on a goroutine of its own.
func (l *sessionLimits) closeSession(id string) {
	for ss := range l.sessions() {
		if ss.ID() == id {
			go l.closeSS(ss)
			return
		}
	}
}

// limitStreams counts each GET through h (a legacy SSE session, a
// WebSocket connection) as a session for as long as it is open.
func (l *sessionLimits) limitStreams(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		client := clientOf(r)
		if err := l.reserve(client); err != nil {
			refuseSession(w, err, jsonrpc.ID{})
			return
		}
		defer l.release(client)
		h.ServeHTTP(w, r)
	})
}

// refuseSession answers a request for a new session over the limits: the
// status (503 or 429) with Retry-After, and a JSON-RPC error saying which
// limit and what it is.
func refuseSession(w http.ResponseWriter, err *limitError, id jsonrpc.ID) {
	w.Header().Set("Retry-After", strconv.Itoa(60))
	writeJSONRPCError(w, err.status, id, &jsonrpc.Error{Code: codeTooManySessions, Message: err.msg})
}

// writeJSONRPCError answers with a JSON-RPC error as the whole body.
func writeJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: e})
	if err != nil {
		http.Error(w, e.Message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

// clientOf is the address a request's sessions are counted under: the
// client's, behind the proxies [gateway] trusted_proxies lists
// (clientaddr.Key).
func clientOf(r *http.Request) string { return clientaddr.Key(r) }
