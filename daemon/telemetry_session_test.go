package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// headerTransport sets a traceparent header on every request.
type headerTransport struct{ traceparent string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", h.traceparent)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTelemetrySession: a 2025-11-25 client (a stateful session) counts
// in switchboard.downstream.sessions while it is open and, closed, in
// mcp.server.session.duration under its protocol version; its trace
// context, sent in the traceparent HTTP header with no _meta, continues
// through the gateway and the host into the upstream server.
func TestTelemetrySession(t *testing.T) {
	const traceID, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	metaLog := filepath.Join(t.TempDir(), "meta.log")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx", "-meta-log", metaLog)}}
	tel, spans := traced(t)
	r := run(t, cfg, openStore(t), nil, daemon.Options{Telemetry: tel})
	r.awaitReady(t)

	ctx := context.Background()
	hc := &http.Client{Transport: headerTransport{"00-" + traceID + "-" + parent + "-01"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	metric := func(fam string, labels map[string]string) (float64, bool) {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(scrape(t, r.url+"/metrics", "")))
		if err != nil {
			t.Fatal(err)
		}
		return value(fams[fam], labels)
	}
	if v, ok := metric("switchboard_downstream_sessions", nil); !ok || v != 1 {
		t.Errorf("switchboard_downstream_sessions = %v (%v) with the session open, want 1", v, ok)
	}

	// The header's trace reached the upstream, under the gateway's span.
	if got := upstreamTraceparent(t, metaLog); !strings.HasPrefix(got, "00-"+traceID+"-") {
		t.Errorf("the upstream's traceparent = %q, want trace %s (from the HTTP header)", got, traceID)
	}
	found := false
	for _, s := range spans.GetSpans() {
		if s.Name == "tools/call mcp_fx_echo" {
			found = true
			if s.SpanContext.TraceID().String() != traceID || s.Parent.SpanID().String() != parent {
				t.Errorf("the gateway's span: trace %s parent %s, want %s %s", s.SpanContext.TraceID(), s.Parent.SpanID(), traceID, parent)
			}
		}
	}
	if !found {
		t.Errorf("no gateway span; spans: %v", spanNames(spans.GetSpans()))
	}

	cs.Close()
	// The session ends on the gateway's side after the client's DELETE:
	// poll the scrape, bounded.
	wait.For(t, "one session duration and no session open after the client closed", func() (string, bool) {
		n, ok := metric("mcp_server_session_duration_seconds", map[string]string{"mcp_protocol_version": "2025-11-25"})
		open, _ := metric("switchboard_downstream_sessions", nil)
		return fmt.Sprintf("mcp_server_session_duration_seconds count %v (%v), downstream sessions %v", n, ok, open), ok && n == 1 && open == 0
	})
}

// traced is telemetry whose spans go to the returned in-memory exporter,
// closed when t ends (after the daemons it was given to).
func traced(t *testing.T) (*telemetry.Telemetry, *tracetest.InMemoryExporter) {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(&telemetry.Options{SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Close(context.Background()) })
	return tel, spans
}
