package workflow

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestPostgresRestartFences: an engine (A) runs three chains of steps at
// once on PostgreSQL under an executor of its own, and the server
// restarts: every session ends, A's executor lock with it. Nothing closes
// A from outside (a CLI command's engine has nothing watching its
// executor; a serve's may be slow to close it). A must call no step after
// the restart. Another engine (C) adopts the run once A's lock has been
// free for a while and finishes it; no step is called twice but those
// in flight at the restart (idempotent here, so that recovery calls them
// again). Before, A went on calling steps after the restart, until C
// adopted the run; then both called the steps A had in flight.
func TestPostgresRestartFences(t *testing.T) {
	srv := testpg.StartServer(t)
	db := onDatabase(t, srv.URL, "fence")
	createDatabase(t, db)
	const lanes, n = 3, 40
	call := func(lane, i int) string { return fmt.Sprintf(`slow {"ms":%d}`, 100+lanes*i+lane) }
	laneOf := map[string]int{}
	wf := &Workflow{ID: "chains", Concurrency: lanes}
	for lane := range lanes {
		for i := range n {
			s := &Step{ID: fmt.Sprintf("l%d_%02d", lane, i), Kind: StepTool, Tool: "mcp_fx_slow",
				Arguments: val(map[string]any{"ms": 100 + lanes*i + lane}), Idempotent: true}
			if i > 0 {
				s.Needs = []string{fmt.Sprintf("l%d_%02d", lane, i-1)}
			}
			wf.Steps = append(wf.Steps, s)
			laneOf[call(lane, i)] = lane
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	logA, logC := filepath.Join(dir, "a.log"), filepath.Join(dir, "c.log")

	xa, err := OpenExecutor(ctx, db, "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer xa.Close()
	ea, err := New(ctx, &EngineOptions{Database: db, Host: newHost(t, logA), Workflows: registry(wf), Executor: xa})
	if err != nil {
		t.Fatal(err)
	}
	defer ea.Close()
	if _, err := ea.Start(ctx, "chains", nil, &StartOptions{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "A to call its first steps", func() ([]string, bool) {
		c := calls(t, logA)
		return c, len(c) >= 2*lanes
	})
	srv.Restart(t)
	before := calls(t, logA)

	xc, err := OpenExecutor(ctx, db, "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer xc.Close()
	// A shorter grace than a process needs to notice a lost lock by its
	// periodic check: the fence must hold without it.
	xc.grace = 500 * time.Millisecond
	ec, err := New(ctx, &EngineOptions{Database: db, Host: newHost(t, logC), Workflows: registry(wf), Executor: xc})
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	// AdoptGrace runs from C's first look.
	wait.For(t, "C to adopt r1", func() ([]string, bool) {
		ids, err := ec.Adopt(ctx, xc.Alive)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := ec.Get(ctx, "r1"); err == nil && st.State.Ended() {
			return ids, true // ended by A, which went on
		}
		return ids, slices.Contains(ids, "r1")
	})
	st, err := ec.Wait(ctx, "r1")
	if err != nil || st.State != RunCompleted {
		t.Fatalf("the run: %+v, %v", st, err)
	}
	// A closed itself, and says why.
	if _, err := ea.Start(ctx, "chains", nil, nil); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrExecutorLost) {
		t.Errorf("A's Start after the restart = %v, want ErrClosed and ErrExecutorLost", err)
	}
	if err := ea.Follow(ctx, "r1", 0, func(Event) error { return nil }); !errors.Is(err, ErrExecutorLost) {
		t.Errorf("A's Follow after the restart = %v, want ErrExecutorLost", err)
	}
	a, c := calls(t, logA), calls(t, logC)
	if len(a) != len(before) {
		t.Errorf("A called %d steps after the restart (its executor's lock lost): %q", len(a)-len(before), a[len(before):])
	}
	// The last call of each chain before the restart was in flight.
	inFlight := map[string]bool{}
	for lane := range lanes {
		for _, l := range slices.Backward(before) {
			if laneOf[l] == lane {
				inFlight[l] = true
				break
			}
		}
	}
	count := map[string]int{}
	for _, l := range append(a, c...) {
		count[l]++
	}
	for lane := range lanes {
		for i := range n {
			want := 1
			if inFlight[call(lane, i)] {
				want = 2
			}
			if got := count[call(lane, i)]; got > want || got == 0 {
				t.Errorf("%s called %d times, want %d", call(lane, i), got, want)
			}
		}
	}
}
