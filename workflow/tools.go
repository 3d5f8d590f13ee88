package workflow

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
)

// InProcessServerID is the id of the in-process server that publishes
// workflows.
const InProcessServerID = "workflows"

// DefaultToolFormat names a published workflow's tool.
const DefaultToolFormat = "workflow_{id}"

// InProcess returns an in-process MCP server (for host.Options.InProcess)
// with one tool per workflow of ids, named by format ("{id}" is the
// workflow's id; "" means DefaultToolFormat), with the workflow's input
// and output schemas. A call starts a run of its own, reports each step as
// a progress notification, and returns the run's outputs as
// structuredContent and text; a failed run is an isError result naming the
// step and why. A gate is an input-required result (2026-07-28) whose
// requestState is signed and names only the run, the gate and the caller
// (the go-sdk turns it into an elicitation for older clients and calls
// again with the answer); the caller's retry answers the gate and the call
// goes on, unless another answer won the gate (an error says so). A client
// that cannot answer gets an error and the run keeps waiting. Cancelling
// the call cancels the run. A detached call (host.CallOptions.Detach: the
// gateway's task of a call) starts the run and answers at once, naming it
// under host.MetaKeyRun; its caller follows it with ToolTask.
//
// A run's id is random, never taken from the call (a progress token is the
// host's counter, which starts again in every process). A caller that
// wants to retry a call safely sends an idempotency key in its _meta
// (host.MetaKeyIdempotencyKey): its calls with that key to that workflow
// are one run, found from any engine on the database (its id is derived
// from the caller, the workflow and the key under a key kept in the
// database), which a call that ends early leaves running for the retry.
// The caller is the one the host names (host.MetaKeyCaller: a principal,
// or a session); another caller's key is another run; the key with other
// arguments is refused; an anonymous caller the face could not tell apart
// from others (host.CallerAnonymous) cannot use one.
func (e *Engine) InProcess(ids []string, format string) (host.InProcessServer, error) {
	if format == "" {
		format = DefaultToolFormat
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "switchboard-workflows", Version: host.Version}, nil)
	p := &published{srv: srv, names: map[string]string{}}
	for _, id := range ids {
		wf := e.workflows[id]
		if wf == nil {
			return host.InProcessServer{}, fmt.Errorf("workflows: %q is not a workflow", id)
		}
		p.names[id] = strings.ReplaceAll(format, "{id}", id)
	}
	e.mu.Lock()
	e.published = append(e.published, p)
	h := e.host
	e.mu.Unlock()
	e.publish(p, h)
	return host.InProcessServer{ID: InProcessServerID, Server: srv}, nil
}

// published is a server InProcess made: Launch publishes its tools again
// once the host's tools, whose annotations the workflows' derive from, are
// known.
type published struct {
	srv   *mcp.Server
	names map[string]string // workflow id → tool name
}

// publish adds (or replaces: the server tells its client the list changed)
// p's tools, annotated from h's tools (nil: none known yet, which counts as
// MCP's defaults: destructive, open-world).
func (e *Engine) publish(p *published, h *host.Host) {
	tools := func(name string) *mcp.ToolAnnotations {
		if h == nil {
			return nil
		}
		t, ok := h.Tool(name)
		if !ok || t.Tool == nil {
			return nil
		}
		return t.Tool.Annotations
	}
	for id, name := range p.names {
		wf := e.workflows[id]
		p.srv.AddTool(&mcp.Tool{Name: name, Description: wf.Description, InputSchema: wf.InputSchema(), OutputSchema: wf.OutputSchema(),
			Annotations: wf.AnnotationsWith(tools, e.Workflow)}, e.toolHandler(wf))
	}
}

