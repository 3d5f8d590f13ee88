package workflow

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestOnEvent: EngineOptions.OnEvent sees every stored event of a run once,
// in order, each naming the run's workflow and with the Seq it was stored
// under (a cancelled run's terminal
// event, emitted outside the run, too).
func TestOnEvent(t *testing.T) {
	var mu sync.Mutex
	var seen []Event
	wf := &Workflow{ID: "two", Steps: []*Step{echo("a", "x"), echo("b", "{{.steps.a.result}}", "a")}}
	slow := &Workflow{ID: "slow", Steps: []*Step{{ID: "wait", Kind: StepTool, Tool: "mcp_fx_slow", Arguments: val(map[string]any{"ms": 60000})}}}
	r := newRig(t, &EngineOptions{OnEvent: func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, ev)
	}}, wf, slow)
	st := r.run(t, "two", nil)
	if st.State != RunCompleted {
		t.Fatalf("state = %s, error %v", st.State, st.Error)
	}
	stored := r.events(t, st.ID)
	mu.Lock()
	var got []Event
	for _, ev := range seen {
		if ev.RunID == st.ID {
			got = append(got, ev)
		}
	}
	mu.Unlock()
	if len(got) != len(stored) {
		t.Fatalf("OnEvent saw %d events of the run, %d stored", len(got), len(stored))
	}
	for i, ev := range got {
		if ev.Type != stored[i].Type || ev.Step != stored[i].Step || ev.Seq != stored[i].Seq {
			t.Errorf("OnEvent's event %d = %s %s seq %d, stored %s %s seq %d", i, ev.Type, ev.Step, ev.Seq, stored[i].Type, stored[i].Step, stored[i].Seq)
		}
		if ev.Workflow != "two" {
			t.Errorf("OnEvent's event %d (%s) names workflow %q, want two", i, ev.Type, ev.Workflow)
		}
	}

	// Cancel emits run:cancelled itself, outside the run's function.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id, err := r.e.Start(ctx, "slow", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.e.Follow(ctx, id, 0, func(ev Event) error {
		if ev.Type == EventStepStarted {
			return errStop
		}
		return nil
	}); err != nil && err != errStop {
		t.Fatal(err)
	}
	if err := r.e.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	i := slices.IndexFunc(seen, func(ev Event) bool { return ev.RunID == id && ev.Type == EventRunCancelled })
	if i < 0 {
		t.Fatalf("OnEvent saw no run:cancelled of the cancelled run")
	}
	if seen[i].Workflow != "slow" {
		t.Errorf("run:cancelled names workflow %q, want slow", seen[i].Workflow)
	}
}
