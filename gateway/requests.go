package gateway

// Requests in flight: counted and bounded (Options.MaxRequests), tied to
// their session, and ended by a shutdown.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/transport"
)

// ErrShuttingDown is the cause of the requests a shutdown cancels, and the
// error of requests that arrive during one.
var ErrShuttingDown = errors.New("switchboard is shutting down")

// codeShuttingDown is the JSON-RPC error code of a request refused during a
// shutdown: in the range JSON-RPC leaves to implementations.
const codeShuttingDown = -32001

// DefaultMaxRequests is the default [Options.MaxRequests]: four requests
// at once for each of DefaultMaxSessions sessions (a benchmark's client
// keeps 16 in flight on one), a few megabytes of goroutines, where an
// unbounded client could hold memory and upstream calls without end.
const DefaultMaxRequests = config.DefaultGatewayMaxRequests

// codeTooManyRequests is the JSON-RPC error code of a request refused past
// Options.MaxRequests.
const codeTooManyRequests = -32000

// Shutdown stops the gateway gracefully: requests that arrive from now on
// are refused with ErrShuttingDown, and those in flight get until ctx is
// done to finish. Then the ones left are cancelled with ErrShuttingDown as
// the cause, which cancels their upstream calls (the upstream gets
// notifications/cancelled), as are 2026-07-28 calls waiting for their
// client's input; Shutdown returns once they have returned, or after
// cancelledGrace more. It returns ctx's error if it had to cancel
// anything. Requests are what is counted, not connections: a call over
// legacy SSE or WebSocket, whose HTTP request is answered (or was
// upgraded) long before, gets the grace as well. Shutdown does not end
// sessions or stop the host; Close does, after.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.reqMu.Lock()
	g.shuttingDown = true
	idle := g.idleLocked()
	g.reqMu.Unlock()
	select {
	case <-idle:
		g.endRequests(ErrShuttingDown) // calls waiting for input
		return nil
	case <-ctx.Done():
	}
	g.endRequests(ErrShuttingDown)
	g.reqMu.Lock()
	idle = g.idleLocked()
	g.reqMu.Unlock()
	t := time.NewTimer(cancelledGrace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		g.log.Warn("shutdown: requests still running after they were cancelled", "after", cancelledGrace)
	}
	// The go-sdk (v1.8.0) sends a cancelled call's notifications/cancelled
	// from a goroutine of its own once the call has returned, and a go-sdk
	// server acts on one from another goroutine: closing the upstream
	// connections at once (Close, next) races both, and the upstream then
	// often learns of the end of its call from its connection closing
	// instead. Nothing signals that the notifications are out; give them
	// this pause, paid only when calls had to be cancelled.
	time.Sleep(cancelNotifyPause)
	return ctx.Err()
}

// cancelNotifyPause is how long Shutdown waits, after cancelling requests,
// for their notifications/cancelled to reach the upstreams (measured: 0 of
// 20 lost at 50 ms, 1 to 7 of 20 lost without it).
const cancelNotifyPause = 100 * time.Millisecond

// cancelledGrace bounds how long Shutdown waits for the requests it
// cancelled to return; every handler of the gateway's honours its context
// at once, so this only bounds a bug.
const cancelledGrace = time.Second

// idleLocked returns a channel closed when no request is in flight.
func (g *Gateway) idleLocked() <-chan struct{} {
	if g.inflight == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	return g.idle
}

// requestMiddleware counts the downstream requests in flight, refuses new
// ones during a shutdown, and runs each on a context that ends when its
// session is ended (g.ends: deleted by its client, closed to make room) or
// the shutdown's grace is over (or at Close): the session's own context
// for a request lasts as long as its handler, and a session closes only
// when its handlers have returned.
func (g *Gateway) requestMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		// A subscriptions/listen request is a stream that lasts until its
		// client ends it: not a request to wait for.
		counted := method != "subscriptions/listen"
		if counted {
			g.reqMu.Lock()
			if g.shuttingDown {
				g.reqMu.Unlock()
				return nil, &jsonrpc.Error{Code: codeShuttingDown, Message: ErrShuttingDown.Error()}
			}
			if g.inflight >= g.opts.MaxRequests {
				g.reqMu.Unlock()
				return nil, &jsonrpc.Error{Code: codeTooManyRequests, Message: fmt.Sprintf(
					"too many requests: %d requests in flight already, the bound ([gateway] max_requests); retry when one has ended", g.opts.MaxRequests)}
			}
			g.inflight++
			g.reqMu.Unlock()
			defer g.endRequest()
		}
		life := g.requests
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			sctx, release, err := g.ends.Hold(ss)
			if err != nil {
				return nil, errSessionEnded
			}
			defer release()
			life = sctx
		}
		ctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(life, func() { cancel(context.Cause(life)) })
		defer stop()
		defer cancel(nil)
		res, err := next(ctx, method, req)
		if err != nil {
			// Say why, rather than a bare "context canceled".
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, ErrShuttingDown):
				return nil, &jsonrpc.Error{Code: codeShuttingDown, Message: ErrShuttingDown.Error() + ": the request was cancelled when the shutdown grace period ended"}
			case errors.Is(cause, transport.ErrSessionEnded):
				return nil, errSessionEnded
			}
		}
		return res, err
	}
}

// errSessionEnded is the error of a request cancelled, or refused, because
// its session ended (its client deleted it, or it was closed to make room).
// Its client hardly hears it: the session is gone.
var errSessionEnded = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the request's session has ended (deleted by its client, or closed); the request was cancelled"}

// endSession ends ss's requests, and the questions forwarded to its
// client, then closes it.
func (g *Gateway) endSession(ss *mcp.ServerSession) {
	closed := g.ends.End(ss, nil)
	defer closed()
	ss.Close()
}

func (g *Gateway) endRequest() {
	g.reqMu.Lock()
	defer g.reqMu.Unlock()
	if g.inflight--; g.inflight == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}
