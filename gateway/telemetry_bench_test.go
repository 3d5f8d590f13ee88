package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// BenchmarkTelemetry is the cost of telemetry per gateway call (issue 17
// §4: under 3 %), the paths side by side in one run as in
// BenchmarkToolsCall (each takes its turn in slices of b.N/10 calls):
//
//   - off: the gateway with no telemetry attached;
//
//   - on: as the daemon attaches it by default — the host's client
//     middleware, the gateway's server middleware, the host watcher,
//     metrics, the usage gathered for the store (flushed every 15 s);
//     traces off;
//
//   - traced: on, with traces recorded and given to an exporter that drops
//     them, synchronously on the call's goroutine (Options.SpanExporter):
//     an upper bound of the OTLP exporter's cost, which batches.
//
//     go test ./gateway -run '^$' -bench Telemetry -benchtime 2000x -count 5
//
// It reports calls/s and p50 per path, and on/off and traced/off as ratios
// of calls/s. See docs/performance.md, Telemetry.
func BenchmarkTelemetry(b *testing.B) {
	bin := interop.Build(b, fixturePkg)
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "usage.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	paths := []struct {
		name string
		tel  func() *telemetry.Telemetry
	}{
		{"off", func() *telemetry.Telemetry { return nil }},
		{"on", func() *telemetry.Telemetry { return newBenchTelemetry(b, &telemetry.Options{Usage: st}) }},
		{"traced", func() *telemetry.Telemetry {
			return newBenchTelemetry(b, &telemetry.Options{Usage: st, SpanExporter: discardSpans{}})
		}},
	}
	for _, conc := range []int{1, benchConcurrency} {
		mode := "seq"
		if conc > 1 {
			mode = fmt.Sprintf("c%d", conc)
		}
		b.Run(mode, func(b *testing.B) {
			sessions := make([]*mcp.ClientSession, len(paths))
			for i, p := range paths {
				sessions[i] = benchHTTPClient(b, benchTelemetryGateway(b, bin, p.tel()))
				warmUp(b, sessions[i], "mcp_fx_echo")
			}
			runs := make([]callRun, len(paths))
			b.ResetTimer()
			for r := range benchRounds {
				n := b.N/benchRounds + boolInt(r < b.N%benchRounds)
				for i := range paths {
					runs[i].add(runCalls(b, sessions[i], "mcp_fx_echo", conc, n))
				}
			}
			b.StopTimer()
			st := map[string]callStats{}
			for i, p := range paths {
				st[p.name] = runs[i].stats()
				b.ReportMetric(st[p.name].perSec, p.name+"-calls/s")
				b.ReportMetric(float64(st[p.name].p50.Microseconds()), p.name+"-p50-µs")
			}
			b.ReportMetric(st["on"].perSec/st["off"].perSec, "on/off")
			b.ReportMetric(st["traced"].perSec/st["off"].perSec, "traced/off")
		})
	}
}

func newBenchTelemetry(b *testing.B, o *telemetry.Options) *telemetry.Telemetry {
	t, err := telemetry.New(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { t.Close(context.Background()) })
	return t
}

// benchTelemetryGateway is benchGateway with tel attached as the daemon
// attaches it (nil: none).
func benchTelemetryGateway(b *testing.B, bin string, tel *telemetry.Telemetry) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ho := &host.Options{}
	if tel != nil {
		ho.ClientMiddleware = tel.ClientMiddleware
	}
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: bin}}, ho)
	if err != nil {
		b.Fatal(err)
	}
	gwOpts := &gateway.Options{}
	if tel != nil {
		tel.Watch(h)
		gwOpts.Middleware = append(gwOpts.Middleware, tel.ServerMiddleware("", func(name string) (string, bool) {
			t, ok := h.Tool(name)
			return t.Server, ok
		}))
	}
	if err := h.Start(ctx); err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(h, gwOpts)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	b.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		h.Close()
		ts.Close()
	})
	return ts.URL + "/mcp"
}

// discardSpans is a span exporter that drops what it is given.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }
