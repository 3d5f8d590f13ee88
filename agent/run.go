package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/toolmode"
)

// RunOptions configures one run.
type RunOptions struct {
	// Agent gives the system prompt, model settings and limits. Required.
	Agent *Agent
	// Host offers the tools; the caller starts it (with the Plan's servers
	// and, when the agent grants any, Builtins.InProcess) and closes it.
	// Required.
	Host *host.Host
	// Provider answers. Required.
	Provider llm.Provider
	// Model is the provider's model name; "" means the part of Agent.Model
	// after "provider:".
	Model string
	// ProviderName is Provider's configured name ("openai", "ollama", a
	// [providers.NAME] table's), which run:started reports with Model as
	// the model actually used ("ollama:llama3.2"); "" means Agent.Model's.
	// A caller that overrides the agent's model (--model) sets both.
	ProviderName string
	// Prompt is the user's message.
	Prompt string
	// Tools are the host names the model may see (Plan.Tools); nil means
	// every tool the host offers. Naming a tool the host does not offer
	// fails the run (ErrNoTool).
	Tools []string
	// Servers are the run's servers (Plan.Servers); their descriptions feed
	// mcp_discovery. Optional.
	Servers []config.Server
	// Builtins, when the agent grants any, is bound to Host for the run so
	// that mcp_call reaches exactly the run's tools.
	Builtins *Builtins
	// Elicit answers servers' elicitation requests made during the run's
	// tool calls; nil leaves them to the host's handler (which declines by
	// default).
	Elicit host.ElicitationHandler
	// Sampling answers servers' sampling requests made during the run's
	// tool calls; its tokens are the caller's to count. When nil and the
	// agent has allow_sampling, the run answers them with its own Provider
	// and Model: their tokens count in the run's usage and token_budget
	// (each is an agent:usage event naming the server), and once the
	// budget is spent they are refused. Otherwise they are left to the
	// host, which refuses them unless its Options.Sampling is set (the host
	// advertises sampling to servers only then).
	Sampling host.SamplingHandler

	// Turn, when set, wraps each turn (a model call and the tool calls it
	// asks for; step from 1): it is called as the turn starts, the context
	// it returns is the one the turn's model call and tool calls get, and
	// end is called when the turn ends. Telemetry's turn spans attach here.
	Turn func(ctx context.Context, step int) (turnCtx context.Context, end func())

	// RunID names the run in its events; "" means a random one.
	RunID string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MaxResultBytes bounds the text of one tool result given to the model: a
// tool that returns megabytes cannot fill the model's context (or the
// bill). Longer text is cut and says how much was left out.
const MaxResultBytes = 64 << 10

// Run runs the agent: the model is called with the prompt and the tools;
// the tools it asks for are called through the host (several at once when it
// asks for several); their results go back to the model; until it answers
// without asking for a tool, or max_steps model calls have been made.
//
// Run returns the run's events as an iterator; ranging over it runs the agent
// once, and the last event is always terminal (run:completed, run:failed or
// run:cancelled) unless the caller stops early. Stopping early (break)
// cancels the run, its model call and its tool calls, and returns once they
// have stopped.
//
// A tool's failure — isError, arguments rejected by the schema
// (host.ErrInvalidArguments), a timeout, a tool the model made up — goes
// back to the model as an error result, and the run goes on. ctx ending
// (Ctrl-C) cancels the calls in flight and ends the run with
// run:cancelled. A run that uses more than the agent's token_budget ends
// with run:failed (ErrTokenBudget) before the next model call.
func Run(ctx context.Context, opts *RunOptions) iter.Seq[Event] {
	o := *opts
	return func(yield func(Event) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		r := newRun(&o)
		ch := make(chan Event)
		go func() {
			defer close(ch)
			r.emitTo = ch
			r.loop(ctx)
		}()
		for ev := range ch {
			if !yield(ev) {
				cancel()
				for range ch {
				}
				return
			}
		}
	}
}

// run is one run's state.
type run struct {
	o     *RunOptions
	id    string
	now   func() time.Time
	red   *secret.Redactor
	model string

	mu     sync.Mutex // orders emits: seq and channel order agree
	seq    int64
	emitTo chan<- Event

	usageMu sync.Mutex // tool calls' sampling adds to usage concurrently
	usage   Usage
	start   time.Time

	// failed are the run's servers that had failed to start when it
	// started.
	failed []string
}

// addUsage adds u to the run's usage.
func (r *run) addUsage(u Usage) {
	r.usageMu.Lock()
	defer r.usageMu.Unlock()
	r.usage.InputTokens += u.InputTokens
	r.usage.OutputTokens += u.OutputTokens
}

// used returns the run's usage so far.
func (r *run) used() Usage {
	r.usageMu.Lock()
	defer r.usageMu.Unlock()
	return r.usage
}

// overBudget reports whether the run has used more than its token_budget.
func (r *run) overBudget() bool {
	b := r.o.Agent.TokenBudget
	return b > 0 && r.used().Total() > b
}

// sampler answers the sampling requests of one step's tool calls with the
// run's model, within what is left of the token budget, and counts them.
func (r *run) sampler(step int) host.SamplingHandler {
	return func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		limit := maxSamplingTokens
		if b := r.o.Agent.TokenBudget; b > 0 {
			left := b - r.used().Total()
			if left <= 0 {
				return nil, fmt.Errorf("sampling refused: the run has used %d tokens, its whole token_budget of %d", r.used().Total(), b)
			}
			limit = min(limit, left)
		}
		res, lu, err := sample(ctx, r.o.Provider, r.model, server, req, limit)
		if err != nil {
			return nil, err
		}
		su := Usage{InputTokens: lu.InputTokens, OutputTokens: lu.OutputTokens}
		r.addUsage(su)
		r.emit(Event{Type: EventUsage, Step: step, Usage: &su, Server: server})
		return res, nil
	}
}

