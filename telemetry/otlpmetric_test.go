package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// TestOTLPMetrics: with otlp_endpoint and otlp_interval, an OTLP/HTTP
// receiver is pushed the series of known calls (three tool calls of a
// real server, through the host's middleware; one run) every interval,
// not only at Close, with their attributes and counts.
func TestOTLPMetrics(t *testing.T) {
	rc := &receiver{pushed: make(chan *colmetrics.ExportMetricsServiceRequest)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	tel, err := telemetry.New(&telemetry.Options{OTLPEndpoint: srv.URL, AllowLocalEndpoint: true, OTLPInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())

	bin := interop.Build(t, fixturePkg)
	fx := config.Server{ID: "fx", Transport: config.TransportStdio, Command: bin}
	h, err := host.New([]config.Server{fx}, &host.Options{ClientMiddleware: tel.ClientMiddleware})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := h.CallTool(ctx, "mcp_fx_echo", json.RawMessage(`{"text":"x"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	tel.RecordRun(ctx, "agent", "helper", "completed", time.Second)

	// Pushes come every 50 ms from the start; the calls are in the first
	// one collected after them.
	for {
		var req *colmetrics.ExportMetricsServiceRequest
		select {
		case req = <-rc.pushed:
		case <-ctx.Done():
			t.Fatal("no push with the calls' series before the deadline")
		}
		calls := histogramCount(req, "mcp.client.operation.duration", map[string]string{
			"switchboard.server": "fx", "mcp.method.name": "tools/call", "gen_ai.tool.name": "echo"})
		runs := sumValue(req, "switchboard.runs", map[string]string{
			"switchboard.run.kind": "agent", "switchboard.run.name": "helper", "switchboard.run.outcome": "completed"})
		if calls == 3 && runs == 1 {
			return
		}
		if calls > 3 || runs > 1 {
			t.Fatalf("pushed %d calls and %d runs, want 3 and 1", calls, runs)
		}
	}
}

// histogramCount is the count of name's data point with the attributes
// want, in req; 0 when none.
func histogramCount(req *colmetrics.ExportMetricsServiceRequest, name string, want map[string]string) uint64 {
	for _, m := range metricsNamed(req, name) {
		for _, p := range m.GetHistogram().GetDataPoints() {
			if hasAttrs(p.Attributes, want) {
				return p.Count
			}
		}
	}
	return 0
}

// sumValue is the value of name's (an int sum's) data point with the
// attributes want, in req; 0 when none.
func sumValue(req *colmetrics.ExportMetricsServiceRequest, name string, want map[string]string) int64 {
	for _, m := range metricsNamed(req, name) {
		for _, p := range m.GetSum().GetDataPoints() {
			if hasAttrs(p.Attributes, want) {
				return p.GetAsInt()
			}
		}
	}
	return 0
}

func metricsNamed(req *colmetrics.ExportMetricsServiceRequest, name string) []*metricspb.Metric {
	var out []*metricspb.Metric
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == name {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

func hasAttrs(attrs []*commonpb.KeyValue, want map[string]string) bool {
	n := 0
	for _, a := range attrs {
		if w, ok := want[a.Key]; ok {
			if a.Value.GetStringValue() != w {
				return false
			}
			n++
		}
	}
	return n == len(want)
}
