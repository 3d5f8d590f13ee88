package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// A 2026-07-28 client is not sent requests during a call: the server answers
// the call with an input-required result (inputRequests plus an opaque
// requestState) and the client retries the call with its inputResponses.
// Upstream servers, though, ask during the call and wait. A pendingCall
// bridges the two: the upstream call runs on the gateway's context, each
// question it asks ends the current downstream round with an input-required
// result, and the retry carrying the answers resumes it. The requestState
// names an unguessable id and the replica holding the call, signed
// (replicas.go), and is bound to the downstream session where there is one
// (a client served statelessly over Streamable HTTP has none: each of its
// requests is its own, and its retry may reach another replica, which
// forwards it here).
//
// The upstream call's progress and log notifications go to the round in
// flight, in the context of its request (a stateless request can carry
// nothing else); between rounds there is no request to carry them, and
// they are dropped.
type pendingCall struct {
	id      string
	state   string             // the requestState naming it (issueState)
	session *mcp.ServerSession // nil for a sessionless client
	ctx     context.Context    // the upstream call's: ends with it (cancel, InputTimeout, the shutdown)
	cancel  context.CancelFunc // ends the upstream call
	asks    chan *ask          // questions from the upstream call
	done    chan struct{}      // closed with res/err set
	res     *mcp.CallToolResult
	err     error
	notify  *notifyQueue

	dropOnce sync.Once
	dropped  chan struct{} // closed by drop: the call is no longer findable
	waiting  bool          // counted in Gateway.waiting; guarded by the Gateway's mu

	mu          sync.Mutex
	outstanding map[string]*ask // asked downstream, not yet answered
	timer       *time.Timer     // ends a call whose client never comes back
	roundCtx    context.Context // the request of the round in flight
	roundSS     *mcp.ServerSession
	// upstreamTask is the upstream's own task the call follows, "" none;
	// task the gateway's task the call became, nil none (tasks.go).
	upstreamTask string
	task         *taskRun
}

// enter makes ctx and ss the round in flight; the returned func ends it.
func (p *pendingCall) enter(ctx context.Context, ss *mcp.ServerSession) (leave func()) {
	p.mu.Lock()
	p.roundCtx, p.roundSS = ctx, ss
	p.mu.Unlock()
	return func() {
		p.notify.flush(ctx)
		p.mu.Lock()
		if p.roundSS == ss && p.roundCtx == ctx {
			p.roundCtx, p.roundSS = nil, nil
		}
		p.mu.Unlock()
	}
}

func (p *pendingCall) round() (context.Context, *mcp.ServerSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.roundCtx, p.roundSS
}

type ask struct {
	key   string
	req   mcp.InputRequest
	reply chan answer
}

type answer struct {
	resp mcp.InputResponse
	err  error
}

