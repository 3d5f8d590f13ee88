package telemetry

import (
	"context"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// WorkflowEvent is what telemetry reads of a workflow run's event
// (workflow.Event's, which this package may not import: the daemon
// converts them, from workflow.EngineOptions.OnEvent).
type WorkflowEvent struct {
	Type     string // workflow.EventType: run:started, step:started, step:completed, step:failed, run:completed, run:failed, run:cancelled
	RunID    string
	Workflow string // the run's workflow id, on every event
	Step     string
	Item     int // a for_each item's index; -1 for none
	Attempt  int
	Time     time.Time
	// Duration is a terminal event's (the run's, as the engine measured it).
	Duration time.Duration
	// Error is a failed step's or run's code (workflow.ErrorCode), never
	// its message.
	Error   string
	Skipped bool
	// InputTokens and OutputTokens are an agent step's (step:completed).
	InputTokens, OutputTokens int64
}

// maxOpenRuns bounds the workflow runs whose spans are held open: runs a
// crash left unfinished never end here, and must not grow the map
// forever. A run beyond it still counts in the metrics (its terminal event
// carries its duration); it has no span.
const maxOpenRuns = 4096

// openRun is a workflow run seen started in this process.
type openRun struct {
	run   *Run
	ctx   context.Context // the run span's
	steps map[string]trace.Span
}

// WorkflowEvent records a workflow run's event: runs by outcome and
// duration (switchboard.runs, switchboard.run.duration), tokens of its
// agent steps (switchboard.run.tokens), and, when tracing, a span per run
// ("workflow ID") with a child per step ("step ID"; a for_each item's and
// a retry's each their own). Events come in order per run; a run
// recovered from another process starts its span at its first event seen
// here.
func (t *Telemetry) WorkflowEvent(ev WorkflowEvent) {
	t.wfMu.Lock()
	defer t.wfMu.Unlock()
	if t.wfRuns == nil {
		t.wfRuns = map[string]*openRun{}
	}
	or := t.wfRuns[ev.RunID]
	defer delete(t.wfCallers, ev.RunID) // the run's first event here takes it
	if or == nil {
		if len(t.wfRuns) >= maxOpenRuns && !terminal(ev.Type) {
			return
		}
		// A child workflow's run is under its parent's step; a run
		// started by a traced call, under that call.
		parent := t.parentStep(ev.RunID)
		if sc, ok := t.wfCallers[ev.RunID]; ok && !trace.SpanContextFromContext(parent).IsValid() {
			parent = trace.ContextWithSpanContext(parent, sc)
		}
		ctx, r := t.StartRun(parent, KindWorkflow, ev.Workflow, ev.RunID, ev.Time)
		or = &openRun{run: r, ctx: ctx, steps: map[string]trace.Span{}}
		t.wfRuns[ev.RunID] = or
	}
	key := stepKey(ev.Step, ev.Item)
	switch ev.Type {
	case "step:started":
		if t.tp == nil {
			return
		}
		if old := or.steps[key]; old != nil {
			old.End(trace.WithTimestamp(ev.Time)) // a retry's attempt whose end was not seen
		}
		attrs := []attribute.KeyValue{keyStep.String(ev.Step), keyAttempt.Int(ev.Attempt)}
		if ev.Item >= 0 {
			attrs = append(attrs, keyItem.Int(ev.Item))
		}
		_, span := t.tracer.Start(or.ctx, "step "+ev.Step, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
		or.steps[key] = span
	case "step:completed", "step:failed":
		or.run.Tokens(ev.InputTokens, ev.OutputTokens)
		span := or.steps[key]
		if span == nil {
			return // skipped, or started in another process
		}
		delete(or.steps, key)
		if ev.Error != "" {
			span.SetAttributes(keyErrorType.String(ev.Error))
			span.SetStatus(codes.Error, ev.Error)
		}
		span.End(trace.WithTimestamp(ev.Time))
	case "run:completed", "run:failed", "run:cancelled":
		for k, span := range or.steps {
			span.End(trace.WithTimestamp(ev.Time))
			delete(or.steps, k)
		}
		delete(t.wfRuns, ev.RunID)
		outcome := OutcomeCompleted
		switch ev.Type {
		case "run:failed":
			outcome = OutcomeFailed
		case "run:cancelled":
			outcome = OutcomeCancelled
		}
		or.run.End(outcome, ev.Error, ev.Time, ev.Duration)
	}
}

func terminal(typ string) bool {
	return typ == "run:completed" || typ == "run:failed" || typ == "run:cancelled"
}

// stepKey is a step's key within its run (a for_each item's step/N), as
// the engine names it: also the last part of a child workflow's run id.
func stepKey(step string, item int) string {
	if item >= 0 {
		return step + "/" + strconv.Itoa(item)
	}
	return step
}

// parentStep is the context of the step span a child workflow's run
// (id PARENT/STEP, or PARENT/STEP/ITEM) runs under, when that step is
// open here; otherwise a context with no span. Called with wfMu held.
func (t *Telemetry) parentStep(runID string) context.Context {
	for i := strings.LastIndexByte(runID, '/'); i > 0; i = strings.LastIndexByte(runID[:i], '/') {
		if or := t.wfRuns[runID[:i]]; or != nil {
			if span := or.steps[runID[i+1:]]; span != nil {
				return trace.ContextWithSpan(context.Background(), span)
			}
		}
	}
	return context.Background()
}

// WorkflowStepContext returns ctx with the span of run runID's step
// (item: a for_each item's index, -1 for none) when that step is open
// here, so that what the step calls (a tool, an agent) is a child of it;
// otherwise ctx (tracing off, a step begun in another process). It is
// workflow.EngineOptions.StepContext, through the daemon.
func (t *Telemetry) WorkflowStepContext(ctx context.Context, runID, step string, item int) context.Context {
	if t.tp == nil {
		return ctx
	}
	t.wfMu.Lock()
	defer t.wfMu.Unlock()
	if or := t.wfRuns[runID]; or != nil {
		if span := or.steps[stepKey(step, item)]; span != nil {
			return trace.ContextWithSpan(ctx, span)
		}
	}
	return ctx
}

// WorkflowStarting notes the trace context of ctx, the call starting
// workflow run runID, so that the run's span is a child of it (as
// workflow.EngineOptions.OnStart, through the daemon). At most
// maxOpenRuns are held: a run whose start failed leaves its entry until
// then.
func (t *Telemetry) WorkflowStarting(ctx context.Context, runID string) {
	sc := trace.SpanContextFromContext(ctx)
	if t.tp == nil || !sc.IsValid() {
		return
	}
	t.wfMu.Lock()
	defer t.wfMu.Unlock()
	if t.wfCallers == nil {
		t.wfCallers = map[string]trace.SpanContext{}
	}
	if len(t.wfCallers) < maxOpenRuns {
		t.wfCallers[runID] = sc
	}
}
