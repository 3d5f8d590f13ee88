package gateway

// Calls: a client's tools/call forwarded to the host, with the questions
// an upstream asks during it put to the calling client (2025-11-25 and
// older; input.go bridges 2026-07-28 clients).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
)

// MetaKeyTimeout is the _meta key of a tools/call that bounds the call by
// its own timeout instead of its server's (host.CallOptions.Timeout), as a
// number of milliseconds: `switchboard call --timeout` through a serve. It
// is honoured only on a handler made with HTTPOptions.Local (the daemon's
// owner-only socket): over the network the operator's timeouts stand.
const MetaKeyTimeout = "switchboard/timeout_ms"

// localTimeout is the call's own timeout, when it asks for one and came
// through a Local handler.
func localTimeout(req *mcp.CallToolRequest) (time.Duration, bool) {
	if req.Extra == nil || req.Extra.Header.Get(guard.LocalHeader) == "" {
		return 0, false
	}
	ms, ok := req.Params.GetMeta()[MetaKeyTimeout].(float64)
	if !ok || ms <= 0 || ms > float64(maxLocalTimeout/time.Millisecond) {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// maxLocalTimeout bounds a call's own timeout: a day, far beyond any call
// a person waits for, short of a duration's overflow.
const maxLocalTimeout = 24 * time.Hour

// MetaKeyError is the _meta key of a tool result the gateway made from a
// call that failed on the way (invalid arguments, a timeout, a server
// unavailable) rather than in the tool: its value is the error as a
// [host.ErrorJSON], which host.ErrorJSON.Err turns back into the error the
// host returned.
const MetaKeyError = "switchboard/error"

// callTool forwards a downstream tools/call to the host.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// A 2026-07-28 client sets its log level per request.
	if level, ok := req.Params.GetMeta()[mcp.MetaKeyLogLevel].(string); ok {
		g.wantLogLevel(ctx, mcp.LoggingLevel(level))
	}
	if newGeneration(req.ProtocolVersion()) {
		return g.callToolInput(ctx, req)
	}
	opts, withdraw := g.directAsk(ctx, req)
	res, err := g.forward(ctx, req, opts, nil)
	withdraw()
	return res, err
}

// newGeneration reports whether a request's protocol version (as the SDK
// reports it; "" for a sessionless request without one) is 2026-07-28 or
// later, where the server asks for input with an input-required result.
func newGeneration(v string) bool { return v == "" || v >= host.InputRequiredVersion }

// forward makes the upstream call with the given per-call handlers. Its
// notifications go through q; nil means a queue to the calling request,
// flushed before the result is returned.
func (g *Gateway) forward(ctx context.Context, req *mcp.CallToolRequest, opts *host.CallOptions, q *notifyQueue) (*mcp.CallToolResult, error) {
	if q == nil {
		q = newNotifyQueue(func() (context.Context, *mcp.ServerSession) { return ctx, req.Session })
		// Notifications must reach the client before the result does.
		defer q.close()
	}
	if token := req.Params.GetProgressToken(); token != nil {
		opts.Progress = func(p *mcp.ProgressNotificationParams) {
			c := *p
			c.ProgressToken = token
			q.push(func(ctx context.Context, ss *mcp.ServerSession) {
				if ss != nil {
					ss.NotifyProgress(ctx, &c)
				}
			})
		}
	}
	opts.Log = func(server string, p *mcp.LoggingMessageParams) {
		q.push(func(ctx context.Context, ss *mcp.ServerSession) {
			if ss != nil {
				ss.Log(ctx, p)
			}
		})
	}
	opts.PassThrough = true
	opts.Caller, opts.IdempotencyKey = callerOf(ctx, req), idempotencyKey(req)
	if d, ok := localTimeout(req); ok {
		opts.Timeout = d
	}
	res, err := g.h.CallTool(ctx, req.Params.Name, req.Params.Arguments, opts)
	return callOutcome(ctx, res, err)
}

// callOutcome is a host call's outcome as the gateway answers it.
func callOutcome(ctx context.Context, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		var je *jsonrpc.Error
		switch {
		case errors.Is(err, host.ErrOlderGeneration):
			return nil, err
		case errors.As(err, &je) && ctx.Err() == nil:
			// The upstream refused the request: the client gets its
			// protocol error, as it would directly.
			return nil, je
		}
		var ce *host.CallError
		if errors.As(err, &ce) && ctx.Err() == nil {
			// The call failed on the way (invalid arguments, timeout, a lost
			// server): tell the model, which can correct itself, as a tool
			// error rather than a protocol error, and a client that knows
			// (the CLI over the daemon's socket) what the error was.
			r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}},
				Meta: mcp.Meta{MetaKeyError: host.NewErrorJSON(err)}}
			return r, nil
		}
		return nil, err
	}
	return res, nil
}