func (e *Engine) toolHandler(wf *Workflow) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var inputs map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &inputs); err != nil {
				return toolError("workflow %s: arguments: %v", wf.ID, err), nil
			}
		}
		token := req.Params.GetProgressToken()
		meta := req.Params.GetMeta()
		// A detached call's run is its caller's task; the note the host
		// passes on names that task (host.CallOptions.TaskNote).
		detach, _ := meta[host.MetaKeyDetach].(bool)
		note, _ := meta[host.MetaKeyDetach].(string)
		detach = detach || note != ""
		caller, _ := meta[host.MetaKeyCaller].(string)
		key, keyed := meta[host.MetaKeyIdempotencyKey]
		// A retry carries the state of the gate it answers.
		answered := map[string]bool{}
		var id string
		if rs := req.Params.RequestState; rs != "" {
			st, err := e.verifyState(ctx, rs)
			if err == nil && st.Caller != caller {
				err = fmt.Errorf("%w: it was given to another caller", errBadState)
			}
			if err != nil {
				return toolError("workflow %s: %v", wf.ID, err), nil
			}
			a := GateAnswer{Action: "decline"}
			if res, ok := req.Params.InputResponses["gate"].(*mcp.ElicitResult); ok && res != nil && res.Action == "accept" {
				a = GateAnswer{Action: "accept", Content: res.Content}
			}
			if err := e.Answer(ctx, st.Run, st.Gate, a); err != nil {
				if errors.Is(err, ErrGateAnswered) {
					return toolError("workflow %s: %v (the run goes on without it: `switchboard runs show %s`)", wf.ID, err, st.Run), nil
				}
				return toolError("workflow %s: %v", wf.ID, err), nil
			}
			id, answered[st.Gate] = st.Run, true
		} else {
			// A call from a run's tool step starts a run one deeper.
			opts := &StartOptions{Task: note}
			if d, ok := meta[MetaKeyDepth]; ok {
				opts.Depth = metaDepth(d) + 1
			}
			if keyed {
				var err error
				if opts.RunID, err = e.keyedRunID(ctx, caller, wf.ID, key); err != nil {
					return toolError("workflow %s: %v", wf.ID, err), nil
				}
			}
			var err error
			if id, err = e.Start(ctx, wf.ID, inputs, opts); err != nil {
				if errors.Is(err, ErrInputsDiffer) {
					return toolError("workflow %s: idempotency key %q was used before with other arguments (run %s): a new call needs a new key", wf.ID, key, opts.RunID), nil
				}
				return toolError("%v", err), nil
			}
		}
		if detach {
			// The caller follows the run elsewhere (the gateway's task of
			// this call: ToolTask): it lives on the engine from here.
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("workflow %s: run %s started", wf.ID, id)}},
				Meta: mcp.Meta{host.MetaKeyRun: id}}, nil
		}
		var n float64
		var stuck *mcp.CallToolResult
		err := e.Follow(ctx, id, 0, func(ev Event) error {
			if token != nil {
				if msg := progressMessage(ev); msg != "" {
					n++
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
				}
			}
			gate := taskKey(ev.Step, itemOf(&ev))
			if ev.Type == EventStepInterrupted {
				// Events are replayed from the start: tell the caller only
				// of an interruption nobody has resolved yet (a resolution
				// taken is recorded before the run acts on it).
				if how, err := e.events.resolution(ctx, id, gate, ev.Attempt); err == nil && how == "" {
					stuck = toolError("workflow %s: %s", wf.ID, resolveHint(id, gate, ev.Attempt))
					return errStop
				}
				return nil
			}
			switch {
			case ev.Type == EventGateAnswered:
				answered[gate] = true
				return nil
			case ev.Type != EventGateWaiting || answered[gate]:
				return nil
			}
			if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
				// Nobody to ask (a 2026-07-28 client says what it can do
				// in each request's _meta): the run waits for another way.
				stuck = toolError("workflow %s: the client of this call cannot answer (it has no elicitation): %s", wf.ID, answerHint(id, gate))
				return errStop
			}
			state, err := e.signState(ctx, gateState{Run: id, Gate: gate, Expires: time.Now().Add(stateTTL).Unix(), Caller: caller})
			if err != nil {
				return err
			}
			// An input-required result: the go-sdk asks a client of an
			// older protocol by elicitation and calls again with its answer.
			// Its _meta tells the host that a client unable to answer must
			// not decline for the person (see host.MetaKeyAnswerElsewhere).
			stuck = &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"gate": gateRequest(id, gate, &ev)}, RequestState: state}
			return errStop
		})
		switch {
		case stuck != nil:
			return stuck, nil
		case ctx.Err() != nil:
			// The caller gave up: so does the run, unless the call has a
			// key to come back for it with.
			if !keyed {
				e.Cancel(context.WithoutCancel(ctx), id)
			}
			return nil, ctx.Err()
		case err != nil:
			return toolError("workflow %s: run %s: %v", wf.ID, id, err), nil
		}
		st, err := e.Wait(ctx, id)
		if err != nil {
			return toolError("workflow %s: run %s: %v", wf.ID, id, err), nil
		}
		return toolResult(wf.ID, st), nil
	}
}

