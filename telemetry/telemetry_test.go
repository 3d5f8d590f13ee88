package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardmcp/switchboard/telemetry"
)

// receiver is an OTLP/HTTP collector: it decodes what it is sent as the
// protobuf OTLP messages.
type receiver struct {
	mu      sync.Mutex
	spans   []string // span names
	metrics []string // metric names
	paths   []string
	// pushed receives each metrics request, once decoded (when not nil;
	// a request nobody waits for is dropped).
	pushed chan *colmetrics.ExportMetricsServiceRequest
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want protobuf", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.paths = append(rc.paths, r.URL.Path)
	switch r.URL.Path {
	case "/v1/traces":
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					rc.spans = append(rc.spans, s.Name)
				}
			}
		}
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	case "/v1/metrics":
		var req colmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					rc.metrics = append(rc.metrics, m.Name)
				}
			}
		}
		if rc.pushed != nil {
			select {
			case rc.pushed <- &req:
			default:
			}
		}
		b, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

// TestOTLPExport: with otlp_endpoint, spans reach an OTLP/HTTP receiver as
// protobuf, at /v1/traces under the base URL, and metrics at /v1/metrics
// (Close pushes them once more); /metrics serves them too.
func TestOTLPExport(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	tel, err := telemetry.New(&telemetry.Options{OTLPEndpoint: srv.URL, AllowLocalEndpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	if !tel.Tracing() {
		t.Fatal("Tracing() = false with an OTLP endpoint")
	}
	ctx := context.Background()
	_, span := tel.Tracer().Start(ctx, "tools/call echo")
	span.End()
	tel.RecordRun(ctx, "workflow", "ask", "completed", 2*time.Second)
	tel.RecordTokens(ctx, "openai", "gpt-test", 120, 30, time.Second)
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, m := range []string{"switchboard_runs_total", "switchboard_run_duration_seconds", "gen_ai_client_token_usage", "gen_ai_client_operation_duration_seconds"} {
		if !strings.Contains(rec.Body.String(), "\n"+m) {
			t.Errorf("/metrics has no %s:\n%s", m, rec.Body)
		}
	}
	if err := tel.Close(ctx); err != nil { // flushes the spans
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !contains(rc.spans, "tools/call echo") {
		t.Errorf("spans received: %q (paths %q)", rc.spans, rc.paths)
	}
	for _, m := range []string{"switchboard.runs", "switchboard.run.duration", "gen_ai.client.token.usage"} {
		if !contains(rc.metrics, m) {
			t.Errorf("metric %s not pushed; received %q (paths %q)", m, rc.metrics, rc.paths)
		}
	}
}

// TestEndpointFloor: the collector's URL passes the URL floor; the error
// never holds its userinfo.
func TestEndpointFloor(t *testing.T) {
	for _, c := range []struct {
		url   string
		local bool
		want  string
	}{
		{"http://127.0.0.1:4318", false, "allow_local_endpoint"},
		{"http://169.254.169.254/", true, "metadata"},
		{"https://user:hunter2@collector.example.com", false, "credentials"},
	} {
		_, err := telemetry.New(&telemetry.Options{OTLPEndpoint: c.url, AllowLocalEndpoint: c.local})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "otlp_endpoint") {
			t.Errorf("New(%q, allow_local %v) = %v, want an otlp_endpoint error saying %q", c.url, c.local, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("New(%q): the error holds the password: %v", c.url, err)
		}
	}
}

// TestTracesOff: without an exporter no span is recorded, and nothing is
// written to a request's _meta.
func TestTracesOff(t *testing.T) {
	tel, err := telemetry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	if tel.Tracing() {
		t.Error("Tracing() = true without an exporter")
	}
	_, span := tel.Tracer().Start(context.Background(), "x")
	if span.SpanContext().IsValid() {
		t.Error("a span was recorded with tracing off")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
