package workflow

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/switchboardmcp/switchboard/schema"
)

// StartOptions configures [Engine.Start]. Nil means defaults.
type StartOptions struct {
	// RunID is the run's id; "" means a random one. Starting a run id that
	// exists starts nothing and returns it, when it was started with the
	// same inputs (defaults applied) and selections: a caller that
	// retries after a lost answer gets the same run. With other inputs
	// Start fails with ErrInputsDiffer, whichever of two Starts at once
	// came first.
	RunID string
	// Depth is the run's nesting depth (Limits.MaxDepth): 0 for a run a
	// person or client starts; InProcess starts the run of a call from a
	// run's tool step one deeper than that run (MetaKeyDepth). A depth
	// beyond the engine's MaxDepth is refused (ErrLimit's message).
	Depth int
	// MCPServers and Tools are the run's selection for its agent steps,
	// and those of the runs its workflow steps start: the most specific
	// level, over the step's and the workflow's (see Selection). Nil: the
	// run makes none. Start refuses a server the host does not have, and
	// a tool it does not offer (or that none of MCPServers offers).
	MCPServers *Selection
	Tools      *Selection
	// Task marks the run as the task of the call that started it (the
	// gateway's run task: a detached call, host.CallOptions.TaskNote): kept
	// with the run as it is given, as RunStatus.Task, so that the task
	// lists find it (RunFilter.Tasks). "" for a run that is no task.
	Task string
}

// taskAttribute is the DBOS attribute of a run that keeps
// StartOptions.Task.
const taskAttribute = "switchboard_task"

// Start validates inputs against workflow id's inputs (applying their
// defaults) and starts a run. The run lives on the engine, not on ctx.
func (e *Engine) Start(ctx context.Context, id string, inputs map[string]any, opts *StartOptions) (string, error) {
	if err := e.ready(); err != nil {
		return "", err
	}
	wf := e.workflows[id]
	if wf == nil {
		return "", fmt.Errorf("workflow %q: not defined", id)
	}
	inputs, err := applyInputs(wf, inputs)
	if err != nil {
		return "", err
	}
	if at := e.events.secretAt("inputs", inputs); at != "" {
		return "", fmt.Errorf("workflow %q: %s %w: a run's inputs are kept in the state database; give the secret to the server that uses it (its env or headers) instead", id, at, ErrHoldsSecret)
	}
	runID, depth, task := "", 0, ""
	var servers, tools *Selection
	if opts != nil {
		runID, depth, servers, tools, task = opts.RunID, opts.Depth, opts.MCPServers, opts.Tools, opts.Task
	}
	if max := e.limits.MaxDepth; depth > max {
		return "", fmt.Errorf("%s", depthError(fmt.Sprintf("workflow %q", id), depth, max))
	}
	if err := e.checkRunSelection(servers, tools); err != nil {
		return "", fmt.Errorf("workflow %q: %w", id, err)
	}
	if runID == "" {
		runID = newRunID()
	} else if strings.Contains(runID, "/") {
		return "", fmt.Errorf("run id %q: may not contain /", runID)
	}
	digest := inputsDigest(inputs)
	if servers != nil || tools != nil {
		// Another selection is another run, as other inputs are.
		digest = inputsDigest(map[string]any{"inputs": inputs, "mcp_servers": servers, "tools": tools})
	}
	if st, err := e.dbosStatus(ctx, runID); err == nil {
		if err := sameRun(st, id, digest); err != nil {
			return "", err
		}
		return runID, nil
	}
	dctx := e.dbos
	if wf.Timeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = dbos.WithTimeout(e.dbos, wf.Timeout)
		defer cancel() // the deadline is recorded with the run: DBOS enforces it
	}
	if f := e.opts.OnStart; f != nil {
		f(ctx, runID, wf.ID)
	}
	runOpts := []dbos.WorkflowOption{dbos.WithWorkflowID(runID)}
	if task != "" {
		runOpts = append(runOpts, dbos.WithWorkflowAttributes(map[string]any{taskAttribute: task}))
	}
	h, err := dbos.RunWorkflow(dctx, e.runWorkflow, runInput{Workflow: wf.ID, Digest: wf.Digest, Inputs: inputs, InputsDigest: digest, Depth: depth,
		MCPServers: servers, Tools: tools}, runOpts...)
	if err != nil {
		return "", fmt.Errorf("workflow %q: starting run %s: %w", id, runID, err)
	}
	if opts != nil && opts.RunID != "" {
		// Another Start of this id at the same time (another replica's)
		// may have come first: DBOS then kept its run and its inputs.
		st, err := e.dbosStatus(ctx, runID)
		if err != nil {
			return "", err
		}
		if err := sameRun(st, id, digest); err != nil {
			return "", err
		}
	}
	// The run's function wakes the waiters as it returns, but DBOS
	// records its status after that: a waiter that looked in between
	// would sleep until its next poll (childPoll, a second: half the runs
	// of the benchmark did). The handle of a run started here says when
	// the status is recorded; wake them again then.
	e.watchers.Add(1)
	go func() {
		defer e.watchers.Done()
		h.GetResult() // ends at Close too: DBOS's context ends
		e.wake()
		e.pruneSoon() // one more run ended
	}()
	return runID, nil
}

