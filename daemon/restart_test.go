package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestPostgresRestartFencesReplicas: two replicas on one PostgreSQL; A
// runs a chain of steps that are not idempotent. The server restarts:
// both replicas' executor locks are lost, both exit with
// workflow.ErrExecutorLost, and A calls no step after the restart. A
// replica started afterwards (C, as a supervisor would) adopts the run
// once A's lock has been free for workflow.AdoptGrace: the step A had in
// flight is not called again but interrupted (unless A recorded its
// outcome before it noticed), and once a person retries it the run
// completes. Every step is called once, but an interrupted one: by A, and
// by the retry.
func TestPostgresRestartFencesReplicas(t *testing.T) {
	srv := testpg.StartServer(t)
	db := testpg.CreateDatabase(t, srv.URL, "restart")
	val := func(v any) *workflow.Value {
		x, err := workflow.NewValue(v)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	const n = 8
	call := func(i int) string { return fmt.Sprintf(`slow {"ms":%d}`, 300+i) }
	wf := &workflow.Workflow{ID: "chain", Digest: "d1"}
	for i := range n {
		s := &workflow.Step{ID: fmt.Sprintf("s%d", i), Kind: workflow.StepTool, Tool: "mcp_fx_slow", Arguments: val(map[string]any{"ms": 300 + i})}
		if i > 0 {
			s.Needs = []string{fmt.Sprintf("s%d", i-1)}
		}
		wf.Steps = append(wf.Steps, s)
	}
	dir := t.TempDir()
	replica := func(log string) *running {
		cfg := &config.Config{Servers: []config.Server{fixture(t, "fx", "-call-log", filepath.Join(dir, log))}}
		return run(t, cfg, openDB(t, db), nil, daemon.Options{Database: db, Workflows: []*workflow.Workflow{wf}})
	}
	ra, rb := replica("a.log"), replica("b.log")
	ra.awaitReady(t)
	rb.awaitReady(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := ra.d.Workflows().Engine.Start(ctx, "chain", nil, &workflow.StartOptions{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	awaitFile(t, filepath.Join(dir, "a.log"), call(2))
	srv.Restart(t)
	// Stopped before the replicas' own checks (no child process left)
	// see the server the restart started.
	t.Cleanup(func() { srv.Stop(t) })
	before := calls(t, filepath.Join(dir, "a.log"))
	for name, r := range map[string]*running{"A": ra, "B": rb} {
		select {
		case err := <-r.done:
			if !errors.Is(err, workflow.ErrExecutorLost) {
				t.Errorf("%s's Run = %v, want ErrExecutorLost", name, err)
			}
			r.done <- nil // for the cleanup's shutdown
		case <-ctx.Done():
			t.Fatalf("%s still runs after the restart", name)
		}
	}
	if a := calls(t, filepath.Join(dir, "a.log")); len(a) != len(before) {
		t.Errorf("A called %q after the restart", a[len(before):])
	}
	inFlight := before[len(before)-1]

	rc := replica("c.log")
	rc.awaitReady(t)
	e := rc.d.Workflows().Engine
	// Adoption waits out AdoptGrace.
	st := wait.For(t, "C to take up r1", func() (*workflow.RunStatus, bool) {
		st, err := e.Get(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		return st, st.State == workflow.RunInterrupted || st.State.Ended()
	})
	// A may have recorded the outcome of the step it had in flight
	// (PostgreSQL back before A noticed its lock gone: the call was made
	// once, its outcome is true); else that step is interrupted.
	retried := ""
	if st.State == workflow.RunInterrupted {
		if call(slices.IndexFunc(wf.Steps, func(s *workflow.Step) bool { return s.ID == st.Interrupted.Step })) != inFlight {
			t.Fatalf("the run on C: interrupted at %+v, want the step A had in flight (%s)", st.Interrupted, inFlight)
		}
		if err := e.Resolve(ctx, "r1", st.Interrupted.Step, workflow.ResolveRetry); err != nil {
			t.Fatal(err)
		}
		retried = inFlight
	}
	if st, err := e.Wait(ctx, "r1"); err != nil || st.State != workflow.RunCompleted {
		t.Fatalf("the run on C: %+v, %v", st, err)
	}
	all := append(calls(t, filepath.Join(dir, "a.log")), calls(t, filepath.Join(dir, "b.log"))...)
	all = append(all, calls(t, filepath.Join(dir, "c.log"))...)
	for i := range n {
		want := 1
		if call(i) == retried {
			want = 2
		}
		if got := countOf(all, call(i)); got != want {
			t.Errorf("%s called %d times, want %d (all calls %q)", call(i), got, want, all)
		}
	}
}

func countOf(l []string, s string) int {
	n := 0
	for _, x := range l {
		if x == s {
			n++
		}
	}
	return n
}
