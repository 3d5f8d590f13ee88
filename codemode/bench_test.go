package codemode_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboardmcp/switchboard/codemode"
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
		res, err := codemode.Run(ctx, `return await tools.github.search_issues({q: "x", limit: 1})`, f.tools, f.call, codemode.Budget{})
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
		if _, err := codemode.Run(context.Background(), `return 1`, nil, nil, codemode.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}
