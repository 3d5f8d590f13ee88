package host

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/transport"
)

// CallOptions configures one call. Nil means defaults.
type CallOptions struct {
	// Progress receives the server's progress notifications for this call.
	// It is called on the connection's goroutine and must not block.
	Progress func(*mcp.ProgressNotificationParams)
	// Elicitation answers elicitation requests the server makes during this
	// call. Over protocols where a request cannot be tied to its call, it is
	// used when this is the server's only call in flight with a handler;
	// otherwise Options.Elicitation is.
	Elicitation ElicitationHandler
	// Sampling answers sampling requests made during this call, routed the
	// same way. Sampling is only advertised when Options.Sampling is set.
	Sampling SamplingHandler
	// Roots answers roots/list requests made during this call, routed the
	// same way, except that calls of the same Client are one (see Client);
	// without it the server's configured roots are the answer.
	Roots func(ctx context.Context, server string) (*mcp.ListRootsResult, error)
	// Client, when set, names who answers this call's requests (the
	// gateway's downstream session); it must be comparable. Roots belong
	// to a client, not to a call: a server's roots/list that cannot be
	// tied to its call (protocols before 2026-07-28) while several calls
	// are in flight goes to their Roots handlers once per Client, and is
	// answered if those clients' roots agree. Nil: the call is its own
	// client.
	Client any
	// Log receives the server's log messages during this call, routed the
	// same way. Over stdio, SSE, WebSocket and in-process connections it is
	// called as the message is read, before the call's result, on the
	// connection's goroutine: it must not block.
	Log func(server string, p *mcp.LoggingMessageParams)
	// Timeout, when positive, bounds this call instead of its server's
	// timeout (or, for a call made as a task, its upstream_task_timeout):
	// longer for a call the caller knows to be long, shorter for one it
	// cannot wait for. Like the server's, it covers waiting for a
	// restarting server and for a place under max_concurrency, and a
	// progress notification restarts it when the server has
	// progress_resets_timeout.
	Timeout time.Duration
	// PassThrough says the handlers forward the server's requests to
	// another MCP client (the gateway's downstream client), which checks
	// them itself: an elicitation request then reaches Elicitation as the
	// server sent it, and the answer goes back as given, where otherwise
	// the SDK refuses schemas it does not know (titled multi-select enums
	// with "type": "string") and checks and fills in the answer.
	PassThrough bool
	// Caller names who makes this call, as the face that took it
	// authenticated them (the gateway: "oauth:SUBJECT", "owner",
	// "session:ID" or "anonymous"); "" is this process itself (a workflow
	// step, an agent, a command's own host). It reaches in-process servers
	// only, in the request's _meta under MetaKeyCaller, which the host sets
	// from this field alone: neither CallOptions.Meta nor a client's _meta
	// can name a caller, and no server of another process learns who calls.
	Caller string
	// IdempotencyKey is the key a caller gives so that its retry of this
	// call is known as one (a published workflow finds the run the first
	// call started). Like Caller, it reaches in-process servers only, under
	// MetaKeyIdempotencyKey: a key one client chose means nothing to a
	// server that cannot tell that client from another.
	IdempotencyKey string
	// Detach asks an in-process server that runs each call as a durable
	// run of its own (a published workflow) to start the run and answer at
	// once, naming the run in the result's _meta under MetaKeyRun, rather
	// than follow it: the caller takes the run's outcome later, elsewhere
	// (the gateway's task of the call). Like Caller, it reaches in-process
	// servers only, under MetaKeyDetach, set from this field alone; any
	// other server never learns of it, and one that knows no runs ignores
	// it.
	Detach bool
	// TaskNote, with Detach, is what the caller that follows the run as a
	// task of its own wants kept with the run (the gateway's: who made the
	// call, on which endpoint, of which tool), so that the run can be
	// found again as that task (workflow.RunStatus.Task). It is set under
	// MetaKeyDetach in place of true, and reaches nobody else.
	TaskNote string
	// OnArguments, when set, is called once, on the caller's goroutine
	// within CallTool, before the call goes out (and before waiting for
	// the server), with the arguments as the server will be sent them: validated, and
	// as the argument guardrails left them (masked), not yet redacted of
	// configured secrets. A caller that reports its calls (an agent's
	// tool_call event) reports these rather than what it was given. It is
	// not called for a call refused before (an unknown tool, invalid
	// arguments, a guardrail's reject).
	OnArguments func(json.RawMessage)
	// OnTask, when set, is told of the task the server runs this call as
	// (see task.go: a tool that requires a task, or a server with
	// upstream_task = "always"), when it is made and at each change of
	// its status the host learns of, on the caller's goroutine within
	// CallTool. Each change also reaches Progress, as its message.
	OnTask func(server string, t UpstreamTask)

	// RequestOptions: the options every request takes, such as a
	// 2026-07-28 call's input responses. The progress token in _meta is
	// the host's own.
	RequestOptions
}

