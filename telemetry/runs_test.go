package telemetry_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboardmcp/switchboard/telemetry"
)

// families scrapes tel's /metrics and parses it with Prometheus's parser.
func families(t *testing.T, tel *telemetry.Telemetry) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, rec.Body)
	}
	return fams
}

// series is the value of fam's series whose labels include want (a
// histogram's: its sum, and its count in n), and whether there is one.
func series(fam *dto.MetricFamily, want map[string]string) (v float64, n uint64, ok bool) {
	if fam == nil {
		return 0, 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, w := range want {
			if have[k] != w {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), 0, true
		case m.Histogram != nil:
			return m.Histogram.GetSampleSum(), m.Histogram.GetSampleCount(), true
		}
	}
	return 0, 0, false
}

// TestAgentRun: an agent run with two turns and an LLM request in each
// (one failed) records the run by outcome, its tokens (the gen_ai
// token usage by provider and model, and the run's), and spans
// invoke_agent > turn N > chat MODEL.
func TestAgentRun(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(&telemetry.Options{SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	ctx, run := tel.StartRun(context.Background(), telemetry.KindAgent, "researcher", "run-1", time.Time{})
	tctx, endTurn := tel.StartTurn(ctx, 1)
	_, end := tel.StartLLMRequest(tctx, "openai", "gpt-test")
	end(100, 20, "")
	endTurn()
	tctx, endTurn = tel.StartTurn(ctx, 2)
	_, end = tel.StartLLMRequest(tctx, "openai", "gpt-test")
	end(50, 7, "")
	_, end = tel.StartLLMRequest(tctx, "openai", "gpt-test")
	end(0, 0, "rate_limit")
	endTurn()
	run.End(telemetry.OutcomeCompleted, "", time.Time{}, 0)
	run.End(telemetry.OutcomeFailed, "x", time.Time{}, 0) // only the first counts

	fams := families(t, tel)
	for _, c := range []struct {
		fam    string
		labels map[string]string
		want   float64
		count  uint64
	}{
		{"switchboard_runs_total", map[string]string{"switchboard_run_kind": "agent", "switchboard_run_name": "researcher", "switchboard_run_outcome": "completed"}, 1, 0},
		{"gen_ai_client_token_usage", map[string]string{"gen_ai_provider_name": "openai", "gen_ai_request_model": "gpt-test", "gen_ai_token_type": "input"}, 150, 2},
		{"gen_ai_client_token_usage", map[string]string{"gen_ai_provider_name": "openai", "gen_ai_request_model": "gpt-test", "gen_ai_token_type": "output"}, 27, 2},
		{"gen_ai_client_operation_duration_seconds", map[string]string{"gen_ai_request_model": "gpt-test", "error_type": "rate_limit"}, -1, 1},
		{"switchboard_run_tokens_total", map[string]string{"switchboard_run_name": "researcher", "gen_ai_token_type": "input"}, 150, 0},
		{"switchboard_run_tokens_total", map[string]string{"switchboard_run_name": "researcher", "gen_ai_token_type": "output"}, 27, 0},
	} {
		v, n, ok := series(fams[c.fam], c.labels)
		if !ok || (c.want >= 0 && v != c.want) || n != c.count {
			t.Errorf("%s%v = %v (count %d, found %v), want %v (count %d)", c.fam, c.labels, v, n, ok, c.want, c.count)
		}
	}
	if _, _, ok := series(fams["switchboard_runs_total"], map[string]string{"switchboard_run_outcome": "failed"}); ok {
		t.Error("a second End counted")
	}

	stubs := spans.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range stubs {
		byName[s.Name] = s
	}
	root, ok := byName["invoke_agent researcher"]
	if !ok {
		t.Fatalf("no invoke_agent span in %v", names(stubs))
	}
	turn2 := byName["turn 2"]
	if turn2.Parent.SpanID() != root.SpanContext.SpanID() {
		t.Errorf("turn 2's parent is %s, want the run's %s", turn2.Parent.SpanID(), root.SpanContext.SpanID())
	}
	chats := 0
	for _, s := range stubs {
		if s.Name != "chat gpt-test" {
			continue
		}
		chats++
		if s.Parent.SpanID() != byName["turn 1"].SpanContext.SpanID() && s.Parent.SpanID() != turn2.SpanContext.SpanID() {
			t.Errorf("an LLM request's span is not under a turn: parent %s", s.Parent.SpanID())
		}
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Error("an LLM request's span is in another trace")
		}
	}
	if chats != 3 {
		t.Errorf("%d LLM request spans, want 3 (%v)", chats, names(stubs))
	}
}

// TestWorkflowEvents: a workflow run's events, as the daemon passes them,
// record the run by outcome and duration, its agent steps' tokens, and a
// span per run with a child per step (each for_each item its own).
func TestWorkflowEvents(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(&telemetry.Options{SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, ev := range []telemetry.WorkflowEvent{
		{Type: "run:started", RunID: "r1", Workflow: "triage", Item: -1, Time: at(0)},
		{Type: "step:started", RunID: "r1", Workflow: "triage", Step: "ask", Item: -1, Attempt: 1, Time: at(1)},
		{Type: "step:completed", RunID: "r1", Workflow: "triage", Step: "ask", Item: -1, Time: at(5), InputTokens: 30, OutputTokens: 4},
		{Type: "step:started", RunID: "r1", Workflow: "triage", Step: "each", Item: 0, Attempt: 1, Time: at(6)},
		{Type: "step:started", RunID: "r1", Workflow: "triage", Step: "each", Item: 1, Attempt: 1, Time: at(6)},
		{Type: "step:completed", RunID: "r1", Workflow: "triage", Step: "each", Item: 0, Time: at(8)},
		{Type: "step:failed", RunID: "r1", Workflow: "triage", Step: "each", Item: 1, Time: at(9), Error: "tool_error"},
		{Type: "run:failed", RunID: "r1", Workflow: "triage", Step: "each", Item: -1, Time: at(10), Error: "tool_error", Duration: 1500 * time.Millisecond},
		// A run recovered from another process: its start was not seen.
		{Type: "run:completed", RunID: "r2", Workflow: "triage", Item: -1, Time: at(20), Duration: time.Second},
	} {
		tel.WorkflowEvent(ev)
	}
	fams := families(t, tel)
	for _, c := range []struct {
		fam    string
		labels map[string]string
		want   float64
		count  uint64
	}{
		{"switchboard_runs_total", map[string]string{"switchboard_run_kind": "workflow", "switchboard_run_name": "triage", "switchboard_run_outcome": "failed"}, 1, 0},
		{"switchboard_runs_total", map[string]string{"switchboard_run_kind": "workflow", "switchboard_run_name": "triage", "switchboard_run_outcome": "completed"}, 1, 0},
		{"switchboard_run_duration_seconds", map[string]string{"switchboard_run_name": "triage", "switchboard_run_outcome": "failed"}, 1.5, 1},
		{"switchboard_run_tokens_total", map[string]string{"switchboard_run_kind": "workflow", "switchboard_run_name": "triage", "gen_ai_token_type": "input"}, 30, 0},
	} {
		v, n, ok := series(fams[c.fam], c.labels)
		if !ok || v != c.want || n != c.count {
			t.Errorf("%s%v = %v (count %d, found %v), want %v (count %d)", c.fam, c.labels, v, n, ok, c.want, c.count)
		}
	}
	stubs := spans.GetSpans()
	var run tracetest.SpanStub
	steps := 0
	for _, s := range stubs {
		if s.Name == "workflow triage" && s.StartTime.Equal(at(0)) {
			run = s
		}
	}
	for _, s := range stubs {
		if strings.HasPrefix(s.Name, "step ") {
			steps++
			if s.Parent.SpanID() != run.SpanContext.SpanID() {
				t.Errorf("span %s's parent is not the run's", s.Name)
			}
		}
	}
	if steps != 3 || !run.SpanContext.IsValid() || !run.EndTime.Equal(at(10)) {
		t.Errorf("spans %v: want workflow triage from 0 to 10 ms with 3 steps under it", names(stubs))
	}
}

func names(stubs tracetest.SpanStubs) []string {
	var out []string
	for _, s := range stubs {
		out = append(out, s.Name)
	}
	return out
}