func newRun(o *RunOptions) *run {
	r := &run{o: o, id: o.RunID, now: o.Now}
	if r.id == "" {
		var b [8]byte
		rand.Read(b[:])
		r.id = "run_" + hex.EncodeToString(b[:])
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.red = o.Host.Redactor()
	r.model = o.Model
	if r.model == "" {
		if _, m, err := SplitModel(o.Agent.Model); err == nil {
			r.model = m
		}
	}
	return r
}

// modelSpec is the model the run uses, as "provider:model": the agent
// file's unless the options override the provider or the model.
func (r *run) modelSpec() string {
	provider, _, err := SplitModel(r.o.Agent.Model)
	if err != nil {
		provider = ""
	}
	if r.o.ProviderName != "" {
		provider = r.o.ProviderName
	}
	switch {
	case r.model == "":
		return r.o.Agent.Model
	case provider == "":
		return r.model
	}
	return provider + ":" + r.model
}

// turn runs one turn, f, under RunOptions.Turn; f reports whether the run
// ended.
func (r *run) turn(ctx context.Context, step int, f func(ctx context.Context) bool) bool {
	if r.o.Turn == nil {
		return f(ctx)
	}
	ctx, end := r.o.Turn(ctx, step)
	defer end()
	return f(ctx)
}

func (r *run) emit(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	ev.RunID, ev.Seq, ev.Time = r.id, r.seq, r.now()
	r.emitTo <- ev
}

func (r *run) duration() *int64 {
	d := r.now().Sub(r.start).Milliseconds()
	return &d
}

func (r *run) fail(code ErrorCode, format string, args ...any) {
	u := r.used()
	r.emit(Event{Type: EventRunFailed, Error: &RunError{Code: code, Message: r.red.Redact(fmt.Sprintf(format, args...))},
		Usage: &u, DurationMS: r.duration(), FailedServers: r.failedAtEnd()})
}

func (r *run) cancelled() {
	u := r.used()
	r.emit(Event{Type: EventRunCancelled, Usage: &u, DurationMS: r.duration(), FailedServers: r.failedAtEnd()})
}

// failedServers returns the run's servers (RunOptions.Servers; the host's
// when nil) that have failed to start (host.ServerStatus.FailedToStart),
// in the run's order.
func (r *run) failedServers() []string {
	var out []string
	if r.o.Servers == nil {
		for _, st := range r.o.Host.Servers() {
			if st.Transport != host.TransportInProcess && st.FailedToStart() {
				out = append(out, st.ID)
			}
		}
		return out
	}
	for _, s := range r.o.Servers {
		if st, err := r.o.Host.Status(s.ID); err == nil && st.FailedToStart() {
			out = append(out, s.ID)
		}
	}
	return out
}

// failedAtEnd is failed with the servers that failed since the run
// started.
func (r *run) failedAtEnd() []string {
	out := slices.Clone(r.failed)
	for _, id := range r.failedServers() {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (r *run) loop(ctx context.Context) {
	r.start = r.now()
	a := r.o.Agent
	tools, missing := r.tools()
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	r.failed = r.failedServers()
	mode := toolMode(a, len(tools))
	r.emit(Event{Type: EventRunStarted, Agent: a.ID, Model: r.modelSpec(), Tools: names, ToolMode: mode, FailedServers: r.failed})
	if len(missing) > 0 {
		r.fail(ErrNoTool, "the run's tools name %s, which no server offers", strings.Join(missing, ", "))
		return
	}
	if r.o.Builtins != nil {
		allowed := map[string]bool{}
		for _, t := range r.allowed() {
			allowed[t.Name] = true
		}
		r.o.Builtins.bind(r.o.Host, allowed)
	}
	ts := newToolset(mode, r.o.Prompt, tools)

	maxSteps := a.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Text: r.o.Prompt}}
	for step := 1; ; step++ {
		if r.turn(ctx, step, func(ctx context.Context) bool {
			req := &llm.Request{Model: r.model, System: a.System, Messages: slices.Clone(msgs), Tools: ts.llm,
				Temperature: a.Temperature, MaxTokens: a.MaxTokens}
			resp, err := r.o.Provider.Complete(ctx, req, func(delta string) {
				if delta != "" {
					r.emit(Event{Type: EventToken, Step: step, Text: delta})
				}
			})
			if err != nil {
				if ctx.Err() != nil {
					r.cancelled()
					return true
				}
				r.fail(providerCode(err), "step %d: %v", step, err)
				return true
			}
			su := Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}
			r.addUsage(su)
			r.emit(Event{Type: EventUsage, Step: step, Usage: &su})
			msg := resp.Message
			msg.Role = llm.RoleAssistant
			for i := range msg.ToolCalls {
				if msg.ToolCalls[i].ID == "" {
					msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", step, i+1)
				}
			}
			r.emit(Event{Type: EventMessage, Step: step, Text: msg.Text})
			msgs = append(msgs, msg)
			if len(msg.ToolCalls) == 0 {
				u := r.used()
				r.emit(Event{Type: EventRunCompleted, Text: msg.Text, Usage: &u, DurationMS: r.duration(), FailedServers: r.failedAtEnd()})
				return true
			}
			if step >= maxSteps {
				r.fail(ErrMaxSteps, "the model still asked for tools after %d steps (max_steps)", maxSteps)
				return true
			}
			if r.overBudget() {
				r.fail(ErrTokenBudget, "the run used %d tokens, more than its token_budget of %d", r.used().Total(), a.TokenBudget)
				return true
			}
			results := r.callTools(ctx, step, msg.ToolCalls, ts)
			if ctx.Err() != nil {
				r.cancelled()
				return true
			}
			if r.overBudget() { // the tools' sampling counts too
				r.fail(ErrTokenBudget, "the run used %d tokens (with its tools' sampling), more than its token_budget of %d", r.used().Total(), a.TokenBudget)
				return true
			}
			msgs = append(msgs, results...)
			return false
		}) {
			return
		}
	}
}

