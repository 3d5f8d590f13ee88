package api_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestClient: a Client gets the daemon's answers, and its errors with
// the text they have in process and matching the same sentinels: a
// read-only or unknown server's deletion; the engine's no run, gate not
// waiting, step not interrupted and a run id taken with other inputs. A
// run started through it waits on its gate, is answered, and its events
// followed to the end are the ones it lists. Every exchange is checked
// against the OpenAPI document.
func TestClient(t *testing.T) {
	a := startWorkflows(t)
	ctx := context.Background()
	c := api.NewClient(a.url, a.client)
	defer c.Close()

	st, err := c.State(ctx)
	h := a.d.Host()
	if err != nil || st.ToolNameFormat != h.ToolNameFormat() || len(st.Servers) != len(h.Servers()) ||
		!slices.EqualFunc(st.Tools, h.Tools(), func(x, y host.Tool) bool {
			return x.Name == y.Name && x.Server == y.Server && x.Tool.Name == y.Tool.Name
		}) {
		t.Errorf("State = %+v, %v; want the host's", st, err)
	}
	if wfs, err := c.Workflows(ctx); err != nil || wfs["gated"] != a.d.Workflows().Workflow("gated").Digest || len(wfs) != 1 {
		t.Errorf("Workflows = %v, %v; want gated with its digest", wfs, err)
	}
	if rep, err := c.Usage(ctx, 30*time.Second, ""); err != nil || rep.Calls == nil {
		t.Errorf("Usage(30s) = %+v, %v", rep, err)
	}

	same := func(what string, got, want, is error) {
		t.Helper()
		if got == nil || want == nil || got.Error() != want.Error() || !errors.Is(got, is) {
			t.Errorf("%s: through the API %v, in process %v; want the same, matching %v", what, got, want, is)
		}
	}
	same("deleting a configured server", c.DeleteServer(ctx, "a"), a.d.DeleteServer(ctx, "a", 0), daemon.ErrReadOnly)

	e := c.Engine()
	eng := a.d.Workflows().Engine
	_, want := eng.Get(ctx, "nosuch")
	_, got := e.Get(ctx, "nosuch")
	same("an unknown run", got, want, workflow.ErrNoRun)
	if _, err := e.Start(ctx, "gated", map[string]any{"text": "hi"}, &workflow.StartOptions{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	var seen []workflow.Event
	err = e.Follow(ctx, "r1", 0, func(ev workflow.Event) error {
		seen = append(seen, ev)
		if ev.Type == workflow.EventGateWaiting {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Follow until the gate waits: %v (%d events)", err, len(seen))
	}
	same("a gate not waiting", e.Answer(ctx, "r1", "nosuch", workflow.GateAnswer{Action: "accept"}),
		eng.Answer(ctx, "r1", "nosuch", workflow.GateAnswer{Action: "accept"}), workflow.ErrNotWaiting)
	same("a step not interrupted", e.Resolve(ctx, "r1", "ok", workflow.ResolveRetry), eng.Resolve(ctx, "r1", "ok", workflow.ResolveRetry), workflow.ErrNotInterrupted)
	_, got = e.Start(ctx, "gated", map[string]any{"text": "other"}, &workflow.StartOptions{RunID: "r1"})
	_, want = eng.Start(ctx, "gated", map[string]any{"text": "other"}, &workflow.StartOptions{RunID: "r1"})
	same("a run id taken with other inputs", got, want, workflow.ErrInputsDiffer)

	if err := e.Answer(ctx, "r1", "ok", workflow.GateAnswer{Action: "accept", Content: map[string]any{"approve": true}}); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	seen = nil
	if err := e.Follow(ctx, "r1", 0, func(ev workflow.Event) error { seen = append(seen, ev); return nil }); err != nil {
		t.Fatalf("Follow to the end: %v", err)
	}
	evs, err := e.Events(ctx, "r1", 0)
	if err != nil || len(evs) != len(seen) || seen[len(seen)-1].Type != workflow.EventRunCompleted {
		t.Errorf("followed %d events (the last %s), listed %d (%v); want the same, ending with run:completed", len(seen), seen[len(seen)-1].Type, len(evs), err)
	}
	if later, err := e.Events(ctx, "r1", 2); err != nil || len(later) != len(evs)-2 || later[0].Seq != 3 {
		t.Errorf("Events after 2: %d, %v; want from seq 3", len(later), err)
	}
	runs, err := e.Runs(ctx, &workflow.RunFilter{Workflow: "gated", Limit: 5})
	if err != nil || len(runs) != 1 || runs[0].ID != "r1" || runs[0].State != workflow.RunCompleted {
		t.Errorf("Runs = %v, %v; want r1, completed", runs, err)
	}
}
