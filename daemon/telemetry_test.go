package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// The trace a client starts: its id must reach the upstream server.
const (
	clientTraceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientParentSpan = "00f067aa0ba902b7"
)

// TestTelemetry: known calls through the gateway show in /metrics (parsed
// with Prometheus's own text parser) with the expected series and counts;
// a trace a client starts in _meta runs through the gateway and the host
// into the upstream server, which receives the same trace id in its
// _meta; the server's secret reaches neither a span nor a metric, payloads
// recorded or not; /metrics is behind the gateway's Host check.
func TestTelemetry(t *testing.T) {
	const secretValue = "s3cr3t-telemetry-value-81723"
	metaLog := filepath.Join(t.TempDir(), "meta.log")
	fx := fixture(t, "fx", "-meta-log", metaLog)
	fx.Env = map[string]string{"API_TOKEN": "{{env.TEL_SECRET}}"}
	cfg := &config.Config{Servers: []config.Server{fx}}

	red := secret.NewRedactor()
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(&telemetry.Options{Redactor: red, SpanExporter: spans, RecordPayloads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Close(context.Background()) })
	lookup := func(k string) (string, bool) {
		if k == "TEL_SECRET" {
			return secretValue, true
		}
		return "", false
	}
	r := run(t, cfg, openStore(t), nil, daemon.Options{Telemetry: tel,
		Host: &host.Options{Redactor: red, LookupEnv: lookup}})
	r.awaitReady(t)

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // upstream name -> published
	for _, tl := range tools.Tools {
		names[strings.TrimPrefix(tl.Name, "mcp_fx_")] = tl.Name
	}
	call := func(name string, args any, meta mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
		if err != nil && name != "no_such_tool" {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	traced := mcp.Meta{"traceparent": "00-" + clientTraceID + "-" + clientParentSpan + "-01"}
	call(names["echo"], map[string]any{"text": "hello " + secretValue}, traced)
	call(names["echo"], map[string]any{"text": "two"}, nil)
	call(names["echo"], map[string]any{"text": "three"}, nil)
	call(names["fail"], map[string]any{}, nil)
	if res := call(names["add"], map[string]any{"a": "not a number", "b": 1}, nil); !res.IsError {
		t.Fatalf("add with a string: not refused")
	}
	call("no_such_tool", map[string]any{}, nil)
	cs.Close()

	// Metrics.
	body := scrape(t, r.url+"/metrics", "")
	if strings.Contains(body, secretValue) {
		t.Errorf("/metrics holds the server's secret")
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	checks := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": names["echo"], "mcp_protocol_version": "2026-07-28"}, 3},
		{"mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": names["fail"], "error_type": "tool_error"}, 1},
		{"mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": names["add"], "error_type": "invalid_arguments"}, 1},
		{"mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/list"}, 1},
		{"mcp_client_operation_duration_seconds", map[string]string{"switchboard_server": "fx", "mcp_method_name": "tools/call", "gen_ai_tool_name": "echo"}, 3},
		{"mcp_client_operation_duration_seconds", map[string]string{"switchboard_server": "fx", "mcp_method_name": "tools/call", "gen_ai_tool_name": "fail", "error_type": "tool_error"}, 1},
		{"switchboard_calls_refused_total", map[string]string{"switchboard_refusal": "invalid_arguments"}, 1},
		{"switchboard_calls_refused_total", map[string]string{"switchboard_refusal": "unknown_tool"}, 1},
		{"switchboard_servers", map[string]string{"switchboard_server_state": "ready"}, 1},
		{"switchboard_servers", map[string]string{"switchboard_server_state": "failed"}, 0},
		{"switchboard_upstream_sessions", nil, 1},
		{"switchboard_downstream_sessions", nil, 0}, // 2026-07-28 has none
	}
	for _, c := range checks {
		got, ok := value(fams[c.family], c.labels)
		if !ok {
			t.Errorf("%s%v: no such series; /metrics:\n%s", c.family, c.labels, body)
			continue
		}
		if got != c.want {
			t.Errorf("%s%v = %v, want %v", c.family, c.labels, got, c.want)
		}
	}
	for _, m := range fams["mcp_server_operation_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "gen_ai_tool_name" && l.GetValue() == "no_such_tool" {
				t.Errorf("a tool name no server offers became a label value")
			}
		}
	}

	// The same Host rule as /mcp.
	req, _ := http.NewRequest("GET", r.url+"/metrics", nil)
	req.Host = "evil.example.com"
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /metrics with a foreign Host: %d, want 403", resp.StatusCode)
	}

	// Traces: the upstream received the client's trace id.
	got := upstreamTraceparent(t, metaLog)
	if !strings.HasPrefix(got, "00-"+clientTraceID+"-") {
		t.Errorf("the upstream's traceparent = %q, want trace %s", got, clientTraceID)
	}
	var server, client *tracetest.SpanStub
	stubs := spans.GetSpans()
	for i := range stubs {
		s := &stubs[i]
		if s.SpanContext.TraceID().String() != clientTraceID {
			continue
		}
		switch s.Name {
		case "tools/call " + names["echo"]:
			server = s
		case "tools/call echo":
			client = s
		}
	}
	if server == nil || client == nil {
		t.Fatalf("spans of trace %s: server %v, client %v; all: %v", clientTraceID, server != nil, client != nil, spanNames(stubs))
	}
	if server.Parent.SpanID().String() != clientParentSpan {
		t.Errorf("the gateway's span's parent = %s, want the client's %s", server.Parent.SpanID(), clientParentSpan)
	}
	if client.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("the host's span's parent = %s, want the gateway's %s", client.Parent.SpanID(), server.SpanContext.SpanID())
	}
	if !strings.Contains(got, client.SpanContext.SpanID().String()) {
		t.Errorf("the upstream's traceparent %q does not name the host's span %s", got, client.SpanContext.SpanID())
	}
	recorded := false
	for _, s := range stubs {
		for _, a := range s.Attributes {
			v := a.Value.Emit()
			if strings.Contains(v, secretValue) {
				t.Errorf("span %q: attribute %s holds the secret: %q", s.Name, a.Key, v)
			}
			if a.Key == "gen_ai.tool.call.arguments" && strings.Contains(v, "hello") {
				recorded = true
			}
		}
	}
	if !recorded {
		t.Errorf("record_payloads: no span recorded the arguments of the traced call")
	}
}

