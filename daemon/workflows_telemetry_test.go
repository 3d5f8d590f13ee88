package daemon_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/workflow"
)

// agentFunc runs agent steps: the edge the CLI provides.
type agentFunc func(ctx context.Context, name, prompt string) (*workflow.AgentResult, error)

func (f agentFunc) RunAgent(ctx context.Context, req *workflow.AgentRequest) (*workflow.AgentResult, error) {
	return f(ctx, req.Agent, req.Prompt)
}

// TestWorkflowTelemetry: the engine OpenWorkflows opens with Telemetry
// records its runs: switchboard.runs by workflow and outcome, the agent
// steps' tokens in switchboard.run.tokens, and a span per run with its
// steps under it.
func TestWorkflowTelemetry(t *testing.T) {
	tel, spans := traced(t)
	args, _ := workflow.NewValue(map[string]any{"text": "hi"})
	wf := &workflow.Workflow{ID: "triage", Digest: "d1", Steps: []*workflow.Step{
		{ID: "say", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: args},
		{ID: "think", Kind: workflow.StepAgent, Agent: "helper", Prompt: mustTemplate(t, "about {{.steps.say.result}}"), Needs: []string{"say"}},
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
	launch(t, ctx, w, cfg, nil)
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

// TestWorkflowStepSpans: what a workflow step does is under the step's
// span: its tool call's client span (a real server, through the host's
// telemetry middleware), the context its agent runs in, and a child
// workflow's run span; all in the run's trace.
func TestWorkflowStepSpans(t *testing.T) {
	tel, spans := traced(t)
	args, _ := workflow.NewValue(map[string]any{"text": "hi"})
	inner := &workflow.Workflow{ID: "inner", Digest: "d2", Steps: []*workflow.Step{
		{ID: "ping", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: args},
	}}
	outer := &workflow.Workflow{ID: "outer", Digest: "d1", Steps: []*workflow.Step{
		{ID: "say", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: args},
		{ID: "think", Kind: workflow.StepAgent, Agent: "helper", Prompt: mustTemplate(t, "go")},
		{ID: "sub", Kind: workflow.StepWorkflow, Workflow: "inner"},
	}}
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	cfg.State.Database = filepath.Join(t.TempDir(), "state.db")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	agentSpan := make(chan trace.SpanContext, 1)
	w, err := daemon.OpenWorkflows(ctx, &daemon.WorkflowOptions{Config: cfg, Workflows: []*workflow.Workflow{outer, inner}, Kind: "test",
		Telemetry: tel, Agents: agentFunc(func(ctx context.Context, name, prompt string) (*workflow.AgentResult, error) {
			agentSpan <- trace.SpanContextFromContext(ctx)
			return &workflow.AgentResult{Text: "ok"}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	launch(t, ctx, w, cfg, &host.Options{ClientMiddleware: tel.ClientMiddleware})
	// The run is started by a traced call: its span is under the call's.
	cctx, caller := tel.Tracer().Start(ctx, "caller")
	id, err := w.Engine.Start(cctx, "outer", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	caller.End()
	if st, err := w.Engine.Wait(ctx, id); err != nil || st.State != workflow.RunCompleted {
		t.Fatalf("run: %v, %v", st, err)
	}

	stubs := spans.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range stubs {
		byName[s.Name] = append(byName[s.Name], s)
	}
	one := func(name string) tracetest.SpanStub {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans %q, want 1; spans: %v", len(byName[name]), name, spanNames(stubs))
		}
		return byName[name][0]
	}
	run, say, think, sub := one("workflow outer"), one("step say"), one("step think"), one("step sub")
	if run.Parent.SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("the run's span is under %s, not the span of the call that started it (%s)", run.Parent.SpanID(), caller.SpanContext().SpanID())
	}
	innerRun, ping := one("workflow inner"), one("step ping")
	calls := byName["tools/call echo"]
	if len(calls) != 2 {
		t.Fatalf("%d tools/call spans, want 2; spans: %v", len(calls), spanNames(stubs))
	}
	parents := map[string]bool{}
	for _, c := range calls {
		parents[c.Parent.SpanID().String()] = true
	}
	for _, c := range []struct {
		what   string
		parent trace.SpanContext
		want   tracetest.SpanStub
	}{
		{"the step say's tool call", parentOf(calls, say), say},
		{"the step ping's tool call", parentOf(calls, ping), ping},
		{"the agent of step think", <-agentSpan, think},
		{"the child workflow's run", innerRun.Parent, sub},
		{"step ping", ping.Parent, innerRun},
	} {
		if c.parent.SpanID() != c.want.SpanContext.SpanID() {
			t.Errorf("%s is under span %s, want %q's (%s); tool calls under %v", c.what, c.parent.SpanID(), c.want.Name, c.want.SpanContext.SpanID(), parents)
		}
		if c.parent.TraceID() != run.SpanContext.TraceID() {
			t.Errorf("%s is in trace %s, not the run's %s", c.what, c.parent.TraceID(), run.SpanContext.TraceID())
		}
	}
}

// parentOf returns the parent of the span in calls whose parent is step,
// or an empty span context.
func parentOf(calls tracetest.SpanStubs, step tracetest.SpanStub) trace.SpanContext {
	for _, c := range calls {
		if c.Parent.SpanID() == step.SpanContext.SpanID() {
			return c.Parent
		}
	}
	return trace.SpanContext{}
}

func mustTemplate(t *testing.T, s string) *workflow.Template {
	t.Helper()
	x, err := workflow.ParseTemplate(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestPublishedWorkflowSpan: a published workflow called through the host
// (as the gateway calls it) runs under the call's client span: the trace
// context the host writes into the call's _meta reaches the engine's
// in-process server and the run's start.
func TestPublishedWorkflowSpan(t *testing.T) {
	tel, spans := traced(t)
	args, _ := workflow.NewValue(map[string]any{"text": "hi"})
	wf := &workflow.Workflow{ID: "hello", Digest: "d1", Steps: []*workflow.Step{
		{ID: "say", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: args},
	}}
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	cfg.State.Database = filepath.Join(t.TempDir(), "state.db")
	cfg.Gateway.Workflows = []string{"hello"}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	w, err := daemon.OpenWorkflows(ctx, &daemon.WorkflowOptions{Config: cfg, Workflows: []*workflow.Workflow{wf}, Kind: "test", Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ip, ok, err := w.InProcess()
	if err != nil || !ok {
		t.Fatalf("InProcess: %v, %v", ok, err)
	}
	h := launch(t, ctx, w, cfg, &host.Options{ClientMiddleware: tel.ClientMiddleware, InProcess: []host.InProcessServer{ip}})
	name := cfg.Gateway.WorkflowToolName("hello")
	cctx, caller := tel.Tracer().Start(ctx, "caller")
	res, err := h.CallTool(cctx, name, nil, nil)
	caller.End()
	if err != nil || res.IsError {
		t.Fatalf("calling %s: %v, %+v", name, err, res)
	}
	// The run's span ends on the run's goroutine, as its last event is
	// stored: poll for it, bounded.
	var run, call tracetest.SpanStub
	wait.For(t, "the run's span", func() ([]string, bool) {
		for _, s := range spans.GetSpans() {
			switch {
			case s.Name == "workflow hello":
				run = s
			case s.Parent.SpanID() == caller.SpanContext().SpanID():
				call = s
			}
		}
		return spanNames(spans.GetSpans()), run.Name != ""
	})
	if call.Name == "" {
		t.Fatalf("no span under the caller's; spans: %v", spanNames(spans.GetSpans()))
	}
	if run.Parent.SpanID() != call.SpanContext.SpanID() || run.SpanContext.TraceID() != caller.SpanContext().TraceID() {
		t.Errorf("the run's span is under %s in trace %s; want under the call's %q (%s) in the caller's trace %s",
			run.Parent.SpanID(), run.SpanContext.TraceID(), call.Name, call.SpanContext.SpanID(), caller.SpanContext().TraceID())
	}
}

// launch starts a host over cfg's servers with opts and launches w on it.
// The host closes when t ends, after w (closed by the test), as
// daemon.Workflows asks.
func launch(t *testing.T, ctx context.Context, w *daemon.Workflows, cfg *config.Config, opts *host.Options) *host.Host {
	t.Helper()
	h, err := host.New(cfg.Servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Launch(ctx, h, false); err != nil {
		t.Fatal(err)
	}
	return h
}
