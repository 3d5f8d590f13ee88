package workflow

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// runWithin runs workflow id on r's engine and waits for its end, within
// d: what a limit must stop does not run into the rig's minute.
func runWithin(t *testing.T, r *rig, d time.Duration, id string, inputs map[string]any) *RunStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	runID, err := r.e.Start(ctx, id, inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.e.Wait(ctx, runID)
	if err != nil {
		t.Fatalf("run %s did not end within %v: %v", runID, d, err)
	}
	return st
}

// TestNestingDepth: a workflow that runs itself (given to the engine
// unchecked, as a library user may: CheckAll refuses it) nests runs down
// to the engine's MaxDepth, and the workflow step below that fails
// without starting a run, its error naming the depth and the setting.
// Before, the runs nested without end (396 levels in 20 s in the trial
// of issue 24): the run did not end within the test's 30 s.
func TestNestingDepth(t *testing.T) {
	loop := &Workflow{ID: "loop", Steps: []*Step{{ID: "again", Kind: StepWorkflow, Workflow: "loop"}}}
	r := newRig(t, &EngineOptions{Limits: Limits{MaxDepth: 3}}, loop)
	st := runWithin(t, r, 30*time.Second, "loop", nil)
	if st.State != RunFailed || st.Error == nil {
		t.Fatalf("status = %s %+v, want failed", st.State, st.Error)
	}
	want := "step again: workflow loop would run at nesting depth 4, beyond the limit of 3 ([limits] max_workflow_depth)"
	if !strings.Contains(st.Error.Message, want) {
		t.Errorf("error = %q, want it to say %q", st.Error.Message, want)
	}
	// The runs at depths 1, 2 and 3 exist, and failed; none at 4.
	id := st.ID
	for depth := 1; depth <= 4; depth++ {
		id += "/again"
		child, err := r.e.Get(context.Background(), id)
		switch {
		case depth <= 3 && (err != nil || child.State != RunFailed):
			t.Errorf("run at depth %d (%s): %+v, %v; want one that failed", depth, id, child, err)
		case depth == 4 && !errors.Is(err, ErrNoRun):
			t.Errorf("run at depth 4 (%s): %+v, %v; want none", id, child, err)
		}
	}
	// The innermost run failed at its step with a limit error.
	inner, err := r.e.Get(context.Background(), st.ID+"/again/again/again")
	if err != nil || inner.Error == nil || inner.Error.Code != ErrLimit || inner.Error.Step != "again" {
		t.Errorf("innermost run: %+v, %v; want failed at step again with %s", inner, err, ErrLimit)
	}
}

// TestNestingDepthDefault: two workflows that run each other stop at
// DefaultMaxDepth.
func TestNestingDepthDefault(t *testing.T) {
	ping := &Workflow{ID: "ping", Steps: []*Step{{ID: "call", Kind: StepWorkflow, Workflow: "pong"}}}
	pong := &Workflow{ID: "pong", Steps: []*Step{{ID: "back", Kind: StepWorkflow, Workflow: "ping"}}}
	r := newRig(t, nil, ping, pong)
	st := runWithin(t, r, 30*time.Second, "ping", nil)
	want := "would run at nesting depth 9, beyond the limit of 8 ([limits] max_workflow_depth)"
	if st.State != RunFailed || st.Error == nil || !strings.Contains(st.Error.Message, want) {
		t.Fatalf("status = %s %+v, want failed: …%s", st.State, st.Error, want)
	}
}