// sameRun checks that st, a run found under the id a Start asked for, is
// a run of workflow id with the inputs of digest (a run recorded before
// runs had a digest is taken as it is).
func sameRun(st *dbos.WorkflowStatus, id, digest string) error {
	var in runInput
	if convert(st.Input, &in) != nil {
		return nil
	}
	switch {
	case in.Workflow != id:
		return fmt.Errorf("run %s: already a run of workflow %q, not %q", st.ID, in.Workflow, id)
	case in.InputsDigest != "" && in.InputsDigest != digest:
		return fmt.Errorf("%w: run %s", ErrInputsDiffer, st.ID)
	}
	return nil
}

// inputsDigest is the digest of a run's inputs (validated, defaults
// applied): JSON with sorted keys and numbers as written.
func inputsDigest(inputs map[string]any) string {
	b, err := json.Marshal(inputs)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (e *Engine) ready() error {
	if err := e.closedErr(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.launched {
		return errors.New("workflow: the engine is not launched")
	}
	return nil
}

// closedErr is ErrClosed once the engine is closed (with why, when it
// closed itself as its executor lost its lock), else nil.
func (e *Engine) closedErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed && e.fenced.Load():
		return fmt.Errorf("%w: %w", ErrClosed, e.opts.Executor.LostErr())
	case e.closed:
		return ErrClosed
	}
	return nil
}

