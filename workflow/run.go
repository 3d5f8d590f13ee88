package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
)

// A run is one DBOS workflow (runWorkflow). Its function is the DAG
// scheduler: deterministic code that decides what runs next from the
// results so far, so that DBOS can replay it after a crash. Each tool or
// agent call is a DBOS step started with dbos.Go, which numbers the step
// when it is started, in the scheduler's goroutine; the scheduler starts
// steps in file order and learns which one ended through dbos.Select,
// which records its choice: a replay makes the same choices in the same
// order, so the same steps get the same numbers and a completed step's
// recorded result is returned instead of calling it again. A workflow
// step is a DBOS child workflow and a gate a child workflow that waits in
// dbos.Recv; the parent waits for either in a step of its own, so that
// neither holds the scheduler.

// runInput is a run's DBOS workflow input.
type runInput struct {
	Workflow string         `json:"workflow"`
	Digest   string         `json:"digest"`
	Inputs   map[string]any `json:"inputs,omitempty"`
	// InputsDigest is inputsDigest(Inputs) as Start saw them: a Start of
	// the run's id with other inputs is refused (see StartOptions.RunID).
	InputsDigest string `json:"inputs_digest,omitempty"`
	// Depth is how deeply the run nests (Limits.MaxDepth): 0 for a run a
	// person or client started (and for runs recorded before it was).
	Depth int `json:"depth,omitempty"`
	// MCPServers and Tools are the run's own selection for its agent
	// steps (StartOptions), which the runs its workflow steps start
	// inherit; nil: none made.
	MCPServers *Selection `json:"mcp_servers,omitempty"`
	Tools      *Selection `json:"tools,omitempty"`
}

// runOutput is a run's DBOS workflow output: a failed run is a successful
// DBOS workflow whose output says why, so that the reason is kept whole.
type runOutput struct {
	Outputs map[string]any `json:"outputs,omitempty"`
	Error   *RunError      `json:"error,omitempty"`
}

// outcome is what one task's step returns. A tool or agent step that
// was interrupted (see begin) returns an Error of code ErrInterrupted,
// which the scheduler takes as a question for a person, not a failure.
type outcome struct {
	Step       string    `json:"step"`
	Item       int       `json:"item"`
	Result     any       `json:"result,omitempty"`
	Error      *RunError `json:"error,omitempty"`
	Action     string    `json:"action,omitempty"` // a gate's: accept, decline, timeout; a resolution's: retry, skip, fail
	Attempt    int       `json:"attempt,omitempty"`
	DurationMS int64     `json:"duration_ms,omitempty"`
	// Guardrails is what the host's guardrails did to a tool step's call
	// (its result's _meta), for the step's event: never the matched text.
	Guardrails []guardrail.Record `json:"guardrails,omitempty"`
	// Skipped: a person resolved the interrupted step with skip (set by
	// the scheduler, never recorded).
	Skipped bool `json:"-"`
}

// task is what the scheduler starts: a step, or one item of a for_each.
type task struct {
	owner *Step // the step of the DAG
	step  *Step // what runs: owner, or a for_each's inner step
	item  int   // the for_each item's index, -1 otherwise
	value any   // the item
	// attempt is the first attempt a tool or agent task makes: 1, or
	// the one after an interrupted attempt a person chose to retry.
	attempt int
	// resolve, when set, makes the task the wait for a person's
	// resolution of its interrupted attempt resolve.
	resolve int
}

func (t task) firstAttempt() int { return max(t.attempt, 1) }

func (t task) key() string {
	if t.item < 0 {
		return t.owner.ID
	}
	return t.owner.ID + "/" + strconv.Itoa(t.item)
}

func (t task) itemPtr() *int {
	if t.item < 0 {
		return nil
	}
	i := t.item
	return &i
}

// run is one execution of a run's workflow function.
type run struct {
	e     *Engine
	ctx   dbos.Context
	id    string
	wf    *Workflow
	scope *Scope
	start time.Time
	// workflow is the run's workflow id (its input's, even when that
	// workflow is gone).
	workflow string
	// in is the run's input: its nesting depth (runInput.Depth), its
	// selection for agent steps.
	in runInput
}

func (r *run) emit(key string, ev Event) {
	ev.RunID = r.id
	if _, err := r.e.events.emit(r.ctx, r.workflow, key, &ev); err != nil {
		r.e.logger.Warn("workflow: an event was not recorded", "run", r.id, "event", ev.Type, "error", err)
	}
}

func (r *run) since() *int64 {
	d := time.Since(r.start).Milliseconds()
	return &d
}

