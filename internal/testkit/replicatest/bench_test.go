package replicatest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/testhaproxy"
)

// benchCallers is the number of calls in flight at once.
const benchCallers = 16

// BenchmarkReplicas: tools/call throughput (the fixture's echo, over stdio
// behind each replica) through HAProxy configured by
// examples/haproxy/haproxy.cfg, in front of one replica and in front of
// two, in one run: the same two `switchboard serve` processes on one
// PostgreSQL, behind two balancers, one of which lists the first replica
// only. 2026-07-28: one client, benchCallers calls in flight, each request
// balanced on its own. 2025-11-25: benchCallers sessions (so spread over
// the replicas at their start), one call in flight each. Run it with
//
//	go test ./internal/testkit/replicatest -run '^$' -bench Replicas -benchtime 2000x -count 3
//
// Every process (the clients, HAProxy, the replicas, their fixture
// servers, PostgreSQL) shares the machine's cores: with two cores a
// second replica adds no CPU to share the work, only another process.
func BenchmarkReplicas(b *testing.B) {
	c := startCluster(b, 2, nil)
	lbs := map[int]*testhaproxy.HAProxy{
		1: balancer(b, c.replicas[0]),
		2: balancer(b, c.replicas...),
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/replicas=%d", version, n), func(b *testing.B) {
				sessions := 1
				if version < "2026-07-28" {
					sessions = benchCallers
				}
				rec := &recorder{inner: &http.Transport{MaxIdleConnsPerHost: 2 * benchCallers}}
				var css []*mcp.ClientSession
				for range sessions {
					cs := connect(b, lbs[n].URL, version, rec)
					echo(b, cs) // the connection to HAProxy and the replica's upstream warm
					css = append(css, cs)
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for i := range benchCallers {
					cs := css[i%len(css)]
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							echo(b, cs)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			})
		}
	}
}

func echo(b *testing.B, cs *mcp.ClientSession) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "bench"}})
	if err != nil || res.IsError {
		b.Errorf("echo: %+v, %v", res, err)
	}
}
