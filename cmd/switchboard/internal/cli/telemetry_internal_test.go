package cli

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/telemetry"
)

type providerFunc func(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error)

func (f providerFunc) Complete(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error) {
	return f(ctx, req, onText)
}

// TestObserveSteps: the provider agent steps resolve records each model
// call under the run recordAgentRun started (gen_ai token usage by the
// configured provider and model, the run's tokens, a chat span under
// invoke_agent), a failed call by its llm error kind; and the run's
// outcome.
func TestObserveSteps(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(&telemetry.Options{SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	fail := false
	s := &agent.Steps{Provider: func(ctx context.Context, spec string) (llm.Provider, string, string, error) {
		return providerFunc(func(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error) {
			if fail {
				return nil, &llm.Error{Provider: "acme", Kind: llm.KindRateLimit, Message: "slow down"}
			}
			return &llm.Response{Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}}, nil
		}), "acme", "m1", nil
	}}
	observeSteps(s, tel)
	if s.Turn == nil {
		t.Error("observeSteps set no Turn")
	}
	call := func(ctx context.Context) error {
		p, _, _, err := s.Provider(ctx, "acme:m1")
		if err != nil {
			return err
		}
		_, err = p.Complete(ctx, &llm.Request{}, nil)
		return err
	}
	if err := recordAgentRun(context.Background(), tel, "helper", call); err != nil {
		t.Fatal(err)
	}
	fail = true
	if err := recordAgentRun(context.Background(), tel, "helper", call); !errors.Is(err, llm.KindRateLimit) {
		t.Fatalf("err = %v, want the provider's", err)
	}
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_provider_name="acme",gen_ai_request_model="m1",gen_ai_token_type="input"} 12`,
		`gen_ai_client_operation_duration_seconds_count{error_type="rate_limit",gen_ai_operation_name="chat",gen_ai_provider_name="acme",gen_ai_request_model="m1"} 1`,
		`switchboard_runs_total{switchboard_run_kind="agent",switchboard_run_name="helper",switchboard_run_outcome="completed"} 1`,
		`switchboard_runs_total{switchboard_run_kind="agent",switchboard_run_name="helper",switchboard_run_outcome="failed"} 1`,
		`switchboard_run_tokens_total{gen_ai_token_type="output",switchboard_run_kind="agent",switchboard_run_name="helper"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s:\n%s", want, body)
		}
	}
	var agentSpan, chatParent string
	for _, sp := range spans.GetSpans() {
		switch sp.Name {
		case "invoke_agent helper":
			if agentSpan == "" {
				agentSpan = sp.SpanContext.SpanID().String()
			}
		case "chat m1":
			if chatParent == "" {
				chatParent = sp.Parent.SpanID().String()
			}
		}
	}
	if agentSpan == "" || chatParent != agentSpan {
		t.Errorf("chat span's parent %q, want the run's %q", chatParent, agentSpan)
	}
}

// runnerFunc is a daemon.AgentRunner whose runs emit the given events.
type runnerFunc func(emit func(daemon.AgentEvent)) error

func (f runnerFunc) ListAgents() ([]daemon.AgentInfo, error) { return nil, nil }
func (f runnerFunc) RunAgent(ctx context.Context, h *host.Host, name, prompt, runID string, emit func(daemon.AgentEvent)) error {
	return f(emit)
}

// TestObservedRunner: an agent run the management API starts counts by the
// outcome its terminal event says; one that never started does not count.
func TestObservedRunner(t *testing.T) {
	tel, err := telemetry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	ends := map[string]runnerFunc{
		"ok": func(emit func(daemon.AgentEvent)) error {
			emit(daemon.AgentEvent{Type: string(agent.EventRunStarted)})
			emit(daemon.AgentEvent{Type: string(agent.EventRunCompleted), Terminal: true})
			return nil
		},
		"bad": func(emit func(daemon.AgentEvent)) error {
			emit(daemon.AgentEvent{Type: string(agent.EventRunFailed), Terminal: true, Data: []byte(`{"error":{"code":"max_steps","message":"x"}}`)})
			return nil
		},
		"none": func(emit func(daemon.AgentEvent)) error { return errors.New("no such agent") },
	}
	a := &workflowAgents{tel: tel}
	for name, f := range ends {
		var seen int
		err := observedRunner{f, a}.RunAgent(context.Background(), nil, name, "p", "run-"+name, func(daemon.AgentEvent) { seen++ })
		if (err != nil) != (name == "none") || (name != "none" && seen == 0) {
			t.Errorf("%s: err %v, %d events passed on", name, err, seen)
		}
	}
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`switchboard_runs_total{switchboard_run_kind="agent",switchboard_run_name="ok",switchboard_run_outcome="completed"} 1`,
		`switchboard_runs_total{switchboard_run_kind="agent",switchboard_run_name="bad",switchboard_run_outcome="failed"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, `switchboard_run_name="none"`) {
		t.Error("a run that never started counted")
	}
}