// runWorkflow is the DBOS workflow of a run.
func (e *Engine) runWorkflow(ctx dbos.Context, in runInput) (runOutput, error) {
	id, err := ctx.GetWorkflowID()
	if err != nil {
		return runOutput{}, err
	}
	defer e.wake()
	r := &run{e: e, ctx: ctx, id: id, start: time.Now(), workflow: in.Workflow, in: in}
	wf := e.workflows[in.Workflow]
	switch {
	case wf == nil:
		return r.fail("", &RunError{Code: ErrDefinition, Message: fmt.Sprintf("workflow %q is no longer defined; the run is not resumed", in.Workflow)})
	case wf.Digest != in.Digest:
		return r.fail("", &RunError{Code: ErrDefinition, Message: fmt.Sprintf(
			"workflow %q changed since the run started (digest %s, now %s); the run is not resumed on the new definition", in.Workflow, short(in.Digest), short(wf.Digest))})
	}
	r.wf = wf
	// Stored once: a recovered run keeps the servers its start found
	// failed.
	r.emit("run:started", Event{Type: EventRunStarted, Workflow: wf.ID, Digest: wf.Digest, Inputs: e.events.value(in.Inputs),
		FailedServers: e.failedServers()})
	r.scope = &Scope{Inputs: in.Inputs, Steps: map[string]any{}, Vars: map[string]any{}}
	for name, t := range wf.Vars {
		v, err := t.Eval(r.scope)
		if err != nil {
			return r.fail("", &RunError{Code: ErrTemplate, Message: fmt.Sprintf("vars.%s: %v", name, err)})
		}
		r.scope.Vars[name] = v
	}
	return r.schedule()
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// fail ends the run with rerr, failed at step.
func (r *run) fail(step string, rerr *RunError) (runOutput, error) {
	if step != "" && rerr.Step == "" {
		rerr.Step = step
	}
	r.emit("run:end", Event{Type: EventRunFailed, Step: step, Error: r.redactErr(rerr), DurationMS: r.since()})
	return runOutput{Error: r.e.events.errAtRest(rerr)}, nil
}

func (r *run) redactErr(rerr *RunError) *RunError {
	c := *rerr
	c.Message = r.e.events.text(c.Message)
	return &c
}

// stepState is where a step of the DAG is.
type stepState int

const (
	notStarted stepState = iota
	started
	done
)

// forEachState tracks a for_each's items.
type forEachState struct {
	items   []any
	next    int // the next item to start
	running int
	ended   int
	results []any
}

type flight struct {
	t     task
	ch    <-chan dbos.StepOutcome[outcome]
	child string // the child workflow it waits on, if any
	gate  bool
}

// schedule runs the DAG to its end.
func (r *run) schedule() (runOutput, error) {
	wf := r.wf
	state := map[string]stepState{}
	each := map[string]*forEachState{}
	var inFlight []*flight
	var settledNow []outcomeOf // outcomes known without a step (templates that failed)
	arrived := map[string]outcome{}
	skipRest := false
	limit := wf.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	// Cancelled when the run fails, to stop what is still in flight.
	ctx, cancel := dbos.WithCancel(r.ctx)
	defer cancel()

	ready := func(s *Step) bool {
		for _, n := range s.Needs {
			if state[n] != done {
				return false
			}
		}
		return true
	}
	busy := func() int {
		n := 0
		for _, f := range inFlight {
			if !f.gate {
				n++
			}
		}
		return n
	}
	abort := func(step string, rerr *RunError) (runOutput, error) {
		cancel()
		for _, f := range inFlight {
			if f.child != "" {
				dbos.CancelWorkflow(r.e.dbos, f.child)
			}
		}
		for _, f := range inFlight {
			<-f.ch
		}
		return r.fail(step, rerr)
	}

	for {
		// Start what can start, in file order.
		progressed := true
		for progressed {
			progressed = false
			for _, s := range wf.Steps {
				switch {
				case state[s.ID] == done:
					continue
				case state[s.ID] == started:
					fe := each[s.ID]
					for fe != nil && fe.next < len(fe.items) && fe.running < forEachLimit(s) && busy() < limit {
						t := task{owner: s, step: s.ForEach.Step, item: fe.next, value: fe.items[fe.next]}
						fe.next++
						fe.running++
						f, o := r.launch(ctx, t)
						if f != nil {
							inFlight = append(inFlight, f)
						} else {
							settledNow = append(settledNow, outcomeOf{t, o})
						}
					}
					continue
				case !ready(s):
					continue
				}
				if skipRest {
					state[s.ID] = done
					r.scope.Steps[s.ID] = nil
					r.emit("step:completed/"+s.ID, Event{Type: EventStepCompleted, Step: s.ID, Skipped: true})
					progressed = true
					continue
				}
				if s.If != nil {
					ok, err := s.If.Truth(r.scope)
					if err != nil {
						return abort(s.ID, &RunError{Code: ErrTemplate, Message: fmt.Sprintf("step %s: if: %v", s.ID, err)})
					}
					if !ok {
						state[s.ID] = done
						r.scope.Steps[s.ID] = nil
						r.emit("step:completed/"+s.ID, Event{Type: EventStepCompleted, Step: s.ID, Skipped: true})
						progressed = true
						continue
					}
				}
				if s.Kind != StepGate && busy() >= limit {
					continue
				}
				state[s.ID] = started
				progressed = true
				if s.Kind == StepForEach {
					items, err := r.items(s)
					if err != nil {
						return abort(s.ID, &RunError{Code: ErrTemplate, Message: fmt.Sprintf("step %s: for_each items: %v", s.ID, err)})
					}
					if max, where := r.maxItems(s); len(items) > max {
						return abort(s.ID, &RunError{Code: ErrLimit, Message: fmt.Sprintf("step %s: for_each has %d items, more than its bound of %d (%s)", s.ID, len(items), max, where)})
					}
					each[s.ID] = &forEachState{items: items, results: make([]any, len(items))}
					r.emit("step:started/"+s.ID, Event{Type: EventStepStarted, Step: s.ID, Attempt: 1})
					if len(items) == 0 {
						state[s.ID] = done
						r.scope.Steps[s.ID] = []any{}
						r.emit("step:completed/"+s.ID, Event{Type: EventStepCompleted, Step: s.ID, Result: r.e.events.value([]any{})})
					}
					continue
				}
				t := task{owner: s, step: s, item: -1}
				f, o := r.launch(ctx, t)
				if f != nil {
					inFlight = append(inFlight, f)
				} else {
					settledNow = append(settledNow, outcomeOf{t, o})
				}
			}
		}

		// An outcome known at once, or the next step to end.
		var t task
		var o outcome
		switch {
		case len(settledNow) > 0:
			t, o = settledNow[0].t, settledNow[0].o
			settledNow = settledNow[1:]
		case len(inFlight) == 1:
			// One step in flight: there is nothing to choose, and a replay
			// meets the same single step (what is in flight follows from
			// the choices recorded so far), so no choice is recorded: a
			// chain of steps costs one DBOS step each, not two.
			f := inFlight[0]
			inFlight = inFlight[:0]
			key := f.t.key()
			var ok bool
			if o, ok = arrived[key]; ok {
				delete(arrived, key)
			} else {
				var so dbos.StepOutcome[outcome]
				select {
				case so, ok = <-f.ch:
					if !ok {
						return runOutput{}, fmt.Errorf("run %s: step %s: no outcome", r.id, key)
					}
				case <-r.ctx.Done():
					return r.interrupted(context.Cause(r.ctx))
				}
				if so.Err != nil {
					return r.interrupted(so.Err)
				}
				o = so.Result
			}
			t = f.t
		case len(inFlight) > 0:
			key, err := dbos.RunAsStep(r.ctx, func(sctx context.Context) (string, error) {
				return r.next(sctx, inFlight, arrived)
			}, dbos.WithStepName("switchboard.next"))
			if err != nil {
				// The run itself was interrupted: cancelled, timed out, or
				// the engine is closing (then it resumes at the next start).
				return r.interrupted(err)
			}
			found := slices.IndexFunc(inFlight, func(f *flight) bool { return f.t.key() == key })
			if found < 0 {
				return runOutput{}, fmt.Errorf("run %s: the next step recorded is %s, which is not running", r.id, key)
			}
			f := inFlight[found]
			inFlight = slices.Delete(inFlight, found, found+1)
			var ok bool
			if o, ok = arrived[key]; ok {
				delete(arrived, key)
			} else {
				so := <-f.ch // a replay: the step's recorded outcome
				if so.Err != nil {
					return r.interrupted(so.Err)
				}
				o = so.Result
			}
			t = f.t
		default:
			return r.complete()
		}

		// A step interrupted, or resolved by a person.
		if t.resolve > 0 {
			var f *flight
			var rerr *RunError
			if f, o, rerr = r.resolved(ctx, t, o); rerr != nil {
				return abort(t.owner.ID, rerr)
			}
			if f != nil {
				inFlight = append(inFlight, f)
				continue
			}
			t.resolve = 0
			if !o.Skipped {
				// The retry ended before it started (its arguments).
				settledNow = append(settledNow, outcomeOf{t, o})
				continue
			}
		} else if o.Error != nil && o.Error.Code == ErrInterrupted {
			f, io := r.interrupt(ctx, t, o)
			if f != nil {
				inFlight = append(inFlight, f)
			} else {
				settledNow = append(settledNow, outcomeOf{t, io})
			}
			continue
		}

		// Settle it.
		res, rerr, skip := r.settle(t, o)
		if skip {
			skipRest = true
		}
		if t.item >= 0 {
			fe := each[t.owner.ID]
			fe.running--
			fe.ended++
			if rerr != nil {
				return abort(t.owner.ID, rerr)
			}
			fe.results[t.item] = res
			if fe.ended == len(fe.items) {
				state[t.owner.ID] = done
				r.scope.Steps[t.owner.ID] = fe.results
				r.emit("step:completed/"+t.owner.ID, Event{Type: EventStepCompleted, Step: t.owner.ID, Result: r.e.events.value(fe.results)})
			}
			continue
		}
		if rerr != nil {
			return abort(t.owner.ID, rerr)
		}
		state[t.owner.ID] = done
		r.scope.Steps[t.owner.ID] = res
	}
}

type outcomeOf struct {
	t task
	o outcome
}

func taskKey(step string, item int) string {
	if item < 0 {
		return step
	}
	return step + "/" + strconv.Itoa(item)
}

func forEachLimit(s *Step) int {
	if s.ForEach.Concurrency > 0 {
		return s.ForEach.Concurrency
	}
	return DefaultConcurrency
}

// maxItems is the bound of for_each s's items, and where it is set.
func (r *run) maxItems(s *Step) (int, string) {
	if n := s.ForEach.MaxItems; n > 0 {
		return n, "its max_items"
	}
	return r.e.limits.MaxItems, "[limits] max_for_each_items"
}

// items renders a for_each's list.
func (r *run) items(s *Step) ([]any, error) {
	v, err := s.ForEach.Items.Eval(r.scope)
	if err != nil {
		return nil, err
	}
	if str, ok := v.(string); ok {
		if err := json.Unmarshal([]byte(str), &v); err != nil {
			return nil, fmt.Errorf("not a JSON list: %v", err)
		}
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list but %T", v)
	}
	return list, nil
}

// interrupted ends a run whose context ended.
func (r *run) interrupted(err error) (runOutput, error) {
	if errors.Is(context.Cause(r.ctx), context.DeadlineExceeded) {
		out, _ := r.fail("", &RunError{Code: ErrTimeout, Message: fmt.Sprintf("the run took longer than its timeout (%s)", r.wf.Timeout)})
		return out, err
	}
	return runOutput{}, err
}

// complete renders the outputs and ends the run.
func (r *run) complete() (runOutput, error) {
	outputs := map[string]any{}
	for _, o := range r.wf.Outputs {
		var v any
		var err error
		if o.Type == "" || o.Type == "string" {
			v, err = render(o.Value, r.scope)
		} else {
			v, err = o.Value.Eval(r.scope)
		}
		if err != nil {
			return r.fail("", &RunError{Code: ErrTemplate, Message: fmt.Sprintf("outputs.%s: %v", o.Name, err)})
		}
		outputs[o.Name] = v
	}
	// DBOS keeps the outputs: a template may have joined a secret from
	// pieces that are none alone.
	outputs = r.e.events.atRest(outputs).(map[string]any)
	r.emit("run:end", Event{Type: EventRunCompleted, Outputs: r.e.events.value(outputs), DurationMS: r.since()})
	return runOutput{Outputs: outputs}, nil
}

// itemScope is the scope of a task: the run's, plus the item in a for_each.
func (r *run) itemScope(t task) *Scope {
	if t.item < 0 {
		return r.scope
	}
	s := *r.scope
	s.ItemName = t.owner.ForEach.As
	if s.ItemName == "" {
		s.ItemName = "item"
	}
	s.Item, s.Index = t.value, t.item
	return &s
}

// launch starts a task. It returns its flight, or, when the task failed
// before anything started (a template), its outcome.
func (r *run) launch(ctx dbos.Context, t task) (*flight, outcome) {
	s := t.step
	scope := r.itemScope(t)
	failed := func(format string, args ...any) (*flight, outcome) {
		return nil, outcome{Step: t.owner.ID, Item: t.item, Attempt: 1,
			Error: &RunError{Code: ErrTemplate, Message: fmt.Sprintf("step %s: "+format, append([]any{t.key()}, args...)...)}}
	}
	switch s.Kind {
	case StepTool:
		args, err := s.Arguments.Eval(scope)
		if err != nil {
			return failed("arguments: %v", err)
		}
		raw, err := json.Marshal(args)
		if err != nil {
			return failed("arguments: %v", err)
		}
		if args == nil {
			raw = nil
		}
		return r.goStep(ctx, t, "tool:"+s.Tool, func(sctx context.Context, attempt int) (any, *RunError) {
			return r.callTool(sctx, s, raw, r.idempotencyKey(t, attempt))
		}), outcome{}
	case StepAgent:
		prompt, err := render(s.Prompt, scope)
		if err != nil {
			return failed("prompt: %v", err)
		}
		return r.goStep(ctx, t, "agent:"+s.Agent, func(sctx context.Context, _ int) (any, *RunError) {
			return r.runAgent(sctx, s, prompt)
		}), outcome{}
	case StepWorkflow:
		with, err := s.With.Eval(scope)
		if err != nil {
			return failed("with: %v", err)
		}
		inputs, _ := with.(map[string]any)
		child := r.id + "/" + t.key()
		wf := r.e.workflows[s.Workflow]
		if wf == nil {
			return nil, outcome{Step: t.owner.ID, Item: t.item, Attempt: 1,
				Error: &RunError{Code: ErrDefinition, Message: fmt.Sprintf("step %s: workflow %q is not defined", t.key(), s.Workflow)}}
		}
		// A workflow that runs itself, or others that run it, nests
		// runs without end unless something stops it: here, before the
		// child exists.
		if depth, max := r.in.Depth+1, r.e.limits.MaxDepth; depth > max {
			return nil, outcome{Step: t.owner.ID, Item: t.item, Attempt: 1,
				Error: &RunError{Code: ErrLimit, Message: fmt.Sprintf("step %s: %s", t.key(), depthError("workflow "+wf.ID, depth, max))}}
		}
		inputs, err = applyInputs(wf, inputs)
		if err != nil {
			return nil, outcome{Step: t.owner.ID, Item: t.item, Attempt: 1,
				Error: &RunError{Code: ErrChildWorkflow, Message: fmt.Sprintf("step %s: %v", t.key(), r.e.events.text(err.Error()))}}
		}
		// DBOS keeps the child's inputs.
		inputs = r.e.events.atRest(inputs).(map[string]any)
		r.emit("step:started/"+t.key(), Event{Type: EventStepStarted, Step: t.owner.ID, Item: t.itemPtr(), Attempt: 1})
		cctx := ctx
		if s.Timeout > 0 {
			var c context.CancelFunc
			cctx, c = dbos.WithTimeout(ctx, s.Timeout)
			_ = c // the child's deadline is durable; it outlives this call
		}
		// The run's own selection for agent steps holds in the runs it
		// starts, one deeper.
		cin := runInput{Workflow: wf.ID, Digest: wf.Digest, Inputs: inputs, Depth: r.in.Depth + 1, MCPServers: r.in.MCPServers, Tools: r.in.Tools}
		if _, err := dbos.RunWorkflow(cctx, r.e.runWorkflow, cin, dbos.WithWorkflowID(child)); err != nil {
			return nil, outcome{Step: t.owner.ID, Item: t.item, Attempt: 1,
				Error: &RunError{Code: ErrChildWorkflow, Message: fmt.Sprintf("step %s: starting workflow %s: %v", t.key(), wf.ID, err)}}
		}
		f := r.goRaw(ctx, t, "workflow:"+wf.ID, func(sctx context.Context) (any, *RunError) {
			var out runOutput
			if err := r.e.awaitChild(sctx, child, &out); err != nil {
				return nil, &RunError{Code: ErrChildWorkflow, Message: fmt.Sprintf("workflow %s (run %s): %v", wf.ID, child, err)}
			}
			if out.Error != nil {
				where := ""
				if out.Error.Step != "" {
					where = " at step " + out.Error.Step
				}
				return nil, &RunError{Code: ErrChildWorkflow, Message: fmt.Sprintf("workflow %s (run %s) failed%s: %s", wf.ID, child, where, out.Error.Message)}
			}
			return out.Outputs, nil
		})
		f.child = child
		return f, outcome{}
	case StepGate:
		msg, err := render(s.Gate.Message, scope)
		if err != nil {
			return failed("message: %v", err)
		}
		child := gateRunID(r.id, t.key())
		ev := Event{Type: EventGateWaiting, Step: t.owner.ID, Item: t.itemPtr(), Text: r.e.events.text(msg), Schema: s.Gate.Schema}
		if s.Gate.Timeout > 0 {
			d := time.Now().Add(s.Gate.Timeout).UTC()
			ev.Deadline = &d
		}
		if _, err := dbos.RunWorkflow(ctx, r.e.gateWorkflow, gateInput{Run: r.id, Step: t.key(), Message: r.e.events.text(msg), TimeoutMS: s.Gate.Timeout.Milliseconds()},
			dbos.WithWorkflowID(child)); err != nil {
			return nil, outcome{Step: t.owner.ID, Item: t.item, Error: &RunError{Code: ErrCallFailed, Message: fmt.Sprintf("gate %s: %v", t.key(), err)}}
		}
		r.emit("gate:waiting/"+t.key(), ev)
		f := r.goRaw(ctx, t, "gate:"+t.key(), func(sctx context.Context) (any, *RunError) {
			var a GateAnswer
			if err := r.e.awaitChild(sctx, child, &a); err != nil {
				return nil, &RunError{Code: ErrCallFailed, Message: fmt.Sprintf("gate %s: %v", t.key(), err)}
			}
			return a, nil
		})
		f.child, f.gate = child, true
		return f, outcome{}
	}
	return nil, outcome{Step: t.owner.ID, Item: t.item, Error: &RunError{Code: ErrDefinition, Message: fmt.Sprintf("step %s: kind %q cannot run here", t.key(), s.Kind)}}
}

// goStep starts a tool or agent task as a DBOS step, with its retries:
// do makes one attempt (numbered from 1 over the task's life: a retry a
// person chose after an interruption goes on from the attempt
// interrupted).
func (r *run) goStep(ctx dbos.Context, t task, name string, do func(ctx context.Context, attempt int) (any, *RunError)) *flight {
	s := t.step
	attempts := 1
	if s.Retry != nil && (s.Kind != StepTool || s.Idempotent) {
		attempts = max(s.Retry.Attempts, 1)
	}
	first := t.firstAttempt()
	return r.goRaw(ctx, t, name, func(sctx context.Context) (any, *RunError) {
		delay := time.Duration(0)
		if s.Retry != nil {
			delay = s.Retry.Backoff
		}
		idempotent := r.idempotent(s)
		for a := first; ; a++ {
			if a > first {
				r.emit(startedKey(t.key(), a), Event{Type: EventStepStarted, Step: t.owner.ID, Item: t.itemPtr(), Attempt: a})
			}
			if rerr := r.begin(sctx, t, a, idempotent); rerr != nil {
				return nil, rerr
			}
			actx := sctx
			if f := r.e.opts.StepContext; f != nil {
				actx = f(sctx, Event{Type: EventStepStarted, RunID: r.id, Workflow: r.workflow, Step: t.owner.ID, Item: t.itemPtr(), Attempt: a})
			}
			res, rerr := do(actx, a)
			if rerr == nil || a-first+1 >= attempts || sctx.Err() != nil {
				if rerr != nil {
					rerr.attempt = a
				}
				return res, rerr
			}
			r.emit(fmt.Sprintf("step:failed/%s#%d", t.key(), a), Event{Type: EventStepFailed, Step: t.owner.ID, Item: t.itemPtr(), Attempt: a, Error: r.redactErr(rerr),
				Guardrails: guardedRecords(res)})
			select {
			case <-time.After(delay):
			case <-sctx.Done():
				return nil, &RunError{Code: ErrCancelled, Message: "cancelled while waiting to retry", attempt: a}
			}
			delay *= 2
			if s.Retry.MaxDelay > 0 && delay > s.Retry.MaxDelay {
				delay = s.Retry.MaxDelay
			}
		}
	})
}

// goRaw starts fn as a DBOS step (dbos.Go: numbered now, run in its own
// goroutine). The step never fails as far as DBOS is concerned: a failure
// is part of its outcome, recorded like a result, so that a replay sees it
// without running the step again.
func (r *run) goRaw(ctx dbos.Context, t task, name string, fn func(context.Context) (any, *RunError)) *flight {
	if (t.step.Kind == StepTool || t.step.Kind == StepAgent) && t.resolve == 0 {
		r.emit(startedKey(t.key(), t.firstAttempt()), Event{Type: EventStepStarted, Step: t.owner.ID, Item: t.itemPtr(), Attempt: t.firstAttempt()})
	}
	ch, err := dbos.Go(ctx, func(sctx context.Context) (outcome, error) {
		start := time.Now()
		res, rerr := fn(sctx)
		var recs []guardrail.Record
		if g, ok := res.(guarded); ok {
			res, recs = g.value, g.recs
		}
		o := outcome{Step: t.owner.ID, Item: t.item, Result: res, Error: rerr, Attempt: t.firstAttempt(), DurationMS: time.Since(start).Milliseconds(), Guardrails: recs}
		if rerr != nil && rerr.attempt > 0 {
			o.Attempt = rerr.attempt
		}
		if a, ok := res.(GateAnswer); ok {
			o.Action, o.Result = a.Action, a.Content
		}
		// DBOS keeps the outcome, and a replay sees it: the run goes on
		// with what is kept.
		o.Result, o.Error = r.e.events.atRest(o.Result), r.e.events.errAtRest(o.Error)
		return o, nil
	}, dbos.WithStepName(name), dbos.WithStepMaxRetries(0))
	if err != nil {
		c := make(chan dbos.StepOutcome[outcome], 1)
		c <- dbos.StepOutcome[outcome]{Result: outcome{Step: t.owner.ID, Item: t.item, Error: &RunError{Code: ErrCallFailed, Message: err.Error()}}}
		close(c)
		ch = c
	}
	return &flight{t: t, ch: ch}
}

// next waits for one of the steps in flight to end and returns its key.
// It runs as a DBOS step: the choice is recorded, and a replay takes the
// steps' outcomes in the order they were first taken, whatever order they
// come back in. The outcome received is left in arrived.
func (r *run) next(ctx context.Context, inFlight []*flight, arrived map[string]outcome) (string, error) {
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}}
	for _, f := range inFlight {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(f.ch)})
	}
	i, v, ok := reflect.Select(cases)
	if i == 0 {
		return "", context.Cause(ctx)
	}
	f := inFlight[i-1]
	if !ok {
		return "", fmt.Errorf("step %s: no outcome", f.t.key())
	}
	so := v.Interface().(dbos.StepOutcome[outcome])
	if so.Err != nil {
		return "", so.Err
	}
	arrived[f.t.key()] = so.Result
	return f.t.key(), nil
}