// allowed returns the host's tools the run may use (the run's Tools, or
// all), built-in ones included.
func (r *run) allowed() []host.Tool {
	all := r.o.Host.Tools()
	if r.o.Tools == nil {
		return all
	}
	var out []host.Tool
	for _, t := range all {
		if slices.Contains(r.o.Tools, t.Name) || r.o.Builtins.owns(t) {
			out = append(out, t)
		}
	}
	return out
}

// tools returns the tools the model sees, and the names in the run's Tools
// that the host does not offer.
func (r *run) tools() (tools []host.Tool, missing []string) {
	allowed := r.allowed()
	for _, n := range r.o.Tools {
		if !slices.ContainsFunc(allowed, func(t host.Tool) bool { return t.Name == n }) {
			missing = append(missing, n)
		}
	}
	a := r.o.Agent
	if !a.MCPDiscovery && a.MaxTools == 0 {
		return allowed, missing
	}
	var builtin, candidates []host.Tool
	for _, t := range allowed {
		if r.o.Builtins.owns(t) {
			builtin = append(builtin, t)
		} else {
			candidates = append(candidates, t)
		}
	}
	desc := map[string]string{}
	for _, s := range r.o.Servers {
		desc[s.ID] = s.Description
	}
	sel := Select(r.o.Prompt, candidates, desc, &SelectOptions{Servers: a.MCPDiscovery, MaxTools: a.MaxTools})
	r.wake(sel)
	return append(sel, builtin...), missing
}

