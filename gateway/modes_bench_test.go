package gateway_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/internal/testkit/toolfixture"
)

// BenchmarkSearchTools: search_tools over 2,000 tools (the fixture's ten
// servers, each with 150 more tools: -tools), through Streamable HTTP on
// loopback with the go-sdk client, the labelled queries in turn. It
// reports the p50 and p99 of a whole search_tools round trip
// (docs/performance.md).
func BenchmarkSearchTools(b *testing.B) {
	var servers []config.Server
	for _, s := range toolfixture.Servers() {
		servers = append(servers, fixture(b, s.ID, "-tools-file", toolfixture.File(s.ID), "-tools", "150"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, servers, nil, &gateway.Options{Endpoints: []gateway.Endpoint{{}, modeEndpoint("s", config.ModeSearch)}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	b.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	cs := benchHTTPClient(b, ts.URL+"/e/s/mcp")
	if n := len(g.Host().Tools()); n < 2000 {
		b.Fatalf("the host has %d tools, want at least 2,000", n)
	}
	qs := toolfixture.Queries()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": qs[i%len(qs)].Query, "limit": 8}})
		if err != nil || res.IsError {
			b.Fatalf("search_tools: %v %v", err, res)
		}
		durations = append(durations, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "p99-ms")
}