// settle applies a task's outcome: its events, and the result the DAG
// sees. It returns the error that fails the run, if any, and whether the
// rest of the run is skipped (a gate's skip_rest).
func (r *run) settle(t task, o outcome) (result any, rerr *RunError, skipRest bool) {
	s := t.step
	ev := func(typ EventType) Event {
		return Event{Type: typ, Step: t.owner.ID, Item: t.itemPtr(), Attempt: o.Attempt}
	}
	if s.Kind == StepGate && o.Error == nil {
		e := ev(EventGateAnswered)
		e.Attempt = 0
		e.Action = o.Action
		e.Result = r.e.events.value(o.Result)
		r.emit("gate:answered/"+t.key(), e)
		policy, code, why := GateContinue, ErrorCode(""), ""
		switch o.Action {
		case "accept":
			if o.Result == nil {
				o.Result = map[string]any{}
			}
			return o.Result, nil, false
		case "decline":
			policy, code, why = s.Gate.OnDecline, ErrGateDeclined, "declined"
		default:
			policy, code, why = s.Gate.OnTimeout, ErrGateTimeout, "not answered in time"
		}
		switch policy {
		case GateSkipRest:
			return nil, nil, true
		case GateContinue:
			return nil, nil, false
		default:
			return nil, &RunError{Code: code, Message: fmt.Sprintf("gate %s was %s", t.key(), why), Step: t.owner.ID}, false
		}
	}
	if o.Error != nil {
		e := ev(EventStepFailed)
		e.Error = r.redactErr(o.Error)
		e.Guardrails = o.Guardrails
		if t.owner.OnError == OnErrorContinue || (t.item >= 0 && s.OnError == OnErrorContinue) {
			e.Continued = true
			r.emit("step:failed/"+t.key(), e)
			def := t.owner.Default
			if t.item >= 0 {
				def = s.Default
			}
			return def, nil, false
		}
		r.emit("step:failed/"+t.key(), e)
		o.Error.Step = t.owner.ID
		return nil, o.Error, false
	}
	e := ev(EventStepCompleted)
	e.Skipped = o.Skipped
	e.Result = r.e.events.value(o.Result)
	e.Guardrails = o.Guardrails
	d := o.DurationMS
	e.DurationMS = &d
	r.emit("step:completed/"+t.key(), e)
	return o.Result, nil, false
}