// MetaKeyCaller is the _meta key of a tools/call under which an
// in-process server finds CallOptions.Caller. The host sets it on each call
// to an in-process server and removes it from every call: nobody else can.
const MetaKeyCaller = "switchboard/caller"

// CallerAnonymous is the Caller of a call from a client its face could not
// tell apart from others (no credentials, no session): an in-process
// server must let it share nothing by its word, such as an idempotency key.
const CallerAnonymous = "anonymous"

// MetaKeyIdempotencyKey is the _meta key of a tools/call's idempotency key:
// a client puts it in its call's _meta, the gateway passes it on
// (CallOptions.IdempotencyKey), and an in-process server reads it there
// (a published workflow's run: docs/workflows.md).
const MetaKeyIdempotencyKey = "switchboard/idempotency_key"

// MetaKeyDetach is the _meta key of a tools/call under which an
// in-process server finds CallOptions.Detach: true, or the call's
// CallOptions.TaskNote when it has one. The host sets it on a detached
// call to an in-process server and removes it from every other.
const MetaKeyDetach = "switchboard/detach"

// MetaKeyRun is the _meta key of a detached call's result under which an
// in-process server names the run it started (CallOptions.Detach).
const MetaKeyRun = "switchboard/run"

// callerMeta is a call's _meta m with what an in-process server learns of
// its caller (o.Caller, o.IdempotencyKey) and whether the call is
// detached (o.Detach), and none of that for any other server.
func callerMeta(m mcp.Meta, inProcess bool, o *CallOptions) mcp.Meta {
	delete(m, MetaKeyCaller)
	delete(m, MetaKeyDetach)
	delete(m, metaKeyTask) // the host's alone to set (task.go)
	delete(m, metaKeyTaskExtension)
	if !inProcess {
		return m
	}
	if o.Detach {
		if m == nil {
			m = mcp.Meta{}
		}
		m[MetaKeyDetach] = true
		if o.TaskNote != "" {
			m[MetaKeyDetach] = o.TaskNote
		}
	}
	for k, v := range map[string]string{MetaKeyCaller: o.Caller, MetaKeyIdempotencyKey: o.IdempotencyKey} {
		if v == "" {
			continue
		}
		if m == nil {
			m = mcp.Meta{}
		}
		m[k] = v
	}
	return m
}

// call is one tools/call in flight.
type call struct {
	srv   *server
	opts  CallOptions
	reset func() // restarts the timeout; nil unless progress resets it

	mu sync.Mutex
	// task is the id of the server's task this call runs as, once made
	// (task.go): a request of the server's that names it is this call's.
	task string
	// unanswered says why a question of the server's that can be answered
	// another way (MetaKeyAnswerElsewhere) went unanswered, and that way:
	// set, the call's failure is that, not the server's.
	unanswered string
}

type callKey struct{}