// callToolInput serves a tools/call from a 2026-07-28 client. An upstream
// that speaks 2026-07-28 too is called on a connection of that generation,
// and its input-required results pass through as they are: its questions,
// their keys and its requestState reach the client, whose retry goes back
// up unchanged, with the client's own capabilities in _meta. An older
// upstream is bridged by a pendingCall.
func (g *Gateway) callToolInput(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	state := req.Params.RequestState
	tc := taskCallOf(ctx)
	if tc != nil && tc.run {
		return g.startRunTask(ctx, req, tc)
	}
	if state == "" && tc == nil {
		// A call that may become a task is always bridged (tasks.go): its
		// upstream asks during the call, whatever its generation.

		res, err := g.forwardInputRequired(ctx, req)
		if !errors.Is(err, host.ErrOlderGeneration) {
			return res, err
		}
	} else if state != "" {
		st, ours := g.openState(state)
		if !ours {
			// Not the gateway's: the upstream's own requestState (a forged
			// one goes there too, and is the upstream's to refuse).
			res, err := g.forwardInputRequired(ctx, req)
			if errors.Is(err, host.ErrOlderGeneration) {
				return nil, fmt.Errorf("requestState is unknown or expired; call the tool again")
			}
			return res, err
		}
		if st.Replica != g.opts.Replica {
			// Over Streamable HTTP it was forwarded (replicas.go) unless
			// the gateway knows no peers; a forwarded request that
			// reached another process than the one meant ends here too.
			return nil, fmt.Errorf("requestState belongs to a call held by gateway replica %q, not this one (%q); call the tool again", st.Replica, g.opts.Replica)
		}
		g.mu.Lock()
		p := g.pending[st.Call]
		g.mu.Unlock()
		if p == nil || p.session != boundSession(ctx, req) {
			return nil, fmt.Errorf("requestState is unknown or expired; call the tool again")
		}
		defer p.enter(ctx, req.Session)()
		p.mu.Lock()
		for key, resp := range req.Params.InputResponses {
			if a := p.outstanding[key]; a != nil {
				delete(p.outstanding, key)
				a.reply <- answer{resp: resp}
			}
		}
		p.mu.Unlock()
		return g.await(ctx, p, tc)
	}

	caps := req.ClientCapabilities()
	// The upstream call outlives this request (the client comes back with
	// its input), so it lives on the gateway's, until a shutdown's grace
	// is over; it keeps the request's values (its endpoint, for rules
	// scoped to one, and its caller) without its end.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopWithGateway := context.AfterFunc(g.requests, cancel)
	id := newID()
	p := &pendingCall{
		id:          id,
		state:       g.issueState(id),
		session:     boundSession(ctx, req),
		ctx:         cctx,
		cancel:      cancel,
		asks:        make(chan *ask),
		done:        make(chan struct{}),
		dropped:     make(chan struct{}),
		outstanding: map[string]*ask{},
	}
	p.notify = newNotifyQueue(p.round)
	defer p.enter(ctx, req.Session)()
	p.timer = time.AfterFunc(g.opts.InputTimeout, cancel)
	g.mu.Lock()
	g.pending[p.id] = p
	g.mu.Unlock()

	opts := &host.CallOptions{
		OnTask: func(server string, t host.UpstreamTask) { g.noteUpstreamTask(p, t.TaskID) },
		Elicitation: func(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if caps == nil || caps.Elicitation == nil {
				return nil, notDeclared("elicitation/create", "elicitation")
			}
			if err := g.wait(p); err != nil {
				return nil, err
			}
			resp, err := p.ask(ctx, params)
			if err != nil {
				return nil, err
			}
			r, ok := resp.(*mcp.ElicitResult)
			if !ok {
				return nil, fmt.Errorf("elicitation: the client answered with %T", resp)
			}
			return r, nil
		},
		Sampling: func(ctx context.Context, server string, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			if caps == nil || caps.Sampling == nil {
				return nil, notDeclared("sampling/createMessage", "sampling")
			}
			if err := g.wait(p); err != nil {
				return nil, err
			}
			resp, err := p.ask(ctx, params)
			if err != nil {
				return nil, err
			}
			switch r := resp.(type) {
			case *mcp.CreateMessageResult:
				return r, nil
			case *mcp.CreateMessageWithToolsResult:
				// The SDK decodes every sampling answer in the tools
				// form; the upstream asked without tools, so one block.
				if len(r.Content) != 1 {
					return nil, fmt.Errorf("sampling: the client answered with %d content blocks, want 1", len(r.Content))
				}
				return &mcp.CreateMessageResult{Meta: r.Meta, Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
			}
			return nil, fmt.Errorf("sampling: the client answered with %T", resp)
		},
		Roots: func(ctx context.Context, server string) (*mcp.ListRootsResult, error) {
			if caps == nil || caps.RootsV2 == nil {
				return nil, notDeclared("roots/list", "roots")
			}
			if err := g.wait(p); err != nil {
				return nil, err
			}
			resp, err := p.ask(ctx, &mcp.ListRootsParams{})
			if err != nil {
				return nil, err
			}
			r, ok := resp.(*mcp.ListRootsResult)
			if !ok {
				return nil, fmt.Errorf("roots: the client answered with %T", resp)
			}
			return r, nil
		},
	}
	if tc != nil {
		// A task outlives the server's per-call timeout: its TTL bounds it
		// (tasks.go cancels the call then), this only in case.
		opts.Timeout = g.opts.TaskTTL + time.Minute
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		p.res, p.err = g.forward(cctx, req, opts, p.notify)
		stopWithGateway()
		p.notify.close() // sends what is queued to the round in flight
		close(p.done)
		p.timer.Stop() // the call has ended: nothing left to cancel
		// Keep the outcome for a client that comes back late, within
		// bounds, unless it has collected it already. (p.timer was made
		// by AfterFunc: its channel is nil, and waiting on it leaked this
		// goroutine and the call until the gateway closed.)
		keep := time.NewTimer(g.opts.InputTimeout)
		defer keep.Stop()
		select {
		case <-keep.C:
		case <-p.dropped:
		case <-g.ctx.Done():
		}
		g.drop(p)
	}()
	return g.await(ctx, p, tc)
}

// forwardInputRequired makes a 2026-07-28 client's call on the upstream's
// connection of that generation (host.ErrOlderGeneration when it has none).
func (g *Gateway) forwardInputRequired(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := req.Params
	opts := &host.CallOptions{RequestOptions: *inputOptions(p.InputResponses, p.RequestState, p.GetMeta())}
	return g.forward(ctx, req, opts, nil)
}

// inputOptions are the options of a 2026-07-28 client's request.
func inputOptions(responses mcp.InputResponseMap, state string, meta map[string]any) *host.RequestOptions {
	return &host.RequestOptions{InputRequired: true, InputResponses: responses, RequestState: state, Meta: clientMeta(meta)}
}

// clientMeta is what of a 2026-07-28 request's _meta describes the client
// and goes upstream with it: its capabilities, so that the upstream asks it
// only what it can answer, and the log level it wants for this request.
//
// The tasks extension is left out of the capabilities: the client's
// declaration is for the gateway's tasks, not the upstream's. The host
// declares it itself on a call whose upstream task it will follow
// (host/task.go).
func clientMeta(m map[string]any) mcp.Meta {
	var out mcp.Meta
	for _, k := range []string{mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel} {
		if v, ok := m[k]; ok {
			if out == nil {
				out = mcp.Meta{}
			}
			if k == mcp.MetaKeyClientCapabilities {
				v = withoutExtension(v, TasksExtension)
			}
			out[k] = v
		}
	}
	return out
}

// TasksExtension is the MCP tasks extension's identifier (SEP-2663).
const TasksExtension = host.TasksExtension

// withoutExtension is client capabilities caps (as a request's _meta
// holds them) without extension ext; caps itself is not changed.
func withoutExtension(caps any, ext string) any {
	c, ok := caps.(map[string]any)
	if !ok {
		return caps
	}
	exts, ok := c["extensions"].(map[string]any)
	if !ok {
		return caps
	}
	if _, ok := exts[ext]; !ok {
		return caps
	}
	out := maps.Clone(c)
	exts = maps.Clone(exts)
	delete(exts, ext)
	out["extensions"] = exts
	return out
}

// await ends this round: with the call's result, or with the questions the
// upstream has asked so far.
//
// A call that may become a task (tc not nil) becomes one at once (task
// mode always), or when it has neither ended nor asked within
// Options.TaskWait; then the answer is errBecameTask, and tc says what
// the task is.
func (g *Gateway) await(ctx context.Context, p *pendingCall, tc *taskCall) (*mcp.CallToolResult, error) {
	var wait <-chan time.Time
	if tc != nil {
		if tc.mode == config.TaskAlways {
			if g.becomeTask(ctx, p, tc) {
				return nil, errBecameTask
			}
		} else {
			t := time.NewTimer(g.opts.TaskWait)
			defer t.Stop()
			wait = t.C
		}
	}
	for {
		res, err := g.awaitRound(ctx, p, wait)
		if err != errWaitOver {
			return res, err
		}
		if g.becomeTask(ctx, p, tc) {
			return nil, errBecameTask
		}
		wait = nil // beyond the bounds: it goes on as a call
	}
}

// errWaitOver: a call that may become a task ran Options.TaskWait.
var errWaitOver = errors.New("task_wait is over")

// awaitRound is await's wait for this round's end; it returns
// errWaitOver when wait fires first.
func (g *Gateway) awaitRound(ctx context.Context, p *pendingCall, wait <-chan time.Time) (*mcp.CallToolResult, error) {
	select {
	case <-wait:
		return nil, errWaitOver
	case <-p.done:
		g.drop(p)
		return p.res, p.err
	case a := <-p.asks:
		p.mu.Lock()
		p.outstanding[a.key] = a
		reqs := mcp.InputRequestMap{a.key: a.req}
		for more := true; more; {
			select {
			case b := <-p.asks:
				p.outstanding[b.key] = b
				reqs[b.key] = b.req
			default:
				more = false
			}
		}
		p.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: reqs, RequestState: p.state}, nil
	case <-ctx.Done():
		// The client gave up on the call.
		p.cancel()
		g.drop(p)
		return nil, ctx.Err()
	case <-g.ctx.Done():
		return nil, errors.New("gateway closing")
	}
}