// idempotencyKey is the key a tool step's call carries in its _meta
// (host.MetaKeyIdempotencyKey, the key a client's call to a published
// workflow carries too), "RUN/STEP/ATTEMPT" (STEP is the step's id, with
// /ITEM for an item of a for_each): the same for every call of one
// attempt (recovery calls an idempotent step's attempt again under the
// same key), another for each attempt. A server that can deduplicate does
// with it; a published workflow called by a step is one run per key.

func (r *run) idempotencyKey(t task, attempt int) string {
	return r.id + "/" + t.key() + "/" + strconv.Itoa(attempt)
}

func startedKey(key string, attempt int) string {
	if attempt <= 1 {
		return "step:started/" + key
	}
	return fmt.Sprintf("step:started/%s#%d", key, attempt)
}

// idempotent reports whether step s may be called again when an attempt
// of it was in flight as its process stopped: marked idempotent: true,
// or a tool step whose tool declares readOnlyHint or idempotentHint. An
// agent step is not unless marked: its model chooses its tool calls.
func (r *run) idempotent(s *Step) bool {
	if s.Idempotent {
		return true
	}
	if s.Kind != StepTool {
		return false
	}
	h, _ := r.e.hostRedactor()
	if h == nil {
		return false
	}
	t, ok := h.Tool(s.Tool)
	if !ok || t.Tool == nil || t.Tool.Annotations == nil {
		return false
	}
	return t.Tool.Annotations.ReadOnlyHint || t.Tool.Annotations.IdempotentHint
}