// toolResult is what a call of workflow wf's tool returns of its run st,
// ended: its outputs, or an error naming how it ended.
func toolResult(wf string, st *RunStatus) *mcp.CallToolResult {
	if st.State != RunCompleted {
		if st.Error != nil {
			return toolError("workflow %s: run %s %s: %v", wf, st.ID, st.State, st.Error)
		}
		return toolError("workflow %s: run %s %s", wf, st.ID, st.State)
	}
	b, _ := json.Marshal(st.Outputs)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: st.Outputs}
}

// maxIdempotencyKey bounds an idempotency key: a UUID is 36 bytes, and a
// key is a name, not data.
const maxIdempotencyKey = 255

// keyedRunID is the run id of caller's calls to workflow wf with
// idempotency key key (a string of _meta, checked here): the same on every
// engine on the database, and not to be guessed without the database's
// key, so that nobody can start a run under another caller's key (the
// API's run_id) for that caller to find.
func (e *Engine) keyedRunID(ctx context.Context, caller, wf string, key any) (string, error) {
	k, ok := key.(string)
	switch {
	case !ok || k == "" || len(k) > maxIdempotencyKey || !utf8.ValidString(k):
		return "", fmt.Errorf("_meta[%q]: the idempotency key must be a string of 1 to %d bytes", host.MetaKeyIdempotencyKey, maxIdempotencyKey)
	case caller == host.CallerAnonymous:
		return "", fmt.Errorf("idempotency key refused: this call's caller cannot be told apart from others (no credentials, no session), so its retry could find another client's run; sign in or use a session")
	}
	e.mu.Lock()
	secretKey := e.runKey
	e.mu.Unlock()
	if secretKey == nil {
		var err error
		if secretKey, err = e.events.st.Key(ctx, "run_ids"); err != nil {
			return "", fmt.Errorf("the key of run ids: %w", err)
		}
		e.mu.Lock()
		e.runKey = secretKey
		e.mu.Unlock()
	}
	// Each part with its length: ("a", "bc") and ("ab", "c") are two.
	var b strings.Builder
	for _, p := range []string{caller, wf, k} {
		fmt.Fprintf(&b, "%d:%s;", len(p), p)
	}
	sum := secret.NewSigner(secretKey).Sign(b.String())
	return "call-" + hex.EncodeToString(sum[:16]), nil
}

// progressMessage is what a call's progress notification says of ev, or
// "" for nothing.
func progressMessage(ev Event) string {
	step := ev.Step
	if ev.Item != nil {
		step = fmt.Sprintf("%s[%d]", step, *ev.Item)
	}
	switch ev.Type {
	case EventStepCompleted:
		if ev.Skipped {
			return "step " + step + " skipped"
		}
		return "step " + step + " completed"
	case EventStepFailed:
		if ev.Continued {
			return "step " + step + " failed; continuing"
		}
		return "step " + step + " failed"
	case EventGateWaiting:
		return "gate " + step + " waiting"
	case EventGateAnswered:
		return "gate " + step + " " + ev.Action
	}
	return ""
}

// gateRequest is the question of gate (ev, its gate:waiting event) of
// run: the gate's text and schema. Its _meta tells the host that a client
// unable to answer must not decline for the person (see
// host.MetaKeyAnswerElsewhere).
func gateRequest(run, gate string, ev *Event) *mcp.ElicitParams {
	sch := ev.Schema
	if len(sch) == 0 {
		sch = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return &mcp.ElicitParams{Message: ev.Text, RequestedSchema: sch, Meta: mcp.Meta{host.MetaKeyAnswerElsewhere: answerHint(run, gate)}}
}

// answerHint names the way to answer a gate without the calling client.
func answerHint(run, gate string) string {
	return fmt.Sprintf("run %s keeps waiting at gate %s; answer it with `switchboard runs answer %s %s --value JSON`", run, gate, run, gate)
}

// resolveHint says what a caller can do of a run interrupted at step.
func resolveHint(run, step string, attempt int) string {
	return fmt.Sprintf("run %s is interrupted at step %s: attempt %d was in flight when its process stopped, and the step is not idempotent, so it is not called again unasked; "+
		"a person resolves it with `switchboard runs resolve %s %s --retry|--skip|--fail`, after which a call with the same idempotency key follows the run again", run, step, attempt, run, step)
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
