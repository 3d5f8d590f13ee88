package workflow

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestRun: the library function runs a workflow on an engine of its own,
// reports every event in order, asks RunOptions.Answer at a gate, and
// returns the outputs; without Answer a gate ends it with
// ErrGateUnanswered, the run waiting on its database; a failed run is
// returned with its *RunError.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	h := newHost(t, filepath.Join(dir, "calls.log"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var events []Event
	var asked []string
	st, err := Run(ctx, gateWorkflow(GateFail), nil, &RunOptions{
		Host:    h,
		OnEvent: func(ev Event) { events = append(events, ev) },
		Answer: func(ctx context.Context, gate Event) (GateAnswer, error) {
			asked = append(asked, gate.Step+": "+gate.Text)
			return GateAnswer{Action: "accept", Content: map[string]any{"who": "lib"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.State != RunCompleted || st.Outputs["after"] != "approved by lib" {
		t.Errorf("status = %+v, want completed, approved by lib", st)
	}
	if len(asked) != 1 || asked[0] != "ok: Deploy before?" {
		t.Errorf("Answer asked %q", asked)
	}
	for i, ev := range events {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: %+v", i, ev.Seq, events)
		}
	}
	if n := len(events); n == 0 || events[0].Type != EventRunStarted || events[n-1].Type != EventRunCompleted {
		t.Errorf("events %+v: want run:started … run:completed", events)
	}

	db := filepath.Join(dir, "kept.db")
	st, err = Run(ctx, gateWorkflow(GateFail), nil, &RunOptions{Host: h, Database: db, RunID: "r1"})
	if !errors.Is(err, ErrGateUnanswered) || st == nil || st.State != RunWaiting {
		t.Fatalf("without Answer: %+v, %v; want ErrGateUnanswered, waiting", st, err)
	}
	// The same run id again, now with an answer: the run goes on from its
	// gate (its first step is not called again).
	before := len(calls(t, filepath.Join(dir, "calls.log")))
	st, err = Run(ctx, gateWorkflow(GateFail), nil, &RunOptions{Host: h, Database: db, RunID: "r1",
		Answer: func(ctx context.Context, gate Event) (GateAnswer, error) {
			return GateAnswer{Action: "accept", Content: map[string]any{"who": "later"}}, nil
		}})
	if err != nil || st.Outputs["after"] != "approved by later" {
		t.Fatalf("resumed: %+v, %v", st, err)
	}
	if got := calls(t, filepath.Join(dir, "calls.log"))[before:]; len(got) != 1 {
		t.Errorf("calls after the answer = %q, want only the step after the gate", got)
	}

	st, err = Run(ctx, &Workflow{ID: "broken", Steps: []*Step{{ID: "boom", Kind: StepTool, Tool: "mcp_fx_fail"}}}, nil, &RunOptions{Host: h})
	var re *RunError
	if !errors.As(err, &re) || re.Step != "boom" || st == nil || st.State != RunFailed {
		t.Errorf("failing run: %+v, %v; want a *RunError at step boom", st, err)
	}
}