// begin is what an attempt of a tool or agent step does before it calls
// anything, inside the step's DBOS step:
//
//   - This process must still hold its executor's lock (EngineOptions.
//     Executor), checked now: a process that lost it (fenced: another may
//     have adopted the run) calls nothing. Its engine stops on its own;
//     the step waits for that, so that DBOS records no outcome for it and
//     the process that runs the run now runs the step.
//   - The attempt is recorded as started (markAttempt), before the call.
//     Found recorded already, an execution of this attempt was in flight
//     when its process stopped (or another process runs it now): the call
//     may have been made. An idempotent step is called again (as recovery
//     always did); another is not, and the attempt ends as interrupted
//     (ErrInterrupted), for a person to resolve.
func (r *run) begin(ctx context.Context, t task, attempt int, idempotent bool) *RunError {
	if err := r.e.fence(ctx); err != nil {
		<-ctx.Done()
		return &RunError{Code: ErrCancelled, Message: fmt.Sprintf("step %s not called: %v", t.key(), err), attempt: attempt}
	}
	fresh, err := r.e.events.markAttempt(ctx, r.id, t.key(), attempt, r.e.ExecutorID())
	if err != nil {
		return &RunError{Code: ErrCallFailed, Message: fmt.Sprintf("not called: %v", err), attempt: attempt}
	}
	if fresh || idempotent {
		return nil
	}
	if last, err := r.e.events.lastAttempt(ctx, r.id, t.key()); err == nil && last > attempt {
		attempt = last
	}
	return &RunError{Code: ErrInterrupted, attempt: attempt, Message: fmt.Sprintf(
		"step %s: attempt %d was in flight when its process stopped, and the step is not idempotent: it is not called again until a person resolves it (retry, skip or fail)", t.key(), attempt)}
}