// CallTool validates args (a JSON object, or empty for none) against the
// tool's input schema and calls the tool, bounded by its server's timeout.
//
// A tool that fails returns a result with IsError set and a nil error. A
// name no server offers returns an error matching [ErrUnknownTool] that
// names the tool (not a *CallError: no server is involved). Otherwise an
// error is a [*CallError], naming server and tool, when the arguments are
// invalid ([ErrInvalidArguments]; the server is never called), the server
// does not answer in time ([ErrTimeout]; the call is cancelled upstream),
// the server is unavailable or its connection is lost ([ErrUnavailable]),
// the server refused the request (its *jsonrpc.Error, redacted, is in the
// chain), or ctx ends.
func (h *Host) CallTool(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*mcp.CallToolResult, error) {
	e, ok := h.lookup(name)
	if !ok {
		if server, tool, reason, held := h.HeldTool(name); held {
			return nil, heldError(name, heldEntry{server, tool, reason})
		}
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	s := e.srv
	timeout := s.cfg.Timeout
	// A tool that runs as a task (task.go) is bounded by the task's
	// timeout: outliving a call's timeout is what a task is for. A
	// 2026-07-28 server decides for itself: its call is bounded so from
	// when it makes a task (asLong, below).
	asTask := s.asTask(e.Tool.Tool)
	if asTask {
		timeout = s.taskTimeout()
	}
	fixed := opts != nil && opts.Timeout > 0
	if fixed {
		timeout = opts.Timeout
	}
	var bound atomic.Int64 // timeout, as asLong may change it
	bound.Store(int64(timeout))
	cerr := func(err error, d time.Duration) error {
		return &CallError{Server: s.cfg.ID, Tool: e.Tool.Tool.Name, Method: "tools/call", Duration: d, Timeout: time.Duration(bound.Load()), Err: h.redactErr(err)}
	}
	growStack()
	value, err := e.schema.Validate(args)
	if err != nil {
		return nil, cerr(&invalidArgs{err}, 0)
	}
	gcall := guardrail.Call{Server: s.cfg.ID, Tool: e.Tool.Tool.Name, Endpoint: EndpointOf(ctx)}
	value, grecs, err := h.opts.Guardrails.Arguments(ctx, gcall, value)
	h.guardrailEvents(gcall, grecs)
	if err != nil {
		return nil, cerr(err, 0)
	}
	if opts != nil && opts.OnArguments != nil {
		opts.OnArguments(sentArguments(value))
	}
	if err := s.brk.allow(time.Now()); err != nil {
		return nil, cerr(err, 0)
	}

	c := &call{srv: s}
	if opts != nil {
		c.opts = *opts
	}
	// The timeout covers waiting for a restarting server and for a place
	// under max_concurrency, as well as the call itself.
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	began := time.Now()
	timer := time.AfterFunc(timeout, func() { cancel(ErrTimeout) })
	defer timer.Stop()
	// asLong bounds the call by the task's timeout, from its start, once
	// the server has made it a task.
	asLong := func() {
		if fixed || asTask {
			return
		}
		bound.Store(int64(s.taskTimeout()))
		timer.Reset(s.taskTimeout() - time.Since(began))
	}
	// Closing the server's session waits for the call: it ends first.
	stop := context.AfterFunc(s.life, func() { cancel(ErrClosed) })
	defer stop()
	if s.cfg.ProgressResetsTimeout {
		c.reset = func() { timer.Reset(time.Duration(bound.Load())) }
	}
	waitStart := time.Now()
	session, err := s.liveSession(cctx)
	var ir *irConn
	if err == nil && c.opts.InputRequired {
		if ir, err = s.inputRequiredConn(cctx); ir != nil {
			session = ir.cs
		}
	}
	if err != nil {
		return nil, cerr(err, time.Since(waitStart))
	}
	// A 2026-07-28 task (task.go): v2, the call declares the extension;
	// rounds, it goes out on the server's 2026-07-28 connection for a
	// caller that does not answer input-required results itself, and the
	// host answers them, with the call's handlers.
	tool := e.Tool.Tool.Name
	v2, rounds := false, false
	v2Conn := func() bool {
		o, err := s.inputRequiredConn(cctx)
		if err != nil || !v2Tasks(o.cs) {
			return false
		}
		ir, session, rounds = o, o.cs, true
		return true
	}
	if !asTask && s.cfg.UpstreamTask != config.UpstreamTaskNever {
		switch {
		case c.opts.InputRequired:
			v2 = s.requiresTask(tool) && v2Tasks(session)
		case v2Tasks(session):
			v2 = true
		case s.wantsTask(tool) || s.requiresTask(tool):
			v2 = v2Conn()
		}
	}
	if s.sem != nil {
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		case <-cctx.Done():
			err := h.callFailure(s, ir, ctx, cctx, cctx.Err())
			err = fmt.Errorf("%w (still waiting for a place under max_concurrency = %d)", err, cap(s.sem))
			return nil, cerr(err, time.Since(waitStart))
		}
	}
	token := fmt.Sprintf("switchboard-%d", h.progressSeq.Add(1))
	h.calls.Store(token, c)
	defer h.calls.Delete(token)
	s.mu.Lock()
	s.inflight[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, c)
		s.mu.Unlock()
	}()

	params := &mcp.CallToolParams{Name: e.Tool.Tool.Name, Arguments: value}
	if c.opts.InputRequired {
		params.InputResponses = c.opts.InputResponses
		params.RequestState = c.opts.RequestState
	}
	params.Meta = callerMeta(maps.Clone(c.opts.Meta), s.cfg.Transport == TransportInProcess, &c.opts)
	if asTask {
		// The tap sends it as params.task (task.go).
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta[metaKeyTask] = map[string]any{"ttl": timeout.Milliseconds()}
	}
	declare := func() {
		// The tap declares the extension (task.go).
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta[metaKeyTaskExtension] = true
	}
	if v2 {
		declare()
	}
	params.SetProgressToken(token)
	start := time.Now()
	send := func() (*mcp.CallToolResult, error) {
		return session.CallTool(context.WithValue(cctx, callKey{}, c), params)
	}
	res, err := send()
	if err != nil && !v2 && !asTask && s.cfg.UpstreamTask != config.UpstreamTaskNever && ctx.Err() == nil && requiresTasksExtension(err) {
		// The server requires the tool as a task: again, declaring the
		// extension, and so from now on.
		s.noteRequiresTask(tool)
		if v2Tasks(session) || !c.opts.InputRequired && v2Conn() {
			v2 = true
			declare()
			res, err = send()
		}
	}
	for round := 1; err == nil && rounds && res.NeedsInput(); round++ {
		if round > maxInputRounds {
			err = fmt.Errorf("the server asked for input %d times in a row", maxInputRounds)
			break
		}
		var answers mcp.InputResponseMap
		if answers, err = s.answerInputs(cctx, session, c, res.InputRequests); err != nil {
			break
		}
		params.InputResponses, params.RequestState = answers, res.RequestState
		res, err = send()
	}
	if err == nil {
		// A task, asked for or not (a server may not make one unasked,
		// but its caller wants the result all the same).
		if t := createdTask(res); t != nil {
			if v2 {
				asLong()
			}
			res, err = s.followTask(cctx, session, c, token, t, v2)
		}
	}
	d := time.Since(start)
	if err != nil && ctx.Err() == nil {
		if u := c.unansweredWhy(); u != "" {
			// The server asked what this call's client cannot answer, and
			// said how else it can be: the server did not fail, and the
			// caller (a model, a client) is told the way as a tool error.
			s.recordCall(true)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s (%s): %s", e.Name, s.cfg.ID, u)}}}, nil
		}
	}
	if err != nil {
		err = h.callFailure(s, ir, ctx, cctx, err)
		if ctx.Err() == nil && !errors.Is(err, ErrUnavailable) {
			// The caller did not give up and the connection did not die
			// (supervision deals with that): the server failed this call.
			s.recordCall(false)
		}
		return nil, cerr(err, d)
	}
	s.recordCall(true)
	res, rrecs, err := h.opts.Guardrails.Result(ctx, gcall, res)
	h.guardrailEvents(gcall, rrecs)
	if err != nil {
		return nil, cerr(err, d)
	}
	return withGuardrailMeta(res, slices.Concat(grecs, rrecs)), nil
}

