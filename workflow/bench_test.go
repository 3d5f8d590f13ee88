package workflow

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// benchSteps is the size of the benchmark's workflows: the 20
// trivial tool steps.
const benchSteps = 20

// benchWorkflows are a chain of benchSteps echo steps (each needs the one
// before) and benchSteps independent ones, and a 5-step chain for the
// concurrent runs.
func benchWorkflows() []*Workflow {
	chain := &Workflow{ID: "chain", Concurrency: benchSteps}
	wide := &Workflow{ID: "wide", Concurrency: benchSteps}
	short := &Workflow{ID: "short"}
	for i := range benchSteps {
		id := fmt.Sprintf("s%02d", i)
		var needs []string
		if i > 0 {
			needs = []string{fmt.Sprintf("s%02d", i-1)}
		}
		chain.Steps = append(chain.Steps, echo(id, "x", needs...))
		wide.Steps = append(wide.Steps, echo(id, "x"))
		if i < 5 {
			short.Steps = append(short.Steps, echo(id, "x", needs...))
		}
	}
	nested := &Workflow{ID: "nested", Steps: []*Step{{ID: "inner", Kind: StepWorkflow, Workflow: "short"}}}
	gate := &Workflow{ID: "gate", Steps: []*Step{{ID: "ok", Kind: StepGate, Gate: &Gate{Message: tpl("ok?")}}}}
	return []*Workflow{chain, wide, short, nested, gate}
}

// BenchmarkEngine measures the engine's own overhead per step on SQLite:
// a run of benchSteps trivial tool steps (fixture echo over stdio) minus
// the same benchSteps calls made directly through the host, measured in
// the same process on the same host (ms/step); the independent steps
// against the same calls made at once (the engine runs them at once too).
// concurrent-50 starts 50 runs of a 5-step chain at once and reports
// runs/s.
func BenchmarkEngine(b *testing.B) {
	dir := b.TempDir()
	h := newHost(b, filepath.Join(dir, "calls.log"))
	e, err := New(context.Background(), &EngineOptions{Database: filepath.Join(dir, "state.db"), Host: h, Workflows: registry(benchWorkflows()...)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	ctx := context.Background()
	args := []byte(`{"text":"x"}`)
	direct := func(b *testing.B, parallel bool) {
		var wg sync.WaitGroup
		for range benchSteps {
			call := func() {
				if _, err := h.CallTool(ctx, "mcp_fx_echo", args, nil); err != nil {
					b.Error(err)
				}
			}
			if parallel {
				wg.Go(call)
			} else {
				call()
			}
		}
		wg.Wait()
	}
	run := func(b *testing.B, id string) {
		runID, err := e.Start(ctx, id, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		st, err := e.Wait(ctx, runID)
		if err != nil || st.State != RunCompleted {
			b.Fatalf("run %s: %+v, %v", runID, st, err)
		}
	}
	// perOp is each sub-benchmark's time per iteration, for the next.
	perOp := map[string]time.Duration{}
	measure := func(name string, f func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			f(b) // warm: the fixture's first calls, DBOS's first queries
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				f(b)
			}
			perOp[name] = time.Since(start) / time.Duration(b.N)
			if base, ok := perOp["direct-"+name]; ok {
				b.ReportMetric(float64(perOp[name]-base)/float64(time.Millisecond)/benchSteps, "ms/step")
			}
		})
	}
	measure("direct-chain", func(b *testing.B) { direct(b, false) })
	measure("chain", func(b *testing.B) { run(b, "chain") })
	measure("direct-wide", func(b *testing.B) { direct(b, true) })
	measure("wide", func(b *testing.B) { run(b, "wide") })
	// A nested run of the 5-step chain, against the chain run directly:
	// what waiting on a child workflow costs.
	measure("short", func(b *testing.B) { run(b, "short") })
	b.Run("nested", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			run(b, "nested")
		}
		b.ReportMetric(float64(time.Since(start)/time.Duration(b.N)-perOp["short"])/float64(time.Millisecond), "ms-over-short")
	})
	// From a gate's answer to the run's end: the gate's child workflow
	// receives the answer, ends, and the run sees it.
	b.Run("gate-answer", func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			runID, err := e.Start(ctx, "gate", nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			err = e.Follow(ctx, runID, 0, func(ev Event) error {
				if ev.Type == EventGateWaiting {
					return errStop
				}
				return nil
			})
			if err != errStop {
				b.Fatalf("no gate: %v", err)
			}
			answered := time.Now()
			if err := e.Answer(ctx, runID, "ok", GateAnswer{Action: "accept"}); err != nil {
				b.Fatal(err)
			}
			if st, err := e.Wait(ctx, runID); err != nil || st.State != RunCompleted {
				b.Fatalf("run %s: %+v, %v", runID, st, err)
			}
			total += time.Since(answered)
		}
		b.ReportMetric(float64(total/time.Duration(b.N))/float64(time.Millisecond), "ms-answer-to-end")
	})
	b.Run("concurrent-50", func(b *testing.B) {
		const runs = 50
		start := time.Now()
		for b.Loop() {
			var wg sync.WaitGroup
			for range runs {
				wg.Go(func() { run(b, "short") })
			}
			wg.Wait()
		}
		b.ReportMetric(float64(runs*b.N)/time.Since(start).Seconds(), "runs/s")
	})
}