// interrupt makes the interrupted attempt of t (outcome o) wait for a
// person's resolution: a child workflow that receives it durably, as a
// gate's answer, and a flight that waits on it.
func (r *run) interrupt(ctx dbos.Context, t task, o outcome) (*flight, outcome) {
	child := resolveRunID(r.id, t.key(), o.Attempt)
	if _, err := dbos.RunWorkflow(ctx, r.e.gateWorkflow, gateInput{Run: r.id, Step: t.key(), Message: o.Error.Message},
		dbos.WithWorkflowID(child)); err != nil {
		return nil, outcome{Step: t.owner.ID, Item: t.item, Attempt: o.Attempt,
			Error: &RunError{Code: ErrCallFailed, Message: fmt.Sprintf("step %s: interrupted, and waiting for its resolution failed: %v", t.key(), err)}}
	}
	r.emit(fmt.Sprintf("step:interrupted/%s#%d", t.key(), o.Attempt),
		Event{Type: EventStepInterrupted, Step: t.owner.ID, Item: t.itemPtr(), Attempt: o.Attempt, Error: r.redactErr(o.Error)})
	rt := t
	rt.resolve = o.Attempt
	f := r.goRaw(ctx, rt, "resolve:"+t.key(), func(sctx context.Context) (any, *RunError) {
		var a GateAnswer
		if err := r.e.awaitChild(sctx, child, &a); err != nil {
			return nil, &RunError{Code: ErrCallFailed, Message: fmt.Sprintf("step %s: waiting for its resolution: %v", t.key(), err)}
		}
		return a, nil
	})
	f.child, f.gate = child, true
	return f, outcome{}
}