// sentArguments is value, the arguments a call sends, as JSON for
// CallOptions.OnArguments; nil for none.
func sentArguments(value map[string]any) json.RawMessage {
	if value == nil {
		return nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return nil
	}
	return b
}

// guardrailEvents publishes one EventGuardrail per record.
func (h *Host) guardrailEvents(c guardrail.Call, recs []guardrail.Record) {
	for i := range recs {
		h.events.publish(Event{Kind: EventGuardrail, Server: c.Server, Tool: c.Tool, Guardrail: &recs[i]})
	}
}

// withGuardrailMeta is res with what the guardrails did to its call in its
// _meta (guardrail.MetaKey), for the call's record: the caller's log, a
// run's step. res is never changed: the records go in a copy.
func withGuardrailMeta(res *mcp.CallToolResult, recs []guardrail.Record) *mcp.CallToolResult {
	if len(recs) == 0 || res == nil {
		return res
	}
	out := *res
	out.Meta = maps.Clone(res.Meta)
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[guardrail.MetaKey] = recs
	return &out
}

// callFailure says why a request failed: the timeout, the caller's context,
// or the connection it went out on (the server's own, or its 2026-07-28
// one when ir is not nil).
func (h *Host) callFailure(s *server, ir *irConn, ctx, cctx context.Context, err error) error {
	switch {
	case errors.Is(context.Cause(cctx), ErrTimeout) && ctx.Err() == nil:
		return ErrTimeout
	case errors.Is(context.Cause(cctx), ErrClosed) && ctx.Err() == nil:
		return ErrClosed
	case ctx.Err() != nil:
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		// The server answered: its connection stands (the SDK reports a
		// closed connection as ErrConnectionClosed or a read error).
		return h.serverFailure(err)
	}
	if ir != nil {
		// Give the connection's watcher its chance to say it ended: the
		// SDK fails the request with a read error before its session's
		// Wait returns. Wait on that signal, but not for long: a failure
		// that is not a lost connection gives no signal at all.
		select {
		case <-ir.done:
			return fmt.Errorf("%w: its %s connection was lost: %s", ErrUnavailable, InputRequiredVersion, h.redact(err.Error()))
		case <-time.After(100 * time.Millisecond):
		}
		return h.serverFailure(err)
	}
	s.mu.Lock()
	lost := s.lost
	s.mu.Unlock()
	if lost == nil {
		// The session may just have ended; give the watcher its chance
		// to say why, without waiting on it for long.
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done != nil {
			select {
			case <-done:
			case <-time.After(100 * time.Millisecond):
			}
		}
		s.mu.Lock()
		lost = s.lost
		s.mu.Unlock()
	}
	if lost != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, lost)
	}
	return h.serverFailure(err)
}