// ask puts a question to the downstream client and waits for its answer,
// until the upstream withdraws the question (ctx) or the call ends: its
// client gave up or never came back (InputTimeout), the shutdown's grace
// is over, or the call returned. An upstream need not withdraw its
// questions when its call ends (a server asking from a goroutine of its
// own, a TypeScript server that passes no signal does not), and the host's
// connection to it cannot close while one is open.
func (p *pendingCall) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := &ask{key: newID()[:12], req: req, reply: make(chan answer, 1)}
	select {
	case p.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.ctx.Done():
		return nil, errCallEnded
	case <-p.done:
		return nil, errCallEnded
	}
	select {
	case ans := <-a.reply:
		return ans.resp, ans.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.ctx.Done():
		return nil, errCallEnded
	case <-p.done:
		return nil, errCallEnded
	}
}

// errCallEnded is what an upstream is told of a question it asked during a
// call that has ended before the client answered.
var errCallEnded = errors.New("the call this question was asked in has ended (cancelled, or its client did not come back with the input), unanswered")

func (g *Gateway) drop(p *pendingCall) {
	g.mu.Lock()
	delete(g.pending, p.id)
	if p.waiting {
		p.waiting = false
		g.waiting--
	}
	g.mu.Unlock()
	p.timer.Stop()
	p.dropOnce.Do(func() { close(p.dropped) })
}

// wait counts p, whose upstream call is about to ask its client for input,
// among the calls waiting for input, within Options.MaxWaitingCalls.
func (g *Gateway) wait(p *pendingCall) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case p.waiting:
	case g.waiting >= g.opts.MaxWaitingCalls:
		return &jsonrpc.Error{Code: codeTooManySessions, Message: fmt.Sprintf(
			"too many calls are waiting for their clients' input (%d, the most [gateway] max_sessions allows); a client must answer one, or it must expire, first", g.opts.MaxWaitingCalls)}
	default:
		p.waiting = true
		g.waiting++
	}
	return nil
}

// boundSession is the session a pending call is bound to: the caller's, or
// nil for a request served statelessly.
func boundSession(ctx context.Context, req *mcp.CallToolRequest) *mcp.ServerSession {
	if isSessionless(ctx) {
		return nil
	}
	return req.Session
}