func resolveRunID(run, step string, attempt int) string {
	return run + "/resolve/" + step + "#" + strconv.Itoa(attempt)
}

// resolved applies a person's resolution (outcome o of the wait t) of an
// interrupted attempt: retry launches the task again from the next
// attempt (its flight, or the outcome of a launch that failed at once),
// skip returns an outcome with the step's default as its result, fail
// returns the run's error.
func (r *run) resolved(ctx dbos.Context, t task, o outcome) (*flight, outcome, *RunError) {
	if o.Error != nil {
		o.Error.Step = t.owner.ID
		return nil, outcome{}, o.Error
	}
	r.emit(fmt.Sprintf("step:resolved/%s#%d", t.key(), t.resolve),
		Event{Type: EventStepResolved, Step: t.owner.ID, Item: t.itemPtr(), Attempt: t.resolve, Action: o.Action})
	switch Resolution(o.Action) {
	case ResolveRetry:
		nt := t
		nt.resolve, nt.attempt = 0, t.resolve+1
		f, lo := r.launch(ctx, nt)
		return f, lo, nil
	case ResolveSkip:
		def := t.owner.Default
		if t.item >= 0 {
			def = t.step.Default
		}
		return nil, outcome{Step: t.owner.ID, Item: t.item, Result: def, Attempt: t.resolve, Skipped: true}, nil
	}
	return nil, outcome{}, &RunError{Code: ErrInterrupted, Step: t.owner.ID,
		Message: fmt.Sprintf("step %s: attempt %d was interrupted, and a person chose to fail the run", t.key(), t.resolve)}
}

// guarded is a tool step attempt's value (nil when it failed) with what
// the host's guardrails did to its call (its result's _meta,
// guardrail.MetaKey), for the step's events; goRaw puts them apart in the
// step's outcome.
type guarded struct {
	value any
	recs  []guardrail.Record
}

// guardedRecords are the records of an attempt's guarded value, if any.
func guardedRecords(v any) []guardrail.Record {
	g, _ := v.(guarded)
	return g.recs
}

// callTool runs a tool step through the host; its call carries key
// (host.MetaKeyIdempotencyKey) and the run's depth (MetaKeyDepth). The
// value is guarded when the host's guardrails acted on the call.
func (r *run) callTool(ctx context.Context, s *Step, args json.RawMessage, key string) (any, *RunError) {
	h, _ := r.e.hostRedactor()
	if h == nil {
		return nil, &RunError{Code: ErrCallFailed, Message: "no host to call " + s.Tool}
	}
	res, err := h.CallTool(ctx, s.Tool, args, &host.CallOptions{Timeout: s.Timeout,
		RequestOptions: host.RequestOptions{Meta: mcp.Meta{host.MetaKeyIdempotencyKey: key, MetaKeyDepth: r.in.Depth}}})
	if err != nil {
		code := ErrCallFailed
		if errors.Is(err, host.ErrTimeout) {
			code = ErrTimeout
		}
		return nil, &RunError{Code: code, Message: err.Error()}
	}
	v, rerr := toolValue(s, res)
	if recs, _ := res.Meta[guardrail.MetaKey].([]guardrail.Record); len(recs) > 0 {
		return guarded{v, recs}, rerr
	}
	return v, rerr
}

// toolValue is a tool step's value: the result's structured content, else
// its text; a result with isError fails the step.
func toolValue(s *Step, res *mcp.CallToolResult) (any, *RunError) {
	if res.IsError {
		return nil, &RunError{Code: ErrToolError, Message: fmt.Sprintf("tool %s: %s", s.Tool, resultText(res))}
	}
	if res.StructuredContent != nil {
		var v any
		if err := convert(res.StructuredContent, &v); err == nil {
			return v, nil
		}
	}
	return resultText(res), nil
}