// TestNestingDepthThroughTool: a workflow whose tool step calls its own
// published tool nests runs too (each call starts a run of its own), and
// stops at MaxDepth: the call's _meta carries the depth of the run that
// makes it (MetaKeyDepth). Before, nothing carried it: every call started
// a run at depth 0, and the runs nested until the first call's timeout.
func TestNestingDepthThroughTool(t *testing.T) {
	self := &Workflow{ID: "self", Steps: []*Step{{ID: "call", Kind: StepTool, Tool: "mcp_workflows_workflow_self"}}}
	h, e := publishOn(t, &EngineOptions{Database: filepath.Join(t.TempDir(), "state.db"), Limits: Limits{MaxDepth: 2}}, nil, self)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.CallTool(ctx, "mcp_workflows_workflow_self", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `workflow "self" would run at nesting depth 3, beyond the limit of 2 ([limits] max_workflow_depth)`
	if text := resultText(res); !res.IsError || !strings.Contains(text, want) {
		t.Errorf("result: isError %v, %q; want an error saying %q", res.IsError, text, want)
	}
	runs, err := e.Runs(ctx, nil)
	if err != nil || len(runs) != 3 {
		t.Errorf("runs = %d, %v; want 3 (depths 0, 1 and 2)", len(runs), err)
	}
}

// eachWorkflow is a for_each over its input items (each item echoed),
// bounded by maxItems (0: the engine's bound).
func eachWorkflow(id string, maxItems int) *Workflow {
	return &Workflow{ID: id, Inputs: []Input{{Name: "items", Type: "array", Required: true}},
		Steps: []*Step{{ID: "each", Kind: StepForEach, ForEach: &ForEach{Items: tpl("{{.inputs.items}}"), MaxItems: maxItems,
			Step: &Step{ID: "each", Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "item {{.item}}"})}}}}}
}

func itemsOf(n int) map[string]any {
	items := make([]any, n)
	for i := range items {
		items[i] = i
	}
	return map[string]any{"items": items}
}

// TestForEachItemsBound: a for_each over more items than its bound (its
// max_items, else the engine's MaxItems) fails before any item runs, its
// error naming the step, the count, the bound and where it is set; at
// the bound it runs. Before, any number of items ran (100,000 in the
// trial of issue 24): here the 1,001 items of the default's case were all
// called.
func TestForEachItemsBound(t *testing.T) {
	r := newRig(t, &EngineOptions{Limits: Limits{MaxItems: 3}},
		eachWorkflow("engine", 0), eachWorkflow("own", 5), eachWorkflow("tight", 1))
	for _, tt := range []struct {
		wf    string
		items int
		want  string // "" when the run completes
	}{
		{"engine", 3, ""},
		{"engine", 4, "step each: for_each has 4 items, more than its bound of 3 ([limits] max_for_each_items)"},
		{"own", 5, ""},
		{"own", 6, "step each: for_each has 6 items, more than its bound of 5 (its max_items)"},
		{"tight", 2, "step each: for_each has 2 items, more than its bound of 1 (its max_items)"},
	} {
		before := len(r.calls(t))
		st := runWithin(t, r, 30*time.Second, tt.wf, itemsOf(tt.items))
		calls := len(r.calls(t)) - before
		if tt.want == "" {
			if st.State != RunCompleted || calls != tt.items {
				t.Errorf("%s over %d items: %s %+v, %d calls; want completed, %d calls", tt.wf, tt.items, st.State, st.Error, calls, tt.items)
			}
			continue
		}
		if st.State != RunFailed || st.Error == nil || st.Error.Code != ErrLimit || st.Error.Step != "each" || st.Error.Message != tt.want {
			t.Errorf("%s over %d items: %s %+v; want failed at each: %s: %s", tt.wf, tt.items, st.State, st.Error, ErrLimit, tt.want)
		}
		if calls != 0 {
			t.Errorf("%s over %d items: %d items called, want none", tt.wf, tt.items, calls)
		}
		for _, ev := range r.events(t, st.ID) {
			if ev.Type == EventStepStarted {
				t.Errorf("%s over %d items: %s %s emitted", tt.wf, tt.items, ev.Type, ev.Step)
			}
		}
	}
}

// TestForEachItemsDefault: with no bound said anywhere, DefaultMaxItems
// holds.
func TestForEachItemsDefault(t *testing.T) {
	r := newRig(t, nil, eachWorkflow("each", 0))
	st := runWithin(t, r, 20*time.Second, "each", itemsOf(DefaultMaxItems+1))
	want := "step each: for_each has 1001 items, more than its bound of 1000 ([limits] max_for_each_items)"
	if st.State != RunFailed || st.Error == nil || st.Error.Message != want {
		t.Errorf("status = %s %+v, want failed: %s", st.State, st.Error, want)
	}
	if calls := r.calls(t); len(calls) != 0 {
		t.Errorf("%d items called, want none", len(calls))
	}
}