// TestMetaKeyError: telemetry reads the gateway's error _meta by name.
func TestMetaKeyError(t *testing.T) {
	if gateway.MetaKeyError != "switchboard/error" {
		t.Errorf("gateway.MetaKeyError = %q: update telemetry's metaKeyError", gateway.MetaKeyError)
	}
}

func scrape(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b)
}

// value is the value of the series of fam whose labels include want: a
// counter's or gauge's value, a histogram's count.
func value(fam *dto.MetricFamily, want map[string]string) (float64, bool) {
	if fam == nil {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		if _, ok := want["error_type"]; !ok && have["error_type"] != "" {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// upstreamTraceparent is the traceparent of the first tools/call the
// fixture logged.
func upstreamTraceparent(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		method, meta, _ := strings.Cut(sc.Text(), " ")
		if method != "tools/call" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(meta), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		s, _ := m["traceparent"].(string)
		return s
	}
	t.Fatalf("%s: no tools/call", path)
	return ""
}

func spanNames(stubs tracetest.SpanStubs) []string {
	var out []string
	for _, s := range stubs {
		out = append(out, fmt.Sprintf("%s(%s)", s.Name, s.SpanContext.TraceID()))
	}
	return out
}

var _ sdktrace.SpanExporter = (*tracetest.InMemoryExporter)(nil)

// TestTelemetryByEndpoint: what comes through a named endpoint is
// labelled with it (switchboard.endpoint on mcp.server.operation.duration
// and on the server span); what comes through /mcp carries no endpoint,
// as before there were named ones. A tool the endpoint renames is
// labelled by the name its clients call, as a published tool (not refused
// as unknown).
func TestTelemetryByEndpoint(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(&telemetry.Options{SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Close(context.Background()) })
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}, Endpoints: []config.Endpoint{{Name: "code", Rename: map[string]string{"say": "mcp_fx_echo"}}}}
	r := run(t, cfg, openStore(t), nil, daemon.Options{Telemetry: tel})
	r.awaitReady(t)

	ctx := context.Background()
	calls := map[string]int{"/mcp": 1, "/e/code/mcp": 2}
	tool := map[string]string{"/mcp": "mcp_fx_echo", "/e/code/mcp": "say"}
	for path, n := range calls {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool[path], Arguments: map[string]any{"text": "x"}}); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		cs.Close()
	}

	body := scrape(t, r.url+"/metrics", "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	byEndpoint := map[string]float64{} // tools/call's count by switchboard_endpoint ("" for none)
	for _, m := range fams["mcp_server_operation_duration_seconds"].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if have["mcp_method_name"] == "tools/call" {
			byEndpoint[have["switchboard_endpoint"]] += float64(m.GetHistogram().GetSampleCount())
		}
	}
	if want := map[string]float64{"": 1, "code": 2}; !maps.Equal(byEndpoint, want) {
		t.Errorf("tools/call by switchboard_endpoint = %v, want %v; /metrics:\n%s", byEndpoint, want, body)
	}
	if _, ok := value(fams["mcp_server_operation_duration_seconds"], map[string]string{"mcp_method_name": "tools/list", "switchboard_endpoint": "code"}); !ok {
		t.Errorf("no tools/list series of the endpoint code")
	}
	if _, ok := value(fams["mcp_server_operation_duration_seconds"], map[string]string{"mcp_method_name": "tools/call", "switchboard_endpoint": "code", "gen_ai_tool_name": "say"}); !ok {
		t.Errorf("the endpoint code's calls of its renamed tool say are not labelled say; /metrics:\n%s", body)
	}
	if refused := fams["switchboard_calls_refused_total"]; len(refused.GetMetric()) > 0 {
		t.Errorf("calls refused: %v; want none (say is the endpoint's tool)", refused.GetMetric())
	}

	spanBy := map[string]int{}
	for _, s := range spans.GetSpans() {
		if s.Name != "tools/call mcp_fx_echo" && s.Name != "tools/call say" || s.SpanKind != oteltrace.SpanKindServer {
			continue
		}
		ep := ""
		for _, a := range s.Attributes {
			if a.Key == "switchboard.endpoint" {
				ep = a.Value.AsString()
			}
		}
		spanBy[ep]++
	}
	if want := map[string]int{"": 1, "code": 2}; !maps.Equal(spanBy, want) {
		t.Errorf("the gateway's tools/call spans by switchboard.endpoint = %v, want %v", spanBy, want)
	}
}