// applyInputs fills in defaults and validates inputs against wf's inputs.
func applyInputs(wf *Workflow, inputs map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range inputs {
		out[k] = v
	}
	for _, in := range wf.Inputs {
		if _, ok := out[in.Name]; !ok && in.Default != nil {
			out[in.Name] = in.Default
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("workflow %q: inputs: %w", wf.ID, err)
	}
	sch, err := schema.Compile(wf.InputSchema())
	if err != nil {
		return nil, fmt.Errorf("workflow %q: inputs: %w", wf.ID, err)
	}
	v, err := sch.Validate(raw)
	if err != nil {
		return nil, fmt.Errorf("workflow %q: inputs: %w", wf.ID, err)
	}
	return v, nil
}

// RunState is where a run is.
type RunState string

// The states of a run.
const (
	RunQueued  RunState = "queued"
	RunRunning RunState = "running"
	RunWaiting RunState = "waiting" // on a gate
	// A step that is not idempotent was in flight when its process
	// stopped: the run waits for a person to resolve it (Engine.Resolve).
	RunInterrupted RunState = "interrupted"
	RunCompleted   RunState = "completed"
	RunFailed      RunState = "failed"
	RunCancelled   RunState = "cancelled"
)

// Ended reports whether s is final.
func (s RunState) Ended() bool { return s == RunCompleted || s == RunFailed || s == RunCancelled }

// RunStatus is a run as [Engine.Get] reports it.
type RunStatus struct {
	ID       string    `json:"id"`
	Workflow string    `json:"workflow"`
	Digest   string    `json:"digest"`
	State    RunState  `json:"state"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
	// Outputs of a completed run, redacted of the secrets the engine
	// knows, as they are stored.
	Outputs map[string]any `json:"outputs,omitempty"`
	Error   *RunError      `json:"error,omitempty"`
	// Gate is the gate:waiting event of the gate the run waits on (also
	// when it is interrupted at another step).
	Gate *Event `json:"gate,omitempty"`
	// Interrupted is the step:interrupted event of the step an
	// interrupted run waits on a resolution for.
	Interrupted *Event `json:"interrupted,omitempty"`
	// Executor is the executor that runs it, or last ran it
	// (Engine.ExecutorID): which process emits its events.
	Executor string `json:"-"`
	// FailedServers are the servers that had failed to start when the
	// run started (its run:started event's).
	FailedServers []string `json:"failed_servers,omitempty"`
	// Task is what the run keeps of the task it is (StartOptions.Task),
	// "" for a run that is no task's.
	Task string `json:"-"`
}

func (e *Engine) dbosStatus(ctx context.Context, runID string) (*dbos.WorkflowStatus, error) {
	list, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterWorkflowIDs(runID), dbos.WithFilterLoadInput(true), dbos.WithFilterLoadOutput(true))
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoRun, runID)
	}
	return &list[0], nil
}

// ExecutorID is the executor id this engine runs under
// (EngineOptions.ExecutorID, unless DBOS__VMID overrides it): a run whose
// RunStatus.Executor it is runs here.
func (e *Engine) ExecutorID() string { return dbos.GetExecutorID(e.dbos) }

// Get returns the run's status.
func (e *Engine) Get(ctx context.Context, runID string) (*RunStatus, error) {
	st, err := e.dbosStatus(ctx, runID)
	if err != nil {
		return nil, err
	}
	events, err := e.events.list(ctx, runID, 0, 0)
	if err != nil {
		return nil, err
	}
	return e.status(st, events), nil
}

func (e *Engine) status(st *dbos.WorkflowStatus, events []Event) *RunStatus {
	var in runInput
	convert(st.Input, &in)
	rs := &RunStatus{ID: st.ID, Workflow: in.Workflow, Digest: in.Digest, Started: st.CreatedAt, Executor: st.ExecutorID, Task: runTask(st)}
	switch st.Status {
	case dbos.WorkflowStatusEnqueued, dbos.WorkflowStatusDelayed:
		rs.State = RunQueued
	case dbos.WorkflowStatusPending:
		rs.State = RunRunning
	case dbos.WorkflowStatusSuccess:
		var out runOutput
		convert(st.Output, &out)
		rs.Outputs, rs.Error = out.Outputs, out.Error
		rs.State = RunCompleted
		if out.Error != nil {
			rs.State = RunFailed
		}
		rs.Ended = st.CompletedAt
	case dbos.WorkflowStatusCancelled:
		rs.State, rs.Ended = RunCancelled, st.UpdatedAt
		rs.Error = &RunError{Code: ErrCancelled, Message: "the run was cancelled"}
	default:
		rs.State, rs.Ended = RunFailed, st.UpdatedAt
		msg := string(st.Status)
		if st.Error != nil {
			msg = st.Error.Error()
		}
		rs.Error = &RunError{Code: ErrCallFailed, Message: msg}
	}
	// What the events say: a gate waiting, a step interrupted, or an end
	// DBOS has not recorded yet.
	open := map[string]*Event{}
	var interrupted []*Event
	for i := range events {
		ev := &events[i]
		k := taskKey(ev.Step, itemOf(ev))
		switch ev.Type {
		case EventRunStarted:
			rs.FailedServers = ev.FailedServers
		case EventGateWaiting:
			open[k] = ev
		case EventGateAnswered:
			delete(open, k)
		case EventStepInterrupted:
			interrupted = append(interrupted, ev)
		case EventStepResolved:
			interrupted = slices.DeleteFunc(interrupted, func(o *Event) bool { return taskKey(o.Step, itemOf(o)) == k })
		}
		if ev.Type.Terminal() && !rs.State.Ended() {
			switch ev.Type {
			case EventRunCompleted:
				rs.State = RunCompleted
				var o map[string]any
				json.Unmarshal(ev.Outputs, &o)
				rs.Outputs = o
			case EventRunFailed:
				rs.State, rs.Error = RunFailed, ev.Error
			case EventRunCancelled:
				rs.State = RunCancelled
			}
			rs.Ended = ev.Time
		}
	}
	// Stored redacted by the process that ran the run, whose redactor may
	// have known fewer secrets than this one (or, before issue 23, none
	// of the outputs').
	rs.Outputs = e.events.atRest(rs.Outputs).(map[string]any)
	rs.Error = e.events.errAtRest(rs.Error)
	// Interrupted before waiting: both may hold at once (independent
	// branches), and both are named.
	if rs.State == RunRunning && len(open) > 0 {
		for _, ev := range events {
			if ev.Type == EventGateWaiting && open[taskKey(ev.Step, itemOf(&ev))] != nil {
				rs.State, rs.Gate = RunWaiting, &ev
				break
			}
		}
	}
	// Queued too: a run being recovered (adopted, or resumed) is queued a
	// moment before it meets its unresolved interruption again.
	if (rs.State == RunRunning || rs.State == RunWaiting || rs.State == RunQueued) && len(interrupted) > 0 {
		rs.State, rs.Interrupted = RunInterrupted, interrupted[0]
	}
	return rs
}

func itemOf(ev *Event) int {
	if ev.Item == nil {
		return -1
	}
	return *ev.Item
}

// Wait waits for the run to end and returns its status.
func (e *Engine) Wait(ctx context.Context, runID string) (*RunStatus, error) {
	var rs *RunStatus
	err := e.repoll(ctx, func() (bool, error) {
		st, err := e.dbosStatus(ctx, runID)
		if err != nil {
			return false, err
		}
		switch st.Status {
		case dbos.WorkflowStatusSuccess, dbos.WorkflowStatusError, dbos.WorkflowStatusCancelled, dbos.WorkflowStatusMaxRecoveryAttemptsExceeded:
			events, err := e.events.list(ctx, runID, 0, 0)
			if err != nil {
				return false, err
			}
			rs = e.status(st, events)
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// RunFilter selects runs for [Engine.Runs].
type RunFilter struct {
	Workflow string // "" for all
	Limit    int    // 0: 100
	// Tasks: only the runs that are tasks (StartOptions.Task), among
	// the newest Limit runs.
	Tasks bool
}

// runTask is the StartOptions.Task st was started with, "" for none.
func runTask(st *dbos.WorkflowStatus) string {
	t, _ := st.Attributes[taskAttribute].(string)
	return t
}

// Runs lists runs, newest first (not a nested workflow's runs, which are
// their parent's steps).
func (e *Engine) Runs(ctx context.Context, f *RunFilter) ([]*RunStatus, error) {
	limit := 100
	if f != nil && f.Limit > 0 {
		limit = f.Limit
	}
	list, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterName(runWorkflowName), dbos.WithFilterHasParent(false),
		dbos.WithFilterSortDesc(), dbos.WithFilterLimit(limit), dbos.WithFilterLoadInput(true), dbos.WithFilterLoadOutput(true))
	if err != nil {
		return nil, err
	}
	var out []*RunStatus
	for i := range list {
		if f != nil && f.Tasks && runTask(&list[i]) == "" {
			continue
		}
		events, err := e.events.list(ctx, list[i].ID, 0, 0)
		if err != nil {
			return nil, err
		}
		rs := e.status(&list[i], events)
		if f != nil && f.Workflow != "" && rs.Workflow != f.Workflow {
			continue
		}
		out = append(out, rs)
	}
	return out, nil
}

// Events returns the run's events after sequence number afterSeq.
func (e *Engine) Events(ctx context.Context, runID string, afterSeq int64) ([]Event, error) {
	return e.events.list(ctx, runID, afterSeq, 0)
}

// Follow calls fn with each of the run's events after afterSeq, in order,
// as they happen, until the run's terminal event (delivered too), fn's
// error, or ctx's end. Events written by another process on the same
// database are seen within a second.
func (e *Engine) Follow(ctx context.Context, runID string, afterSeq int64, fn func(Event) error) error {
	for {
		kick := e.kicked()
		evs, err := e.events.list(ctx, runID, afterSeq, 0)
		if err != nil {
			if cerr := e.closedErr(); cerr != nil {
				return cerr // closed meanwhile: say why, not the closed database
			}
			return err
		}
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
			afterSeq = ev.Seq
			if ev.Type.Terminal() {
				return nil
			}
		}
		select {
		case <-kick:
		case <-time.After(childPoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Answer answers the gate gate of run runID. A gate takes one answer: of
// answers at the same time (from any process on the database), one wins
// and the others fail with ErrGateAnswered, as does an answer after the
// gate was answered or timed out. Answer fails with ErrNotWaiting when the
// run is not waiting on that gate otherwise, and when a is not an accept
// whose content is valid against the gate's schema (which declares its
// properties: no other is taken), or a decline.
func (e *Engine) Answer(ctx context.Context, runID, gate string, a GateAnswer) error {
	rs, err := e.Get(ctx, runID)
	if err != nil {
		return err
	}
	child := gateRunID(runID, gate)
	if rs.Gate == nil || taskKey(rs.Gate.Step, itemOf(rs.Gate)) != gate {
		// A run may wait on several gates; the status names the first.
		evs, _ := e.events.list(ctx, runID, 0, 0)
		if !gateOpen(evs, gate) || rs.State.Ended() {
			if won, err := e.events.gateClaim(ctx, child); err != nil || won != "" {
				return cmp.Or(err, answeredErr(runID, gate, won))
			}
			return fmt.Errorf("%w: run %s, gate %s", ErrNotWaiting, runID, gate)
		}
	}
	var sch json.RawMessage
	if wf := e.workflows[rs.Workflow]; wf != nil {
		if s := findStep(wf, strings.SplitN(gate, "/", 2)[0]); s != nil {
			if s.Kind == StepForEach {
				s = s.ForEach.Step
			}
			if s.Gate != nil {
				sch = s.Gate.Schema
			}
		}
	}
	switch a.Action {
	case "accept":
		if at := e.events.secretAt("", a.Content); at != "" {
			return fmt.Errorf("gate %s: the answer: %s %w: answers are kept in the state database", gate, at, ErrHoldsSecret)
		}
		if sch != nil {
			c, err := schema.Compile(closed(sch))
			if err != nil {
				return fmt.Errorf("gate %s: its schema: %w", gate, err)
			}
			raw, _ := json.Marshal(a.Content)
			if a.Content == nil {
				raw = []byte("{}")
			}
			if _, err := c.Validate(raw); err != nil {
				return fmt.Errorf("gate %s: the answer: %w", gate, err)
			}
		}
	case "decline":
		a.Content = nil
	default:
		return fmt.Errorf("gate %s: action %q: want accept or decline", gate, a.Action)
	}
	// One answer per gate: the first to claim it, its message sent in the
	// claim's transaction (gates.go).
	won, winner, err := e.events.claimGate(ctx, child, a.Action, func(tx *sql.Tx) error {
		return dbos.Send(e.dbos, child, a, gateTopic, dbos.WithIdempotencyKey(child), dbos.WithSendTransaction(tx))
	})
	switch {
	case err != nil:
		return fmt.Errorf("gate %s of run %s: %w", gate, runID, err)
	case !won:
		return answeredErr(runID, gate, winner)
	}
	return nil
}

// closed returns a gate's schema sch refusing properties it does not
// declare, when it declares some and says nothing of others: a person's
// answer carries the fields they were asked, and a field a later step
// reads but the gate never asked for cannot be slipped in.
func closed(sch json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(sch, &m) != nil {
		return sch
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		return sch
	}
	for _, k := range []string{"additionalProperties", "patternProperties", "unevaluatedProperties"} {
		if _, ok := m[k]; ok {
			return sch
		}
	}
	m["additionalProperties"] = false
	b, err := json.Marshal(m)
	if err != nil {
		return sch
	}
	return b
}

// ErrNotInterrupted is returned by Resolve when the run is not
// interrupted at that step: it never was, it ended, or the step was
// resolved already (by another caller: exactly one resolution wins).
var ErrNotInterrupted = errors.New("workflow: the run is not interrupted at that step")

// Resolution is what a person chooses for an interrupted step.
type Resolution string

// The resolutions of an interrupted step.
const (
	// ResolveRetry calls the step again, as a new attempt (its idempotency
	// key is the new attempt's).
	ResolveRetry Resolution = "retry"
	// ResolveSkip takes the step's default (null without one) as its
	// result, as if it had failed with on_error: continue, and goes on.
	ResolveSkip Resolution = "skip"
	// ResolveFail fails the run at the step (ErrInterrupted).
	ResolveFail Resolution = "fail"
)

// Resolve resolves the interrupted step of run runID (its key: the step's
// id, and /ITEM for an item of a for_each), as the run's status names it
// (RunStatus.Interrupted). It fails with ErrNotInterrupted when the run is
// not interrupted at that step, including when it was resolved before:
// of several resolutions at once, exactly one is taken, and the others
// are told which.
func (e *Engine) Resolve(ctx context.Context, runID, step string, how Resolution) error {
	switch how {
	case ResolveRetry, ResolveSkip, ResolveFail:
	default:
		return fmt.Errorf("step %s: resolution %q: want retry, skip or fail", step, how)
	}
	rs, err := e.Get(ctx, runID)
	if err != nil {
		return err
	}
	evs, err := e.events.list(ctx, runID, 0, 0)
	if err != nil {
		return err
	}
	ev, open := interruptedAt(evs, step)
	if ev == nil {
		return fmt.Errorf("%w: run %s (%s), step %s", ErrNotInterrupted, runID, rs.State, step)
	}
	if !open || rs.State.Ended() {
		// Resolved (and the run gone on) since: say how, as to a
		// resolution that lost at once.
		if got, err := e.events.resolution(ctx, runID, step, ev.Attempt); err == nil && got != "" {
			return fmt.Errorf("%w: run %s, step %s: resolved already (%s)", ErrNotInterrupted, runID, step, got)
		}
		return fmt.Errorf("%w: run %s (%s), step %s", ErrNotInterrupted, runID, rs.State, step)
	}
	got, won, err := e.events.resolve(ctx, runID, step, ev.Attempt, how)
	if err != nil {
		return err
	}
	child := resolveRunID(runID, step, ev.Attempt)
	// Sent by the winner, and again by every loser: a winner that died
	// between the two writes is made good (the message's idempotency key
	// keeps it one).
	if err := dbos.Send(e.dbos, child, GateAnswer{Action: string(got)}, gateTopic, dbos.WithIdempotencyKey(child)); err != nil {
		return fmt.Errorf("run %s: step %s: sending the resolution: %w", runID, step, err)
	}
	if !won {
		return fmt.Errorf("%w: run %s, step %s: resolved already (%s)", ErrNotInterrupted, runID, step, got)
	}
	return nil
}

// interruptedAt returns the last step:interrupted event of the task key
// step (nil for none), and whether no step:resolved followed it.
func interruptedAt(evs []Event, step string) (last *Event, open bool) {
	for i := range evs {
		ev := &evs[i]
		if taskKey(ev.Step, itemOf(ev)) != step {
			continue
		}
		switch ev.Type {
		case EventStepInterrupted:
			last, open = ev, true
		case EventStepResolved:
			open = false
		}
	}
	return last, open
}

func gateOpen(evs []Event, gate string) bool {
	open := false
	for _, ev := range evs {
		if taskKey(ev.Step, itemOf(&ev)) != gate {
			continue
		}
		switch ev.Type {
		case EventGateWaiting:
			open = true
		case EventGateAnswered:
			open = false
		}
	}
	return open
}

func findStep(wf *Workflow, id string) *Step {
	i := slices.IndexFunc(wf.Steps, func(s *Step) bool { return s.ID == id })
	if i < 0 {
		return nil
	}
	return wf.Steps[i]
}

// Cancel cancels the run and its nested runs and gates. A step in flight
// is interrupted; Resume continues from the last completed step (where a
// step that is not idempotent and was in flight waits for a person to
// resolve it: its call may have been made).
func (e *Engine) Cancel(ctx context.Context, runID string) error {
	if _, err := e.dbosStatus(ctx, runID); err != nil {
		return err
	}
	if err := dbos.CancelWorkflow(e.dbos, runID, dbos.WithCancelChildren()); err != nil {
		return fmt.Errorf("run %s: cancelling: %w", runID, err)
	}
	wf := ""
	if first, err := e.events.list(ctx, runID, 0, 1); err == nil && len(first) > 0 {
		wf = first[0].Workflow // run:started's
	}
	_, err := e.events.emit(ctx, wf, "run:end", &Event{Type: EventRunCancelled, RunID: runID})
	return err
}

// Resume resumes a cancelled (or failed on the way) run from its last
// completed step.
func (e *Engine) Resume(ctx context.Context, runID string) error {
	st, err := e.dbosStatus(ctx, runID)
	if err != nil {
		return err
	}
	if st.Status != dbos.WorkflowStatusCancelled {
		return fmt.Errorf("run %s: %s, not cancelled", runID, strings.ToLower(string(st.Status)))
	}
	if err := e.events.withdraw(ctx, runID); err != nil {
		return err
	}
	return e.resume(runID)
}

// resume resumes a cancelled workflow and, first, its cancelled children
// (Cancel cancelled them with it; a replayed parent waits on them again).
func (e *Engine) resume(id string) error {
	children, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterParentWorkflowID(id), dbos.WithFilterStatus(dbos.WorkflowStatusCancelled))
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := e.resume(c.ID); err != nil {
			return err
		}
	}
	if _, err := dbos.ResumeWorkflow[any](e.dbos, id); err != nil {
		return fmt.Errorf("run %s: resuming: %w", id, err)
	}
	return nil
}