// directAsk forwards upstream requests made during the call straight to a
// 2025-11-25 (or older) client, on the call's own context. An upstream that
// cancels its request has it cancelled downstream (the go-sdk sends the
// client notifications/cancelled). withdraw, called once the upstream call
// has returned, cancels the questions still open downstream and waits until
// each has returned: an upstream that answers its call has given up its
// questions, and the client should hear of that before the answer ends the
// call's stream. That is best effort: the go-sdk (v1.8.0) sends the
// cancellation from a goroutine of its own, which the answer can overtake
// (the yield below makes that rarer; then the client's question stays open
// until it answers, and the answer is dropped).
func (g *Gateway) directAsk(callCtx context.Context, req *mcp.CallToolRequest) (opts *host.CallOptions, withdraw func()) {
	ss := req.Session
	var (
		mu         sync.Mutex
		open       sync.WaitGroup
		withdrawn  bool
		asksCtx    context.Context // made by the first question: most calls ask none
		cancelAsks context.CancelFunc
	)
	// ask runs one question to the client, ended by the upstream's
	// cancellation (ctx) or by withdraw.
	ask := func(ctx context.Context, do func(context.Context) error) error {
		mu.Lock()
		if withdrawn {
			mu.Unlock()
			return errors.New("the call this question belongs to has ended")
		}
		if asksCtx == nil {
			asksCtx, cancelAsks = context.WithCancel(callCtx)
		}
		parent := asksCtx
		open.Add(1)
		mu.Unlock()
		defer open.Done()
		c, cancel := context.WithCancel(parent)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		return do(c)
	}
	// A question goes down only if the client declared the capability it
	// needs; otherwise the upstream gets the answer a client without it
	// gives, method not found (the go-sdk would send it regardless).
	caps := req.ClientCapabilities()
	opts = &host.CallOptions{
		Client: ss, // roots are the session's: its parallel calls are one answer
		Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (r *mcp.ElicitResult, err error) {
			if caps == nil || caps.Elicitation == nil {
				return nil, notDeclared("elicitation/create", "elicitation")
			}
			err = ask(ctx, func(c context.Context) (err error) { r, err = ss.Elicit(c, p); return err })
			return r, err
		},
		Sampling: func(ctx context.Context, server string, p *mcp.CreateMessageParams) (r *mcp.CreateMessageResult, err error) {
			if caps == nil || caps.Sampling == nil {
				return nil, notDeclared("sampling/createMessage", "sampling")
			}
			err = ask(ctx, func(c context.Context) (err error) { r, err = ss.CreateMessage(c, p); return err })
			return r, err
		},
		// Roots are the session's, not the call's, and a client answers from
		// what it has, at once: the question is not withdrawn with the call
		// (the host may ask through any call of this session, see
		// host.CallOptions.Client), only with the upstream's own request.
		// It ends, though, with the session (or the shutdown's grace),
		// like the session's own requests: a session that is closed waits
		// for the questions put to its client.
		Roots: func(ctx context.Context, server string) (*mcp.ListRootsResult, error) {
			if caps == nil || caps.RootsV2 == nil {
				return nil, notDeclared("roots/list", "roots")
			}
			life, release, err := g.ends.Hold(ss)
			if err != nil {
				return nil, fmt.Errorf("roots/list: the client's session has ended")
			}
			defer release()
			ctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			stop := context.AfterFunc(life, func() { cancel(context.Cause(life)) })
			defer stop()
			return ss.ListRoots(ctx, &mcp.ListRootsParams{})
		},
	}
	return opts, func() {
		mu.Lock()
		withdrawn = true
		cancel := cancelAsks
		mu.Unlock()
		if cancel == nil {
			return // no question was asked
		}
		cancel()
		open.Wait()
		// Not a wait on a signal: the go-sdk (v1.8.0) sends the
		// questions' notifications/cancelled from goroutines of its own
		// and says nothing when they are out. A yield lets them go
		// before the answer, usually (see above).
		runtime.Gosched()
	}
}

// newID returns an unguessable id.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// notDeclared is the error an upstream gets for a request its calling
// client cannot answer: JSON-RPC "method not found", what a client without
// the capability answers (the TypeScript SDK's does; a bare error would
// reach the upstream with code 0).
func notDeclared(method, capability string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("%s: the client of this call (through switchboard's gateway) did not declare the %s capability", method, capability)}
}
