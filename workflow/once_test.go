package workflow

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// interruptedRun makes run "r1" of wf interrupted at the task key step:
// an engine runs it until that step's attempt is recorded as started (its
// StepContext holds it there), and is closed (the attempt is cancelled
// before its call, but no process can know that); a second engine on the
// database recovers the run, which is interrupted at step. It returns the
// second engine's rig.
func interruptedRun(t *testing.T, database string, wf *Workflow, step string) *rig {
	t.Helper()
	item := -1
	id, idx, ok := strings.Cut(step, "/")
	if ok {
		item = int(idx[0] - '0')
	}
	reached := make(chan struct{})
	var once sync.Once
	hold := &EngineOptions{StepContext: func(ctx context.Context, ev Event) context.Context {
		if ev.Step == id && itemOf(&ev) == item {
			once.Do(func() { close(reached) })
			<-ctx.Done()
		}
		return ctx
	}}
	first := newRigOn(t, database, hold, wf)
	ctx := context.Background()
	if _, err := first.e.Start(ctx, wf.ID, nil, &StartOptions{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatalf("step %s never started", step)
	}
	first.e.Close()

	r := &rig{h: newHost(t, first.callLog), db: first.db, callLog: first.callLog}
	e, err := New(ctx, &EngineOptions{Database: r.db, Host: r.h, Workflows: registry(wf)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r.e = e
	st := waitFor(t, e, "r1", func(st *RunStatus) bool { return st.State == RunInterrupted || st.State.Ended() })
	if st.State != RunInterrupted || st.Interrupted == nil || taskKey(st.Interrupted.Step, itemOf(st.Interrupted)) != step || st.Interrupted.Attempt != 1 {
		t.Fatalf("recovered run: %s %+v, want interrupted at %s attempt 1", st.State, st.Interrupted, step)
	}
	return r
}

func onceWorkflow() *Workflow {
	return &Workflow{ID: "once", Steps: []*Step{
		echo("a", "a"),
		{ID: "c", Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "c"}), Needs: []string{"a"},
			OnError: OnErrorContinue, Default: "c's default"},
		echo("d", "d {{.steps.c.result}}", "c"),
	}, Outputs: []Output{{Name: "d", Value: tpl("{{.steps.d.result}}")}}}
}

// TestResolveOnce: of several resolutions of one interrupted step sent at
// once, exactly one is taken; every other caller is told the step was
// resolved already, and which way; the run goes the winner's way.
func TestResolveOnce(t *testing.T) { testResolveOnce(t, "") }

func testResolveOnce(t *testing.T, database string) {
	r := interruptedRun(t, database, onceWorkflow(), "c")
	ctx := context.Background()
	hows := []Resolution{ResolveRetry, ResolveSkip, ResolveFail, ResolveRetry, ResolveSkip, ResolveFail, ResolveRetry, ResolveSkip}
	errs := make([]error, len(hows))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, how := range hows {
		wg.Go(func() {
			<-start
			errs[i] = r.e.Resolve(ctx, "r1", "c", how)
		})
	}
	close(start)
	wg.Wait()
	var won []Resolution
	for i, err := range errs {
		switch {
		case err == nil:
			won = append(won, hows[i])
		case !errors.Is(err, ErrNotInterrupted):
			t.Errorf("Resolve(%s) = %v, want nil or ErrNotInterrupted", hows[i], err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d resolutions taken (%v), want exactly one; errors %v", len(won), won, errs)
	}
	for i, err := range errs {
		if err != nil && !strings.Contains(err.Error(), "resolved already ("+string(won[0])+")") {
			t.Errorf("the loser %s was told %v, want the winner (%s) named", hows[i], err, won[0])
		}
	}
	st, err := r.e.Wait(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	calls := r.calls(t)
	switch won[0] {
	case ResolveRetry:
		if st.State != RunCompleted || st.Outputs["d"] != "d c" || !slices.Equal(calls, []string{`echo {"text":"a"}`, `echo {"text":"c"}`, `echo {"text":"d c"}`}) {
			t.Errorf("retried: %s %v %v, calls %q", st.State, st.Outputs, st.Error, calls)
		}
	case ResolveSkip:
		if st.State != RunCompleted || st.Outputs["d"] != "d c's default" || !slices.Equal(calls, []string{`echo {"text":"a"}`, `echo {"text":"d c's default"}`}) {
			t.Errorf("skipped: %s %v %v, calls %q", st.State, st.Outputs, st.Error, calls)
		}
	case ResolveFail:
		if st.State != RunFailed || st.Error == nil || st.Error.Code != ErrInterrupted || st.Error.Step != "c" || !slices.Equal(calls, []string{`echo {"text":"a"}`}) {
			t.Errorf("failed: %s %+v, calls %q", st.State, st.Error, calls)
		}
	}
	// The events say who decided what, once.
	var resolved []Event
	for _, ev := range r.events(t, "r1") {
		if ev.Type == EventStepResolved {
			resolved = append(resolved, ev)
		}
	}
	if len(resolved) != 1 || resolved[0].Action != string(won[0]) || resolved[0].Step != "c" || resolved[0].Attempt != 1 {
		t.Errorf("step:resolved events %+v, want one, %s of c's attempt 1", resolved, won[0])
	}
}

// TestResolveRefused: a resolution for a step the run is not interrupted
// at, of an unknown kind, or of a run that is not there is refused, and
// the run stays interrupted.
func TestResolveRefused(t *testing.T) {
	r := interruptedRun(t, "", onceWorkflow(), "c")
	ctx := context.Background()
	for _, c := range []struct {
		run, step string
		how       Resolution
		is        error
	}{
		{"r1", "a", ResolveRetry, ErrNotInterrupted},
		{"r1", "d", ResolveSkip, ErrNotInterrupted},
		{"r1", "c", "again", nil},
		{"r2", "c", ResolveRetry, ErrNoRun},
	} {
		err := r.e.Resolve(ctx, c.run, c.step, c.how)
		if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("Resolve(%s, %s, %s) = %v, want %v", c.run, c.step, c.how, err, c.is)
		}
	}
	if st, err := r.e.Get(ctx, "r1"); err != nil || st.State != RunInterrupted {
		t.Fatalf("after the refusals: %+v, %v", st, err)
	}
	runs, err := r.e.Runs(ctx, nil)
	if err != nil || len(runs) != 1 || runs[0].State != RunInterrupted || runs[0].Interrupted.Step != "c" {
		t.Errorf("Runs = %+v, %v; want r1 interrupted at c", runs, err)
	}
	if calls := r.calls(t); !slices.Equal(calls, []string{`echo {"text":"a"}`}) {
		t.Errorf("calls = %q, want a's only", calls)
	}
}

// TestInterruptedItem: an item of a for_each (each/1) is interrupted and
// resolved on its own: skip gives it the inner step's default, it is never
// called, and the items after it run.
func TestInterruptedItem(t *testing.T) {
	wf := &Workflow{ID: "items", Steps: []*Step{
		{ID: "each", Kind: StepForEach, ForEach: &ForEach{Items: tpl(`["x","y","z"]`), Concurrency: 1,
			Step: &Step{Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "{{.item}}"}), OnError: OnErrorContinue, Default: "-"}}},
	}, Outputs: []Output{{Name: "all", Type: "array", Value: tpl("{{.steps.each.result}}")}}}
	r := interruptedRun(t, "", wf, "each/1")
	ctx := context.Background()
	if err := r.e.Resolve(ctx, "r1", "each/1", ResolveSkip); err != nil {
		t.Fatal(err)
	}
	st, err := r.e.Wait(ctx, "r1")
	if err != nil || st.State != RunCompleted {
		t.Fatalf("run: %+v, %v", st, err)
	}
	if got := st.Outputs["all"]; !slices.Equal(toStrings(got), []string{"x", "-", "z"}) {
		t.Errorf("outputs = %v, want [x - z]", got)
	}
	if calls := r.calls(t); slices.Contains(calls, `echo {"text":"y"}`) {
		t.Errorf("calls = %q: the skipped item was called", calls)
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestRetryInterruptedAgain: a retried attempt (2) that is itself
// interrupted makes the run interrupted at attempt 2; retried again, the
// step is called as attempt 3 with that attempt's idempotency key.
func TestRetryInterruptedAgain(t *testing.T) {
	wf := onceWorkflow()
	r := interruptedRun(t, "", wf, "c")
	ctx := context.Background()
	// The retry is held and its engine closed, as the first attempt was.
	r.e.Close()
	reached := make(chan struct{})
	var once sync.Once
	e2, err := New(ctx, &EngineOptions{Database: r.db, Host: r.h, Workflows: registry(wf), StepContext: func(ctx context.Context, ev Event) context.Context {
		if ev.Step == "c" && ev.Attempt == 2 {
			once.Do(func() { close(reached) })
			<-ctx.Done()
		}
		return ctx
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, e2, "r1", func(st *RunStatus) bool { return st.State == RunInterrupted })
	if err := e2.Resolve(ctx, "r1", "c", ResolveRetry); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("attempt 2 never started")
	}
	e2.Close()
	meta := filepath.Join(t.TempDir(), "meta.log")
	e3, err := New(ctx, &EngineOptions{Database: r.db, Host: newHost(t, r.callLog, "-meta-log", meta), Workflows: registry(wf)})
	if err != nil {
		t.Fatal(err)
	}
	defer e3.Close()
	st := waitFor(t, e3, "r1", func(st *RunStatus) bool { return st.State == RunInterrupted || st.State.Ended() })
	if st.State != RunInterrupted || st.Interrupted.Attempt != 2 {
		t.Fatalf("run: %s %+v, want interrupted at attempt 2", st.State, st.Interrupted)
	}
	if err := e3.Resolve(ctx, "r1", "c", ResolveRetry); err != nil {
		t.Fatal(err)
	}
	if st, err := e3.Wait(ctx, "r1"); err != nil || st.State != RunCompleted {
		t.Fatalf("run: %+v, %v", st, err)
	}
	if keys := idempotencyKeys(t, meta); !slices.Equal(keys, []string{"r1/c/3", "r1/d/1"}) {
		t.Errorf("idempotency keys = %q, want c's attempt 3, then d", keys)
	}
	evs, err := e3.Events(ctx, "r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var started []int
	for _, ev := range evs {
		if ev.Type == EventStepStarted && ev.Step == "c" {
			started = append(started, ev.Attempt)
		}
	}
	if !slices.Equal(started, []int{1, 2, 3}) {
		t.Errorf("c's step:started attempts = %v, want [1 2 3]", started)
	}
}

// TestInterruptedAndWaiting: a run interrupted at c while another branch
// waits on a gate is interrupted, and names both; the gate is answered and
// c resolved, each on its own, and the run completes.
func TestInterruptedAndWaiting(t *testing.T) {
	wf := onceWorkflow()
	wf.Steps = append(wf.Steps, &Step{ID: "ok", Kind: StepGate, Gate: &Gate{Message: tpl("go on?")}})
	r := interruptedRun(t, "", wf, "c")
	ctx := context.Background()
	st := waitFor(t, r.e, "r1", func(st *RunStatus) bool { return st.Gate != nil })
	if st.State != RunInterrupted || st.Interrupted.Step != "c" || st.Gate.Step != "ok" {
		t.Fatalf("run: %s, interrupted %+v, gate %+v; want interrupted at c and waiting on ok", st.State, st.Interrupted, st.Gate)
	}
	if err := r.e.Answer(ctx, "r1", "ok", GateAnswer{Action: "accept"}); err != nil {
		t.Fatal(err)
	}
	st = waitFor(t, r.e, "r1", func(st *RunStatus) bool { return st.Gate == nil })
	if st.State != RunInterrupted {
		t.Fatalf("after the answer: %s, want still interrupted", st.State)
	}
	if err := r.e.Resolve(ctx, "r1", "c", ResolveRetry); err != nil {
		t.Fatal(err)
	}
	if st, err := r.e.Wait(ctx, "r1"); err != nil || st.State != RunCompleted || st.Outputs["d"] != "d c" {
		t.Fatalf("run: %+v, %v", st, err)
	}
}

// TestRunResolve: the library's Run, resuming a run interrupted at c (the
// same RunID on the same Database), ends with ErrUnresolved without
// RunOptions.Resolve, the run still interrupted; with it, asks it once
// for c's attempt 1 and goes its way.
func TestRunResolve(t *testing.T) {
	wf := onceWorkflow()
	r := interruptedRun(t, "", wf, "c")
	r.e.Close() // Run's engine recovers the run (the same executor id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := Run(ctx, wf, nil, &RunOptions{Host: r.h, Database: r.db, RunID: "r1"})
	if !errors.Is(err, ErrUnresolved) || st == nil || st.State != RunInterrupted {
		t.Fatalf("Run without Resolve = %+v, %v; want ErrUnresolved, the run interrupted", st, err)
	}
	var asked []string
	st, err = Run(ctx, wf, nil, &RunOptions{Host: r.h, Database: r.db, RunID: "r1",
		Resolve: func(ctx context.Context, step Event) (Resolution, error) {
			asked = append(asked, fmt.Sprintf("%s#%d", step.Step, step.Attempt))
			return ResolveSkip, nil
		}})
	if err != nil || st.State != RunCompleted || st.Outputs["d"] != "d c's default" {
		t.Fatalf("Run with Resolve = %+v, %v", st, err)
	}
	if !slices.Equal(asked, []string{"c#1"}) {
		t.Errorf("Resolve asked for %q, want c's attempt 1 once", asked)
	}
}
