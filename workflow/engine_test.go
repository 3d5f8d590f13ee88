package workflow

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// rig is a host with the fixture server "fx" (its calls logged to
// callLog) and an engine on a SQLite file.
type rig struct {
	h       *host.Host
	e       *Engine
	db      string
	callLog string
}

// tpl and val build a workflow's templates in Go, as a library user would.
func tpl(s string) *Template {
	t, err := ParseTemplate(s)
	if err != nil {
		panic(err)
	}
	return t
}

func val(v any) *Value {
	x, err := NewValue(v)
	if err != nil {
		panic(err)
	}
	return x
}

// digested gives each workflow a digest and returns the registry.
func registry(wfs ...*Workflow) map[string]*Workflow {
	m := map[string]*Workflow{}
	for _, wf := range wfs {
		if wf.Digest == "" {
			wf.Digest = "digest-" + wf.ID
		}
		m[wf.ID] = wf
	}
	return m
}

func newHost(t testing.TB, callLog string, flags ...string) *host.Host {
	t.Helper()
	args := append([]string{"-call-log", callLog}, flags...)
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg), Args: args}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func newRig(t testing.TB, opts *EngineOptions, wfs ...*Workflow) *rig {
	t.Helper()
	return newRigOn(t, "", opts, wfs...)
}