// serverFailure is a failed request's error, redacted, on a connection
// that still stands: the server's protocol error keeps its code.
func (h *Host) serverFailure(err error) error {
	// The message reaches terminals, models and clients: cleaned and
	// bounded like a description (declared.go).
	msg, _ := h.lim.cleanText(h.redact(err.Error()), h.lim.desc)
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		if re := transport.RefusedAnswer(je); re != nil {
			// Not the server's error: its answer was refused (a
			// repeated member name, bytes that are not UTF-8, a batch).
			// A failure on the way, which the *CallError around it names
			// the server of; not a protocol error to pass on as its own.
			m, _ := h.lim.cleanText(h.redact(re.Reason.Error()), h.lim.desc)
			return &transport.RefusedError{Reason: errors.New(m)}
		}
		// The server answered with a protocol error: keep its code, its
		// message and data (redacted) for a caller that passes it on.
		m, _ := h.lim.cleanText(h.redact(je.Message), h.lim.desc)
		// The server's message alone: the go-sdk's text adds `calling
		// "tools/call": `, which the *CallError around this says better.
		text := m
		if text == "" {
			text = msg
		}
		return &serverError{text: text, err: &jsonrpc.Error{
			Code:    je.Code,
			Message: m,
			Data:    redactRaw(h.red, je.Data),
		}}
	}
	return errors.New(msg)
}

// serverError is a server's protocol error, as the host reports it; it
// unwraps to the *jsonrpc.Error the server sent.
type serverError struct {
	text string
	err  *jsonrpc.Error
}

func (e *serverError) Error() string { return e.text }
func (e *serverError) Unwrap() error { return e.err }

// redactRaw redacts secrets from a JSON value, which stays valid JSON only
// if nothing was redacted inside a string escape; otherwise it is dropped.
func redactRaw(red *secret.Redactor, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	out := red.Redact(string(raw))
	if out == string(raw) {
		return raw
	}
	if json.Valid([]byte(out)) {
		return json.RawMessage(out)
	}
	return nil
}

// invalidArgs marks a schema validation error as ErrInvalidArguments while
// keeping its own message, which names every failing JSON pointer.
type invalidArgs struct{ err error }

func (e *invalidArgs) Error() string        { return e.err.Error() }
func (e *invalidArgs) Unwrap() error        { return e.err }
func (e *invalidArgs) Is(target error) bool { return target == ErrInvalidArguments }

