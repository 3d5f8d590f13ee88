package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestFencedReplicaStops: two replicas on one PostgreSQL run a workflow
// (echo a, slow c, echo d). While A runs c, the backend holding A's
// executor lock is terminated (pg_terminate_backend, as a dropped
// connection or a database restart would end it). A notices, goes unready,
// stops its run and exits with workflow.ErrExecutorLost (to be started
// again as a new executor); B adopts the run once the lock has been free
// for workflow.AdoptGrace and finishes it. Each replica's fixture logs its
// calls: A calls nothing after the fence, and no step but the interrupted
// one (c) runs twice.
func TestFencedReplicaStops(t *testing.T) {
	db := pgDatabase(t, "fencing")
	val := func(v any) *workflow.Value {
		x, err := workflow.NewValue(v)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	wf := &workflow.Workflow{ID: "steps", Digest: "d1", Steps: []*workflow.Step{
		{ID: "a", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "a"})},
		// Idempotent: B calls it again (a step that is not would be
		// interrupted there; see TestPostgresRestartFencesReplicas).
		{ID: "c", Kind: workflow.StepTool, Tool: "mcp_fx_slow", Arguments: val(map[string]any{"ms": 4000}), Needs: []string{"a"}, Idempotent: true},
		{ID: "d", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "d"}), Needs: []string{"c"}},
	}}
	dir := t.TempDir()
	logA, logB := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	replica := func(log string) *running {
		cfg := &config.Config{Servers: []config.Server{fixture(t, "fx", "-call-log", log)}}
		return run(t, cfg, openDB(t, db), nil, daemon.Options{Database: db, Workflows: []*workflow.Workflow{wf}})
	}
	ra, rb := replica(logA), replica(logB)
	ra.awaitReady(t)
	rb.awaitReady(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	if _, err := ra.d.Workflows().Engine.Start(ctx, "steps", nil, &workflow.StartOptions{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	awaitFile(t, logA, "slow ")

	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var terminated int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
		"switchboard executor "+ra.d.Workflows().Executor.ID).Scan(&terminated); err != nil || terminated != 1 {
		t.Fatalf("terminating A's executor backend: %d terminated, %v", terminated, err)
	}

	// A says it is not ready before it exits (polling: the probe has no
	// event; bounded by A's exit). On a loaded machine A may be gone
	// before a probe sees the 503: then it is not listening any more.
	wait.For(t, "A's /readyz to answer 503 after its executor lost its lock", func() (string, bool) {
		resp, err := http.Get(ra.url + "/readyz")
		if err != nil {
			return err.Error(), true // A has stopped listening
		}
		resp.Body.Close()
		return resp.Status, resp.StatusCode == http.StatusServiceUnavailable
	})
	select {
	case err := <-ra.done:
		if !errors.Is(err, workflow.ErrExecutorLost) {
			t.Errorf("A's Run = %v, want ErrExecutorLost", err)
		}
		ra.done <- nil // for the cleanup's shutdown
	case <-ctx.Done():
		t.Fatal("A still runs after its executor lost its lock")
	}
	if ra.d.Ready() {
		t.Errorf("A says it is ready after its executor lost its lock")
	}
	fencedCalls := calls(t, logA)

	st, err := rb.d.Workflows().Engine.Wait(ctx, "r1")
	if err != nil || st.State != workflow.RunCompleted {
		t.Fatalf("the run on B: %+v, %v; want completed", st, err)
	}
	a, b := calls(t, logA), calls(t, logB)
	if len(a) != len(fencedCalls) {
		t.Errorf("A called %v after it exited, %v before", a[len(fencedCalls):], fencedCalls)
	}
	all := append(a, b...)
	for _, want := range []struct {
		call string
		n    int
	}{{`echo {"text":"a"}`, 1}, {`slow {"ms":4000}`, 2}, {`echo {"text":"d"}`, 1}} {
		n := 0
		for _, c := range all {
			if c == want.call {
				n++
			}
		}
		if n != want.n {
			t.Errorf("%s called %d times, want %d (A: %q, B: %q)", want.call, n, want.n, a, b)
		}
	}
}

// calls are the lines of a fixture's -call-log.
func calls(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// awaitFile waits, bounded, until the file at path holds s.
func awaitFile(t *testing.T, path, s string) {
	t.Helper()
	wait.For(t, fmt.Sprintf("%s to hold %q", path, s), func() (string, bool) {
		b, _ := os.ReadFile(path)
		return string(b), strings.Contains(string(b), s)
	})
}