// newRigOn is newRig on database (as EngineOptions.Database); "" means a
// new SQLite file.
func newRigOn(t testing.TB, database string, opts *EngineOptions, wfs ...*Workflow) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{db: database, callLog: filepath.Join(dir, "calls.log")}
	if r.db == "" {
		r.db = filepath.Join(dir, "state.db")
	}
	r.h = newHost(t, r.callLog)
	o := EngineOptions{}
	if opts != nil {
		o = *opts
	}
	o.Database, o.Host, o.Workflows = r.db, r.h, registry(wfs...)
	e, err := New(context.Background(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r.e = e
	return r
}

// calls returns the tool calls the fixture received, one "TOOL ARGS" a line.
func (r *rig) calls(t testing.TB) []string {
	t.Helper()
	return calls(t, r.callLog)
}

// calls returns the tool calls the fixture logged to callLog.
func calls(t testing.TB, callLog string) []string {
	t.Helper()
	b, err := os.ReadFile(callLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func (r *rig) run(t testing.TB, id string, inputs map[string]any) *RunStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runID, err := r.e.Start(ctx, id, inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.e.Wait(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (r *rig) events(t testing.TB, runID string) []Event {
	t.Helper()
	evs, err := r.e.Events(context.Background(), runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func echo(id, text string, needs ...string) *Step {
	return &Step{ID: id, Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": text}), Needs: needs}
}

func TestDAG(t *testing.T) { testDAG(t, "") }

func testDAG(t *testing.T, database string) {
	wf := &Workflow{ID: "dag",
		Inputs: []Input{{Name: "who", Type: "string", Required: true}, {Name: "n", Type: "integer", Default: 2}},
		Steps: []*Step{
			echo("a", "hello {{.inputs.who}}"),
			{ID: "b", Kind: StepTool, Tool: "mcp_fx_add", Arguments: val(map[string]any{"a": "{{.inputs.n}}", "b": 40})},
			echo("c", "{{.steps.a.result}} and {{.steps.b.result.sum}}", "a", "b"),
			{ID: "d", Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "never"}), If: tpl(`{{eq .inputs.who "nobody"}}`)},
			echo("e", "after d: {{.steps.d.result}}", "d"),
		},
		Outputs: []Output{{Name: "text", Value: tpl("{{.steps.c.result}}")}, {Name: "sum", Type: "number", Value: tpl("{{.steps.b.result.sum}}")}},
	}
	r := newRigOn(t, database, nil, wf)
	st := r.run(t, "dag", map[string]any{"who": "world"})
	if st.State != RunCompleted {
		t.Fatalf("state = %s, error %v", st.State, st.Error)
	}
	if got, want := st.Outputs["text"], "hello world and 42"; got != want {
		t.Errorf("outputs.text = %v, want %q", got, want)
	}
	if got := st.Outputs["sum"]; got != float64(42) {
		t.Errorf("outputs.sum = %v (%T), want 42", got, got)
	}
	calls := r.calls(t)
	if len(calls) != 4 || slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "never") }) {
		t.Errorf("calls = %q, want 4 calls, none with never", calls)
	}
	evs := r.events(t, st.ID)
	var skipped []string
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, ev.Seq)
		}
		if ev.Skipped {
			skipped = append(skipped, ev.Step)
		}
	}
	if !slices.Equal(skipped, []string{"d"}) {
		t.Errorf("skipped = %q, want [d]", skipped)
	}
	if evs[0].Type != EventRunStarted || evs[len(evs)-1].Type != EventRunCompleted {
		t.Errorf("events run from %s to %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	b, _ := json.Marshal(evs)
	t.Logf("events: %s", b)
}

// agentFunc runs agent steps in tests: the Agents edge the CLI provides.
type agentFunc func(ctx context.Context, name, prompt string) (*AgentResult, error)

func (f agentFunc) RunAgent(ctx context.Context, req *AgentRequest) (*AgentResult, error) {
	return f(ctx, req.Agent, req.Prompt)
}

func TestStepKinds(t *testing.T) { testStepKinds(t, "") }

func testStepKinds(t *testing.T, database string) {
	child := &Workflow{ID: "child", Inputs: []Input{{Name: "x", Type: "string", Required: true}},
		Steps:   []*Step{echo("say", "child got {{.inputs.x}}")},
		Outputs: []Output{{Name: "said", Value: tpl("{{.steps.say.result}}")}}}
	parent := &Workflow{ID: "parent", Concurrency: 2,
		Steps: []*Step{
			{ID: "list", Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": `["a","b","c"]`})},
			{ID: "each", Kind: StepForEach, Needs: []string{"list"}, ForEach: &ForEach{Items: tpl("{{.steps.list.result}}"), As: "letter", Concurrency: 2,
				Step: &Step{ID: "inner", Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "{{.index}}={{.letter}}"})}}},
			{ID: "nested", Kind: StepWorkflow, Workflow: "child", With: val(map[string]any{"x": "{{index .steps.each.result 2}}"}), Needs: []string{"each"}},
			{ID: "think", Kind: StepAgent, Agent: "helper", Prompt: tpl("summarise {{.steps.nested.result.said}}"), Needs: []string{"nested"}},
			{ID: "flaky", Kind: StepTool, Tool: "mcp_fx_fail", Idempotent: true, Retry: &Retry{Attempts: 3, Backoff: time.Millisecond},
				OnError: OnErrorContinue, Default: "fallback"},
			{ID: "unmarked", Kind: StepTool, Tool: "mcp_fx_fail", Retry: &Retry{Attempts: 3}, OnError: OnErrorContinue, Default: 1},
		},
		Outputs: []Output{{Name: "answer", Value: tpl("{{.steps.think.result.text}}")}, {Name: "flaky", Value: tpl("{{.steps.flaky.result}}")}},
	}
	var prompts []string
	agents := agentFunc(func(ctx context.Context, name, prompt string) (*AgentResult, error) {
		prompts = append(prompts, name+": "+prompt)
		return &AgentResult{Text: "summary of " + prompt, Usage: map[string]any{"output_tokens": 3}}, nil
	})
	r := newRigOn(t, database, &EngineOptions{Agents: agents}, parent, child)
	st := r.run(t, "parent", nil)
	if st.State != RunCompleted {
		t.Fatalf("state = %s, error %v", st.State, st.Error)
	}
	if got, want := st.Outputs["answer"], "summary of summarise child got 2=c"; got != want {
		t.Errorf("outputs.answer = %q, want %q", got, want)
	}
	if got := st.Outputs["flaky"]; got != "fallback" {
		t.Errorf("outputs.flaky = %q, want the default", got)
	}
	count := map[string]int{}
	for _, c := range r.calls(t) {
		count[strings.Fields(c)[0]]++
	}
	// list, 3 items, the child's say; fail: 3 attempts (idempotent) + 1 (not marked).
	if count["echo"] != 5 || count["fail"] != 4 {
		t.Errorf("calls = %v, want echo 5, fail 4", count)
	}
	var failed []string
	for _, ev := range r.events(t, st.ID) {
		if ev.Type == EventStepFailed {
			failed = append(failed, ev.Step+"#"+strconv.Itoa(ev.Attempt)+map[bool]string{true: " continued"}[ev.Continued])
		}
	}
	if want := []string{"flaky#1", "flaky#2", "flaky#3 continued", "unmarked#1 continued"}; !slices.Equal(sorted(failed), want) {
		t.Errorf("step:failed events = %q, want %q", failed, want)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestFailure: a step that fails ends the run at that step, and the steps
// that depend on it never run.
func TestFailure(t *testing.T) { testFailure(t, "") }

func testFailure(t *testing.T, database string) {
	wf := &Workflow{ID: "f", Steps: []*Step{
		{ID: "boom", Kind: StepTool, Tool: "mcp_fx_fail"},
		echo("after", "never", "boom"),
	}}
	r := newRigOn(t, database, nil, wf)
	st := r.run(t, "f", nil)
	if st.State != RunFailed || st.Error == nil || st.Error.Code != ErrToolError || st.Error.Step != "boom" {
		t.Fatalf("status = %s %+v, want failed at boom with tool_error", st.State, st.Error)
	}
	if calls := r.calls(t); len(calls) != 1 {
		t.Errorf("calls = %q, want only boom's", calls)
	}
	evs := r.events(t, st.ID)
	if last := evs[len(evs)-1]; last.Type != EventRunFailed || last.Step != "boom" {
		t.Errorf("last event = %+v", last)
	}
}

func TestIdempotentRunID(t *testing.T) { testIdempotentRunID(t, "") }

func testIdempotentRunID(t *testing.T, database string) {
	wf := &Workflow{ID: "once", Steps: []*Step{echo("a", "x")}}
	r := newRigOn(t, database, nil, wf, &Workflow{ID: "other"})
	ctx := context.Background()
	for range 2 {
		id, err := r.e.Start(ctx, "once", nil, &StartOptions{RunID: "fixed"})
		if err != nil || id != "fixed" {
			t.Fatalf("Start = %q, %v", id, err)
		}
		if _, err := r.e.Wait(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if calls := r.calls(t); len(calls) != 1 {
		t.Errorf("calls = %q, want one", calls)
	}
	if _, err := r.e.Start(ctx, "other", nil, &StartOptions{RunID: "fixed"}); err == nil {
		t.Error("the same run id for another workflow was accepted")
	}
	if _, err := r.e.Start(ctx, "once", map[string]any{"bogus": 1}, nil); err == nil {
		t.Error("an unknown input was accepted")
	}
}

// waitFor polls the run's status until ok (there is no event for "DBOS
// has recorded it"), with a deadline.
func waitFor(t testing.TB, e *Engine, runID string, ok func(*RunStatus) bool) *RunStatus {
	t.Helper()
	return wait.For(t, "run "+runID, func() (*RunStatus, bool) {
		st, err := e.Get(context.Background(), runID)
		return st, err == nil && ok(st)
	})
}

func gateWorkflow(onDecline GatePolicy) *Workflow {
	return &Workflow{ID: "approve", Steps: []*Step{
		echo("before", "before"),
		{ID: "ok", Kind: StepGate, Needs: []string{"before"}, Gate: &Gate{Message: tpl("Deploy {{.steps.before.result}}?"),
			Schema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`), OnDecline: onDecline}},
		echo("after", "approved by {{.steps.ok.result.who}}", "ok"),
	}, Outputs: []Output{{Name: "after", Value: tpl("{{.steps.after.result}}")}}}
}

func TestGate(t *testing.T) { testGate(t, "") }

func testGate(t *testing.T, database string) {
	r := newRigOn(t, database, nil, gateWorkflow(GateFail))
	ctx := context.Background()
	id, err := r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	if st.Gate.Step != "ok" || st.Gate.Text != "Deploy before?" {
		t.Errorf("gate = %+v", st.Gate)
	}
	if err := r.e.Answer(ctx, id, "nope", GateAnswer{Action: "accept"}); err == nil {
		t.Error("an answer to a gate the run does not wait on was accepted")
	}
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": 5}}); err == nil {
		t.Error("an answer against the gate's schema was accepted")
	}
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "ana"}}); err != nil {
		t.Fatal(err)
	}
	st, err = r.e.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != RunCompleted || st.Outputs["after"] != "approved by ana" {
		t.Fatalf("status = %s %v %v", st.State, st.Outputs, st.Error)
	}
	// Declined, with on_decline fail.
	id, _ = r.e.Start(ctx, "approve", nil, nil)
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "decline"}); err != nil {
		t.Fatal(err)
	}
	st, _ = r.e.Wait(ctx, id)
	if st.State != RunFailed || st.Error.Code != ErrGateDeclined {
		t.Errorf("declined: status = %s %+v", st.State, st.Error)
	}
}

func TestGateTimeoutSkipRest(t *testing.T) { testGateTimeoutSkipRest(t, "") }

func testGateTimeoutSkipRest(t *testing.T, database string) {
	wf := gateWorkflow(GateFail)
	wf.Steps[1].Gate.Timeout = 50 * time.Millisecond
	wf.Steps[1].Gate.OnTimeout = GateSkipRest
	r := newRigOn(t, database, nil, wf)
	st := r.run(t, "approve", nil)
	if st.State != RunCompleted {
		t.Fatalf("status = %s %+v", st.State, st.Error)
	}
	if calls := r.calls(t); len(calls) != 1 {
		t.Errorf("calls = %q, want only before's", calls)
	}
}

func TestCancelResume(t *testing.T) { testCancelResume(t, "") }

func testCancelResume(t *testing.T, database string) {
	r := newRigOn(t, database, nil, gateWorkflow(GateFail))
	ctx := context.Background()
	id, _ := r.e.Start(ctx, "approve", nil, nil)
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	if err := r.e.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunCancelled })
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "x"}}); err == nil {
		t.Error("a cancelled run's gate took an answer")
	}
	if err := r.e.Resume(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "bo"}}); err != nil {
		t.Fatal(err)
	}
	st, _ = r.e.Wait(ctx, id)
	if st.State != RunCompleted || st.Outputs["after"] != "approved by bo" {
		t.Fatalf("status = %s %v %+v", st.State, st.Outputs, st.Error)
	}
	if calls := r.calls(t); len(calls) != 2 {
		t.Errorf("calls = %q, want before once and after once", calls)
	}
}

// TestEventsRedacted: a secret that reaches a tool's arguments and result
// never appears in an event. It comes as two halves, which are no secret
// alone: a run's inputs may not hold one (TestSecretsAtRest).
func TestEventsRedacted(t *testing.T) { testEventsRedacted(t, "") }

func testEventsRedacted(t *testing.T, database string) {
	const secretValue = "s3cr3t-value-0042"
	wf := &Workflow{ID: "leak", Inputs: []Input{{Name: "a", Type: "string"}, {Name: "b", Type: "string"}},
		Steps:   []*Step{echo("a", "token={{.inputs.a}}{{.inputs.b}}")},
		Outputs: []Output{{Name: "out", Value: tpl("{{.steps.a.result}}")}}}
	r := newRigOn(t, database, nil, wf)
	r.h.Redactor().Add(secretValue)
	st := r.run(t, "leak", map[string]any{"a": secretValue[:6], "b": secretValue[6:]})
	if st.State != RunCompleted {
		t.Fatalf("state %s %v", st.State, st.Error)
	}
	b, _ := json.Marshal(r.events(t, st.ID))
	if strings.Contains(string(b), secretValue) {
		t.Errorf("events hold the secret: %s", b)
	}
	if !strings.Contains(string(b), "[REDACTED]") {
		t.Errorf("events show no redaction: %s", b)
	}
}

// TestWaitPrompt: Wait returns as soon as the run's end is recorded, not
// at its next poll (childPoll): DBOS records a run's status after the
// run's function returns, and a waiter that looked in between slept a
// second (half the runs of the benchmark did).
func TestWaitPrompt(t *testing.T) {
	r := newRig(t, nil, &Workflow{ID: "one", Steps: []*Step{echo("a", "a")}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 10 {
		id, err := r.e.Start(ctx, "one", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.e.Wait(ctx, id); err != nil {
			t.Fatal(err)
		}
		returned := time.Now()
		evs := r.events(t, id)
		// Half a second: far more than a loaded machine needs, half the poll.
		if late := returned.Sub(evs[len(evs)-1].Time); late > childPoll/2 {
			t.Errorf("run %d: Wait returned %v after run:completed", i, late)
		}
	}
}

// TestChainRecordsNoChoice: a step that is alone in flight is taken
// without recording a choice (switchboard.next), so that a chain costs one
// DBOS step per step; where several are in flight the choice is recorded.
func TestChainRecordsNoChoice(t *testing.T) {
	wfs := benchWorkflows()
	r := newRig(t, nil, wfs...)
	for _, c := range []struct {
		id          string
		wantChoices bool
	}{{"short", false}, {"wide", true}} {
		st := r.run(t, c.id, nil)
		if st.State != RunCompleted {
			t.Fatalf("%s: %+v", c.id, st)
		}
		steps, err := dbos.GetWorkflowSteps(r.e.dbos, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		choices := 0
		for _, s := range steps {
			if s.StepName == "switchboard.next" {
				choices++
			}
		}
		if got := choices > 0; got != c.wantChoices {
			t.Errorf("%s: %d recorded choices in %d steps, want some: %v", c.id, choices, len(steps), c.wantChoices)
		}
	}
}

// TestConcurrentEvents: runs whose steps all run at once (benchSteps of
// them, several runs at once) record every event once, numbered 1..n with
// no gap: on PostgreSQL concurrent inserts race for a run's next sequence
// number.
func TestConcurrentEvents(t *testing.T) { testConcurrentEvents(t, "") }

func testConcurrentEvents(t *testing.T, database string) {
	r := newRigOn(t, database, nil, benchWorkflows()...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const runs = 4
	var ids []string
	for range runs {
		id, err := r.e.Start(ctx, "wide", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		st, err := r.e.Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != RunCompleted {
			t.Fatalf("run %s: %s %+v", id, st.State, st.Error)
		}
		evs := r.events(t, id)
		// run:started, step:started and step:completed per step, run:completed.
		if want := 2 + 2*benchSteps; len(evs) != want {
			t.Errorf("run %s: %d events, want %d", id, len(evs), want)
		}
		for i, ev := range evs {
			if ev.Seq != int64(i+1) {
				t.Errorf("run %s: event %d has seq %d", id, i, ev.Seq)
			}
		}
	}
}

// TestCancelLogsNoWarning: cancelling a run (what Ctrl-C on `workflow run`
// does) is no warning: DBOS logs the cancellations it goes through (a
// gate's receive cancelled, the cancelled run's ID taken back) as
// warnings; they reach the engine's logger at Debug (issue 24). A DBOS
// warning of another kind still passes as one.
func TestCancelLogsNoWarning(t *testing.T) {
	logs := &interop.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := newRig(t, &EngineOptions{Logger: log}, gateWorkflow(GateFail))
	ctx := context.Background()
	// With its id chosen by the caller, as `workflow run` does.
	id, err := r.e.Start(ctx, "approve", nil, &StartOptions{RunID: "run-cancelled-by-ctrl-c"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	if err := r.e.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunCancelled })
	st, _ := r.e.Wait(ctx, id)
	if st.State != RunCancelled {
		t.Fatalf("state %s", st.State)
	}
	if err := r.e.Close(); err != nil {
		t.Fatal(err)
	}
	if s := logs.String(); strings.Contains(s, "level=WARN") || strings.Contains(s, "level=ERROR") {
		t.Errorf("a cancelled run logged warnings:\n%s", s)
	}
	var closing atomic.Bool
	h := &dbosLog{next: log.Handler(), closing: &closing}
	slog.New(h).Warn("Something else went wrong", "workflow_id", id)
	if !strings.Contains(logs.String(), `level=WARN msg="Something else went wrong"`) {
		t.Errorf("another DBOS warning did not pass:\n%s", logs)
	}
}