// wake starts the lazily idle servers (offering their cached tools) whose
// tools the selection chose, now rather than at their first call: the
// model is likely to call them, and the others stay idle. A server a run
// starts this way is a child process of the host, like any other.
func (r *run) wake(chosen []host.Tool) {
	seen := map[string]bool{}
	for _, t := range chosen {
		if seen[t.Server] {
			continue
		}
		seen[t.Server] = true
		if st, err := r.o.Host.Status(t.Server); err == nil && st.State == host.StateLazy {
			r.o.Host.Restart(t.Server)
		}
	}
}

// callTools calls the tools at once and returns their results in order.
// In search mode a call_tool is reported as the call of the tool it
// names (Call.Via "call_tool"); search_tools and run_code as themselves.
func (r *run) callTools(ctx context.Context, step int, calls []llm.ToolCall, ts *toolset) []llm.Message {
	out := make([]llm.Message, len(calls))
	sampling := r.o.Sampling
	if sampling == nil && r.o.Agent.AllowSampling {
		sampling = r.sampler(step)
	}
	// What each call is: the call_tool of a search-mode model is the call
	// of the tool it names, with its arguments.
	type planned struct {
		c   llm.ToolCall // the call as reported and made
		via string
		// answer answers a call that no server is sent (search_tools,
		// run_code, a call the mode does not allow or whose call_tool
		// arguments were unusable); nil for a call of the host's tools.
		answer func() (string, CallErrorCode)
	}
	plan := make([]planned, len(calls))
	for i, c := range calls {
		p := planned{c: c}
		if ts.mode == ToolModeSearch && c.Name == toolmode.CallTool {
			if name, args, err := toolmode.ParseCall(c.Arguments); err != nil {
				p.answer = func() (string, CallErrorCode) { return err.Error(), CallInvalidArguments }
			} else {
				p.c = llm.ToolCall{ID: c.ID, Name: name, Arguments: args}
				p.via = toolmode.CallTool
			}
		}
		switch {
		case p.answer != nil:
		case p.via == "" && ts.mode != ToolModeAll && p.c.Name == toolmode.SearchTools:
			p.answer = func() (string, CallErrorCode) { return ts.search(p.c.Arguments) }
		case ts.mode == ToolModeCode && p.c.Name == toolmode.RunCode:
			p.answer = func() (string, CallErrorCode) { return r.runCode(ctx, step, p.c, ts, sampling) }
		case p.via == "" && ts.mode != ToolModeAll:
			// Only the mode's tools are given: a tool's own name is
			// not, so that each call is made one way.
			how := toolmode.CallTool
			if ts.mode == ToolModeCode {
				how = "a " + toolmode.RunCode + " program"
			}
			p.answer = func() (string, CallErrorCode) {
				return fmt.Sprintf("there is no tool %q here: find tools with %s and call them with %s", p.c.Name, toolmode.SearchTools, how), CallUnknownTool
			}
		case p.via == toolmode.CallTool && !ts.offered[p.c.Name]:
			p.answer = func() (string, CallErrorCode) {
				return fmt.Sprintf("there is no tool %q; call %s to find the tools you can call", p.c.Name, toolmode.SearchTools), CallUnknownTool
			}
		}
		plan[i] = p
	}
	var wg sync.WaitGroup
	for i, p := range plan {
		announce := func(args json.RawMessage) {
			r.emit(Event{Type: EventToolCall, Step: step, Call: &Call{ID: p.c.ID, Tool: p.c.Name, Via: p.via, Arguments: args}})
		}
		// A call of the host's tools is reported once the host has its
		// arguments as its guardrails leave them (callToolResult); one
		// that no server is sent, now, as the model wrote it.
		if p.answer != nil {
			announce(r.redactArgs(p.c.Arguments))
		}
		wg.Go(func() {
			start := r.now()
			var text string
			var code CallErrorCode
			var recs []guardrail.Record
			if p.answer != nil {
				text, code = p.answer()
			} else {
				var res *mcp.CallToolResult
				res, text, code = r.callToolResult(ctx, p.c, ts.offered, sampling, announce)
				recs = guardrailRecords(res)
			}
			out[i] = llm.Message{Role: llm.RoleTool, ToolCallID: calls[i].ID, Text: text, IsError: code != ""}
			if ctx.Err() != nil {
				return // cancelled: the run ends without this result
			}
			ok := code == ""
			d := r.now().Sub(start).Milliseconds()
			r.emit(Event{Type: EventToolResult, Step: step, Call: &Call{ID: p.c.ID, Tool: p.c.Name, Via: p.via, Success: &ok, ErrorCode: code,
				Output: truncate(text, EventOutputBytes), DurationMS: &d, Guardrails: recs}})
		})
	}
	wg.Wait()
	return out
}