// resultText joins a result's text blocks.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// runAgent runs an agent step.
func (r *run) runAgent(ctx context.Context, s *Step, prompt string) (any, *RunError) {
	if r.e.opts.Agents == nil {
		return nil, &RunError{Code: ErrAgentFailed, Message: fmt.Sprintf("agent %s: this engine runs no agents", s.Agent)}
	}
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	// The most specific selection wins: the run's, the step's, the
	// workflow's; none of them leaves the agent file's own.
	servers := firstSet(r.in.MCPServers, s.MCPServers, r.wf.MCPServers)
	tools := firstSet(r.in.Tools, s.AgentTools, r.wf.AgentTools)
	if servers.None() {
		tools = servers // no server, so no tool: tools inherited from a level that had servers name none of them
	}
	req := &AgentRequest{Agent: s.Agent, Prompt: prompt, MCPServers: servers.names(), Tools: tools.names()}
	res, err := r.e.opts.Agents.RunAgent(ctx, req)
	if err != nil {
		code := ErrAgentFailed
		if errors.Is(err, context.DeadlineExceeded) {
			code = ErrTimeout
		}
		return nil, &RunError{Code: code, Message: fmt.Sprintf("agent %s: %v", s.Agent, err)}
	}
	var v any
	if err := convert(res, &v); err != nil {
		return nil, &RunError{Code: ErrAgentFailed, Message: err.Error()}
	}
	return v, nil
}

// convert converts v (a live value, or what DBOS decoded from its record)
// into out, through JSON.
func convert(v any, out any) error {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case *string:
		if x == nil {
			return nil
		}
		b = []byte(*x)
	case string:
		// DBOS hands back a record it did not decode as its JSON text.
		if json.Valid([]byte(x)) {
			b = []byte(x)
		} else if b, err := json.Marshal(x); err == nil {
			return json.Unmarshal(b, out)
		}
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return err
		}
	}
	return json.Unmarshal(b, out)
}

// GateAnswer is a person's answer to a gate.
type GateAnswer struct {
	// Action is "accept" or "decline" ("timeout" when nobody answered in
	// time, set by the engine).
	Action string `json:"action"`
	// Content is the answer, valid against the gate's schema (accept only).
	Content map[string]any `json:"content,omitempty"`
}

// gateInput is a gate's DBOS workflow input.
type gateInput struct {
	Run       string `json:"run"`
	Step      string `json:"step"`
	Message   string `json:"message"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
}

// gateForever stands for a gate without a timeout: dbos.Recv records
// its deadline, so it must be a time.
const gateForever = 100 * 365 * 24 * time.Hour

func gateRunID(run, step string) string { return run + "/gate/" + step }

// gateWorkflow waits durably for a gate's answer.
func (e *Engine) gateWorkflow(ctx dbos.Context, in gateInput) (GateAnswer, error) {
	defer e.wake()
	timeout := time.Duration(in.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = gateForever
	}
	a, err := dbos.Recv[GateAnswer](ctx, gateTopic, timeout)
	if !errors.Is(err, dbos.ErrTimeout) {
		return a, err
	}
	if h := e.testHookGateTimedOut; h != nil {
		h(in.Run, in.Step)
	}
	// Nobody answered in time, unless an answer has claimed the gate since
	// the wait ended: the first claim closes the gate (gates.go).
	id, err := ctx.GetWorkflowID()
	if err != nil {
		return GateAnswer{}, err
	}
	won, err := dbos.RunAsStep(ctx, func(sctx context.Context) (bool, error) {
		won, _, err := e.events.claimGate(sctx, id, "timeout", nil)
		return won, err
	}, dbos.WithStepName("switchboard.gate.close"))
	if err != nil {
		return GateAnswer{}, err
	}
	if won {
		return GateAnswer{Action: "timeout"}, nil
	}
	// The answer that won was sent with its claim: it is there to take.
	return dbos.Recv[GateAnswer](ctx, gateTopic, claimedAnswerWait)
}

// claimedAnswerWait bounds the wait for the message of an answer whose
// claim the gate found: committed with the claim, it is there at once.
const claimedAnswerWait = time.Minute

// childPoll is how often a step waiting on a child workflow (a nested
// run, a gate) looks at it when nothing in this process said it ended: the
// child may run in another process.
const childPoll = time.Second

// awaitChild waits for the child workflow id to end and decodes its output
// into out.
func (e *Engine) awaitChild(ctx context.Context, id string, out any) error {
	err := e.repoll(ctx, func() (bool, error) {
		h, err := dbos.RetrieveWorkflow[any](e.dbos, id)
		if err != nil {
			return false, err
		}
		st, err := h.GetStatus()
		if err != nil {
			return false, err
		}
		switch st.Status {
		case dbos.WorkflowStatusSuccess:
			v, err := h.GetResult()
			if err != nil {
				return false, err
			}
			return true, convert(v, out)
		case dbos.WorkflowStatusError, dbos.WorkflowStatusMaxRecoveryAttemptsExceeded:
			if st.Error != nil {
				return false, st.Error
			}
			return false, errors.New("failed")
		case dbos.WorkflowStatusCancelled:
			return false, errors.New("cancelled")
		}
		return false, nil
	})
	if err != nil && err == ctx.Err() {
		return context.Cause(ctx)
	}
	return err
}

// repoll calls look until it reports done or fails, and returns its error,
// or ctx's when ctx ends first. It looks again when this process wakes
// waiters (e.wake), and every childPoll otherwise: what it waits for may
// happen in another process. A wake comes just before DBOS writes a run's
// status (a run this process did not start, such as a recovered one, or a
// child): after one it looks again a few times quickly.
func (e *Engine) repoll(ctx context.Context, look func() (done bool, err error)) error {
	fast := 0
	for {
		kick := e.kicked()
		if done, err := look(); done || err != nil {
			return err
		}
		wait := childPoll
		if fast > 0 {
			fast--
			wait = 2 * time.Millisecond
		}
		select {
		case <-kick:
			fast = 20
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// render is [Template.Render] where a missing template (a Workflow built in
// Go rather than parsed, with no prompt or message) renders as "".
func render(t *Template, s *Scope) (string, error) {
	if t == nil {
		return "", nil
	}
	return t.Render(s)
}
