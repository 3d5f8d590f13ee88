package telemetry_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// TestUsageRecorded: runs' tokens reach the store in a batch (not before
// a flush), per agent and workflow; Close writes what is left.
func TestUsageRecorded(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tel, err := telemetry.New(&telemetry.Options{Usage: st})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	ctx := context.Background()
	rctx, run := tel.StartRun(ctx, telemetry.KindAgent, "helper", "", time.Time{})
	_, end := tel.StartLLMRequest(rctx, "acme", "m1")
	end(40, 2, "")
	run.End(telemetry.OutcomeCompleted, "", time.Time{}, 0)
	_, wf := tel.StartRun(ctx, telemetry.KindWorkflow, "triage", "r1", time.Time{})
	wf.Tokens(5, 1)
	wf.End(telemetry.OutcomeFailed, "tool_error", time.Time{}, 0)

	since := time.Now().Add(-time.Hour)
	if rep, err := st.Usage(ctx, since, ""); err != nil || len(rep.Tokens) != 0 {
		t.Fatalf("before a flush the store has %+v, %v; want nothing (written in batches)", rep, err)
	}
	if err := tel.FlushUsage(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := st.Usage(ctx, since, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TokenStats{{Kind: "agent", Name: "helper", Runs: 1, Input: 40, Output: 2}, {Kind: "workflow", Name: "triage", Runs: 1, Failed: 1, Input: 5, Output: 1}}
	if len(rep.Tokens) != 2 || rep.Tokens[0] != want[0] || rep.Tokens[1] != want[1] {
		t.Errorf("tokens = %+v, want %+v", rep.Tokens, want)
	}
	_, again := tel.StartRun(ctx, telemetry.KindAgent, "helper", "", time.Time{})
	again.End(telemetry.OutcomeCompleted, "", time.Time{}, 0)
	if err := tel.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, _ := st.Usage(ctx, since, ""); len(rep.Tokens) == 0 || rep.Tokens[0].Runs != 2 {
		t.Errorf("after Close: %+v, want helper's 2 runs", rep.Tokens)
	}
}
