package transport

import (
	"context"
	"errors"
	"sync"
)

// SessionEnds ends the requests in flight of an MCP session before the
// session is closed.
//
// The go-sdk's ClientSession.Close and ServerSession.Close (v1.8.0) stop
// taking requests, then wait until every request the peer sent has been
// handled and every request sent to the peer has been answered, and only
// then close the connection. A handler that waits on someone else — a
// client asked for its roots on behalf of an upstream, a person asked a
// question — therefore holds Close, and whatever closes the session (a
// DELETE, a shutdown), for as long as that someone takes: forever, for a
// client that left. The go-sdk itself ends its subscriptions/listen
// handlers this way, and nothing else.
//
// Run each such request on the context [SessionEnds.Hold] returns, and call
// [SessionEnds.End] before closing the session: End cancels those contexts
// and refuses new ones, so that Close finds nothing left to wait for.
// Requests that are not the session's own but wait on its peer (a question
// forwarded to it) hold it the same way.
//
// S is the session's type (*mcp.ServerSession, *mcp.ClientSession). The
// zero value is not usable; make one with [NewSessionEnds].
type SessionEnds[S comparable] struct {
	parent context.Context

	mu       sync.Mutex
	sessions map[S]*sessionEnd
}

type sessionEnd struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	held   int  // Holds not yet released
	ended  bool // End was called
	closed bool // and the session has been closed since
}

// ErrSessionEnded is the error of [SessionEnds.Hold] for a session that is
// ending, and the cause of the contexts [SessionEnds.End] cancels unless
// it is given another.
var ErrSessionEnded = errors.New("the session has ended")

// NewSessionEnds returns a SessionEnds whose contexts also end with parent
// (a shutdown's, say).
func NewSessionEnds[S comparable](parent context.Context) *SessionEnds[S] {
	return &SessionEnds[S]{parent: parent, sessions: map[S]*sessionEnd{}}
}

// Hold returns a context that ends when s is ended (or the parent ends),
// for a request of s's or one that waits on s's peer; call release when
// that request is done. For a session that is ending it returns
// ErrSessionEnded, or End's cause, and a release that does nothing.
func (e *SessionEnds[S]) Hold(s S) (ctx context.Context, release func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	se := e.sessions[s]
	if se == nil {
		se = e.newLocked(s)
	}
	if se.ended {
		return nil, func() {}, context.Cause(se.ctx)
	}
	se.held++
	var once sync.Once
	return se.ctx, func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if se.held--; se.held == 0 && (!se.ended || se.closed) {
				e.forgetLocked(s, se)
			}
		})
	}, nil
}

// End cancels the contexts Hold returned for s, with cause (nil means
// ErrSessionEnded), and refuses new ones until closed is called. Call it
// before closing s, and closed once s is closed.
func (e *SessionEnds[S]) End(s S, cause error) (closed func()) {
	if cause == nil {
		cause = ErrSessionEnded
	}
	e.mu.Lock()
	se := e.sessions[s]
	if se == nil {
		se = e.newLocked(s)
	}
	se.ended = true
	e.mu.Unlock()
	se.cancel(cause)
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			se.closed = true
			if se.held == 0 {
				e.forgetLocked(s, se)
			}
		})
	}
}

func (e *SessionEnds[S]) newLocked(s S) *sessionEnd {
	ctx, cancel := context.WithCancelCause(e.parent)
	se := &sessionEnd{ctx: ctx, cancel: cancel}
	e.sessions[s] = se
	return se
}

func (e *SessionEnds[S]) forgetLocked(s S, se *sessionEnd) {
	if e.sessions[s] == se {
		delete(e.sessions, s)
	}
	se.cancel(nil) // releases the context; a cancelled one keeps its cause
}