// progress routes a progress notification to its call.
func (h *Host) progress(p *mcp.ProgressNotificationParams) {
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := h.calls.Load(token)
	if !ok {
		return
	}
	c := v.(*call)
	if c.reset != nil {
		c.reset()
	}
	if c.opts.Progress != nil {
		c.opts.Progress(h.lim.cleanProgress(p))
	}
}

// roots answers a server's roots/list from the calls in flight, if any has
// a Roots handler (ok is false if none has): the call the request's
// context carries (2026-07-28); else, when one call has a handler, that
// call; else each client with calls in flight is asked once, and their
// answer is the answer if they all give the same. Clients whose roots
// differ get the server an error: telling it one client's roots during
// another's call would be wrong, and telling it none, silently, too.
func (s *server) roots(ctx context.Context) (res *mcp.ListRootsResult, err error, ok bool) {
	if c, ok := ctx.Value(callKey{}).(*call); ok && c.opts.Roots != nil {
		res, err := c.opts.Roots(ctx, s.cfg.ID)
		return res, err, true
	}
	answers := map[any]*mcp.ListRootsResult{} // by client
	for range rootsRounds {
		ask, live := s.rootsClients(answers)
		switch {
		case len(live) == 0:
			return nil, nil, false
		case len(live) == 1 && len(ask) == 1 && len(answers) == 0:
			// The common case: the only call in flight, or calls of one
			// client. The asker is in flight until it has its answer.
			for _, c := range ask {
				if res, err := c.opts.Roots(ctx, s.cfg.ID); err == nil || s.inFlight(c) {
					return res, err, true
				}
			}
			continue // that call ended under the question: ask another
		}
		var mu sync.Mutex
		var failed error
		var wg sync.WaitGroup
		for key, c := range ask {
			wg.Go(func() {
				res, err := c.opts.Roots(ctx, s.cfg.ID)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && res != nil:
					answers[key] = res
				case s.inFlight(c):
					failed = fmt.Errorf("a client could not say: %w", err)
				} // else the call ended under the question: ask again
			})
		}
		wg.Wait()
		if failed != nil {
			return nil, s.rootsDiffer(len(live), failed), true
		}
		if _, live = s.rootsClients(nil); len(live) == len(answers) || len(answers) >= len(live) {
			break
		}
	}
	// Only the clients still in flight: one that left was not the asker.
	_, live := s.rootsClients(nil)
	var answer *mcp.ListRootsResult
	var want []byte
	for key := range live {
		res := answers[key]
		if res == nil {
			return nil, s.rootsDiffer(len(live), errors.New("a client's calls kept ending under the question")), true
		}
		got, err := json.Marshal(res.Roots)
		if err != nil || (answer != nil && !bytes.Equal(got, want)) {
			return nil, s.rootsDiffer(len(live), nil), true
		}
		answer, want = res, got
	}
	if answer == nil {
		return nil, nil, false // they all ended: the request was not theirs
	}
	return answer, nil, true
}

// rootsRounds bounds how often roots asks again because the calls it asked
// through ended under the question.
const rootsRounds = 3

// rootsClients returns, for each client with calls in flight that have a
// Roots handler, one such call (ask: only those not yet in answered) and
// all of them (live).
func (s *server) rootsClients(answered map[any]*mcp.ListRootsResult) (ask, live map[any]*call) {
	ask, live = map[any]*call{}, map[any]*call{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.inflight {
		if c.opts.Roots == nil {
			continue
		}
		key := c.opts.Client
		if key == nil {
			key = c
		}
		live[key] = c
		if answered[key] == nil {
			ask[key] = c
		}
	}
	return ask, live
}

func (s *server) inFlight(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.inflight[c]
	return ok
}

func (s *server) rootsDiffer(clients int, cause error) error {
	msg := fmt.Sprintf("roots/list: calls of %d clients are in flight on server %q and their roots differ (a request of protocol %s does not name its call)",
		clients, s.cfg.ID, cmp.Or(s.h.opts.ProtocolVersion, "before 2026-07-28"))
	if cause != nil {
		msg += ": " + s.h.red.Redact(cause.Error())
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}
