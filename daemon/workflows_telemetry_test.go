package daemon_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/telemetry"
	"github.com/switchboardmcp/switchboard/workflow"
)

// agentFunc runs agent steps: the edge the CLI provides.
type agentFunc func(ctx context.Context, name, prompt string) (*workflow.AgentResult, error)

func (f agentFunc) RunAgent(ctx context.Context, name, prompt string) (*workflow.AgentResult, error) {
	return f(ctx, name, prompt)
}

// TestWorkflowTelemetry: the engine OpenWorkflows opens with Telemetry
// records its runs: switchboard.runs by workflow and outcome, the agent
// steps' tokens in switchboard.run.tokens, and a span per run with its
// steps under it.
func TestWorkflowTelemetry(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(&telemetry.Options{SpanExporter: spans})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	tpl := func(s string) *workflow.Template {
		x, err := workflow.ParseTemplate(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	args, _ := workflow.NewValue(map[string]any{"text": "hi"})
	wf := &workflow.Workflow{ID: "triage", Digest: "d1", Steps: []*workflow.Step{
		{ID: "say", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: args},
		{ID: "think", Kind: workflow.StepAgent, Agent: "helper", Prompt: tpl("about {{.steps.say.result}}"), Needs: []string{"say"}},
	}}
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	cfg.State.Database = filepath.Join(t.TempDir(), "state.db")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	w, err := daemon.OpenWorkflows(ctx, &daemon.WorkflowOptions{Config: cfg, Workflows: []*workflow.Workflow{wf}, Kind: "test",
		Telemetry: tel, Agents: agentFunc(func(ctx context.Context, name, prompt string) (*workflow.AgentResult, error) {
			return &workflow.AgentResult{Text: "ok", Usage: map[string]any{"input_tokens": 40, "output_tokens": 2}}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	h, err := host.New(cfg.Servers, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Launch(ctx, h, false); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		id, err := w.Engine.Start(ctx, "triage", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := w.Engine.Wait(ctx, id); err != nil || st.State != workflow.RunCompleted {
			t.Fatalf("run: %v, %v", st, err)
		}
	}
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fam    string
		labels map[string]string
		want   float64
	}{
		{"switchboard_runs_total", map[string]string{"switchboard_run_kind": "workflow", "switchboard_run_name": "triage", "switchboard_run_outcome": "completed"}, 2},
		{"switchboard_run_duration_seconds", map[string]string{"switchboard_run_name": "triage"}, 2},
		{"switchboard_run_tokens_total", map[string]string{"switchboard_run_name": "triage", "gen_ai_token_type": "input"}, 80},
		{"switchboard_run_tokens_total", map[string]string{"switchboard_run_name": "triage", "gen_ai_token_type": "output"}, 4},
	} {
		if v, ok := value(fams[c.fam], c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.fam, c.labels, v, ok, c.want)
		}
	}
	runs, steps := map[string]bool{}, 0
	stubs := spans.GetSpans()
	for _, s := range stubs {
		if s.Name == "workflow triage" {
			runs[s.SpanContext.SpanID().String()] = true
		}
	}
	for _, s := range stubs {
		if s.Name == "step say" || s.Name == "step think" {
			steps++
			if !runs[s.Parent.SpanID().String()] {
				t.Errorf("span %s is not under a run's span", s.Name)
			}
		}
	}
	if len(runs) != 2 || steps != 4 {
		t.Errorf("spans %v: want 2 runs of 2 steps", spanNames(stubs))
	}
}