// callToolResult calls one of the run's tools, the path of every call a
// model makes (directly, through call_tool, or from a run_code program).
// It returns the result as a program may see it (nil when the call
// failed before the tool answered), the text the model gets, and why it
// failed ("" when it did not).
//
// announce reports the call (its tool_call event) once, before its
// result: with the arguments the server is sent — as the host's argument
// guardrails left them (host.CallOptions.OnArguments), redacted; a tool
// not offered, which no server is sent, with the model's, redacted; a
// call the host refused before its guardrails had left the arguments
// (invalid arguments, a guardrail's reject) with none: those are the
// model's own, which a guardrail may have been there to mask.
func (r *run) callToolResult(ctx context.Context, c llm.ToolCall, offered map[string]bool, sampling host.SamplingHandler, announce func(json.RawMessage)) (*mcp.CallToolResult, string, CallErrorCode) {
	if !offered[c.Name] {
		announce(r.redactArgs(c.Arguments))
		return nil, fmt.Sprintf("there is no tool %q; use one of the tools you were given", c.Name), CallUnknownTool
	}
	announced := false
	defer func() {
		if !announced {
			announce(nil)
		}
	}()
	args := c.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = nil
	}
	// OnArguments is called on this goroutine, within CallTool.
	onArgs := func(sent json.RawMessage) {
		if !announced {
			announced = true
			announce(r.redactArgs(sent))
		}
	}
	res, err := r.o.Host.CallTool(ctx, c.Name, args, &host.CallOptions{Elicitation: r.o.Elicit, Sampling: sampling, OnArguments: onArgs})
	if err != nil {
		code := CallFailed
		switch {
		case errors.Is(err, host.ErrInvalidArguments):
			code = CallInvalidArguments
		case errors.Is(err, host.ErrTimeout):
			code = CallTimeout
		case errors.Is(err, host.ErrUnknownTool):
			code = CallUnknownTool
		case errors.Is(err, host.ErrUnavailable):
			code = CallUnavailable
		case errors.Is(err, guardrail.ErrRejected):
			code = CallGuardrail
		}
		// The message alone: the result is marked as an error (IsError),
		// which each provider says in its own way (Anthropic's is_error,
		// an "Error: " before the text for Chat Completions).
		return nil, r.red.Redact(err.Error()), code
	}
	// Cleaned as the host cleans what servers declare: escapes and
	// invisible characters (tag characters spell instructions no person
	// sees) carry nothing a model should read. Then redacted: a secret
	// split by invisible characters is whole once they are gone.
	text := r.red.Redact(host.CleanText(Summarize(res)))
	if res.IsError {
		return r.cleanResult(res, text), text, CallToolError
	}
	return r.cleanResult(res, text), text, ""
}

// redactArgs redacts secrets in a tool call's arguments for an event; the
// result is always valid JSON.
func (r *run) redactArgs(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	s := r.red.Redact(string(args))
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// providerCode is the run's error code for a failed model call.
func providerCode(err error) ErrorCode {
	var pe *llm.Error
	if errors.As(err, &pe) && pe.Kind != "" {
		return ErrorCode("llm_" + string(pe.Kind))
	}
	return ErrProvider
}