// ownRows counts the rows of our tables (events, attempts, gate answers)
// that belong to run id or to what it nested.
func ownRows(t *testing.T, e *Engine, id string) int {
	t.Helper()
	n := 0
	for _, q := range []string{
		`SELECT COUNT(*) FROM ` + eventsTable + ` WHERE run_id = $1 OR run_id LIKE $2`,
		`SELECT COUNT(*) FROM ` + attemptsTable + ` WHERE run_id = $1 OR run_id LIKE $2`,
		`SELECT COUNT(*) FROM ` + gateAnswersTable + ` WHERE gate = $1 OR gate LIKE $2`,
	} {
		var c int
		if err := e.events.db.QueryRow(q, id, id+"/%").Scan(&c); err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// TestKeepRuns: past Limits.KeepRuns ended runs, the oldest ended ones
// are deleted as runs end, each with what it nested (a child run, a gate)
// and its rows in our tables (events, attempts, gate answers); a run that
// has not ended (waiting on a gate) is kept whatever its age. Before,
// every run and its events were kept for good (issue 24).
func TestKeepRuns(t *testing.T) { testKeepRuns(t, "") }

func testKeepRuns(t *testing.T, database string) {
	child := &Workflow{ID: "child", Steps: []*Step{echo("say", "deep")}}
	nested := &Workflow{ID: "nested", Steps: []*Step{
		{ID: "ok", Kind: StepGate, Gate: &Gate{Message: tpl("go?")}},
		{ID: "call", Kind: StepWorkflow, Workflow: "child", Needs: []string{"ok"}},
	}}
	simple := &Workflow{ID: "simple", Steps: []*Step{echo("one", "hi")}}
	r := newRigOn(t, database, &EngineOptions{Limits: Limits{KeepRuns: 2}}, gateWorkflow(GateFail), child, nested, simple)
	// A bound for the whole test, not a pace: about a second alone, it
	// took 30 s on PostgreSQL in one suite run on a machine loaded ten
	// times over, and failed at this bound, then 30 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The oldest run waits on its gate, and is never deleted.
	waiting, err := r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, waiting, func(st *RunStatus) bool { return st.State == RunWaiting })
	// An ended run with a gate answered and a nested run.
	old, err := r.e.Start(ctx, "nested", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, old, func(st *RunStatus) bool { return st.State == RunWaiting })
	if err := r.e.Answer(ctx, old, "ok", GateAnswer{Action: "accept"}); err != nil {
		t.Fatal(err)
	}
	if st, err := r.e.Wait(ctx, old); err != nil || st.State != RunCompleted {
		t.Fatalf("nested run: %+v, %v", st, err)
	}
	if n := ownRows(t, r.e, old); n == 0 {
		t.Fatal("the nested run left no rows to delete: the test proves nothing")
	}
	var ended []string
	for range 3 {
		st := runWithin(t, r, 30*time.Second, "simple", nil)
		ended = append(ended, st.ID)
	}
	// The runs that end prune in the background: wait for it, bounded.
	want := []string{ended[2], ended[1], waiting} // newest first
	wait.For(t, fmt.Sprintf("runs %q (2 ended kept, the waiting one)", want), func() ([]string, bool) {
		runs, err := r.e.Runs(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rs := range runs {
			got = append(got, rs.ID)
		}
		return got, slices.Equal(got, want)
	})
	for _, id := range []string{old, old + "/call", gateRunID(old, "ok"), ended[0]} {
		if _, err := r.e.Get(ctx, id); !errors.Is(err, ErrNoRun) {
			t.Errorf("run %s: %v, want it deleted", id, err)
		}
	}
	for _, id := range []string{old, ended[0]} {
		if n := ownRows(t, r.e, id); n != 0 {
			t.Errorf("run %s: %d rows of ours left", id, n)
		}
	}
	if st, err := r.e.Get(ctx, waiting); err != nil || st.State != RunWaiting {
		t.Errorf("the waiting run: %+v, %v; want it kept, waiting", st, err)
	}
	// Prune finds nothing more.
	if n, err := r.e.Prune(ctx); n != 0 || err != nil {
		t.Errorf("Prune = %d, %v; want 0", n, err)
	}
}
