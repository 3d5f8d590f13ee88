package sandbox_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/codemode/sandbox"
)

// BenchmarkRunOneCall and BenchmarkCallDirect make the same tool call over
// the same in-memory MCP session, through a program and directly: the
// difference is what code mode costs a call (docs/performance.md, "Code
// mode").
func BenchmarkRunOneCall(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := sandbox.Run(ctx, `return await tools.github.search_issues({q: "x", limit: 1})`, f.tools, f.call, codemode.Budget{})
		if err != nil || string(res.Value) != `{"issues":[101]}` {
			b.Fatal(res, err)
		}
	}
}

func BenchmarkCallDirect(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := f.call(ctx, "mcp_github_search_issues", json.RawMessage(`{"q":"x","limit":1}`))
		if err != nil || res.StructuredContent == nil {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkRunEmpty is a run's fixed cost: a fresh runtime and the
// prelude.
func BenchmarkRunEmpty(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sandbox.Run(context.Background(), `return 1`, nil, nil, codemode.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunOverhead makes the direct call and the program's call in
// turn, so both see the same load on a shared machine, and reports the
// median of each and of their difference per pair (the op is the pair).
func BenchmarkRunOverhead(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	var direct, run, diff []float64
	for b.Loop() {
		t0 := time.Now()
		if _, err := f.call(ctx, "mcp_github_search_issues", json.RawMessage(`{"q":"x","limit":1}`)); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := sandbox.Run(ctx, `return await tools.github.search_issues({q: "x", limit: 1})`, f.tools, f.call, codemode.Budget{}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		d, r := float64(t1.Sub(t0).Microseconds()), float64(t2.Sub(t1).Microseconds())
		direct, run, diff = append(direct, d), append(run, r), append(diff, r-d)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(direct), "direct-µs")
	b.ReportMetric(median(run), "run-µs")
	b.ReportMetric(median(diff), "overhead-µs")
}
