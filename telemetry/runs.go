package telemetry

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
)

// The gen_ai conventions' attribute keys for agents and LLM requests.
const (
	keyAgentName    = attribute.Key("gen_ai.agent.name")
	keyProvider     = attribute.Key("gen_ai.provider.name")
	keyRequestModel = attribute.Key("gen_ai.request.model")
	keyTokenType    = attribute.Key("gen_ai.token.type")
	keyInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	keyTurn         = attribute.Key("switchboard.agent.turn")
	keyItem         = attribute.Key("switchboard.workflow.item")
	keyAttempt      = attribute.Key("switchboard.workflow.attempt")
)

// The run kinds and outcomes RecordRun and Run.End take.
const (
	KindAgent    = "agent"
	KindWorkflow = "workflow"

	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// RecordRun counts an agent or workflow run that ended (kind "agent" or
// "workflow"), by name and outcome ("completed", "failed", "cancelled"),
// with its duration. name must come from the loaded definitions (an agent
// file's, a workflow's id), never from a request.
func (t *Telemetry) RecordRun(ctx context.Context, kind, name, outcome string, d time.Duration) {
	set := metric.WithAttributeSet(attribute.NewSet(keyKind.String(kind), keyName.String(name), keyOutcome.String(outcome)))
	t.in.runs.Add(ctx, 1, set)
	t.in.runDuration.Record(ctx, d.Seconds(), set)
}

// RecordTokens records an LLM request's token usage in the gen_ai
// conventions' gen_ai.client.token.usage (input and output separately),
// and its duration in gen_ai.client.operation.duration. provider and
// model come from the configuration ([providers.NAME]), never from a
// response.
func (t *Telemetry) RecordTokens(ctx context.Context, provider, model string, input, output int64, d time.Duration) {
	t.recordLLM(ctx, provider, model, input, output, d, "")
}

func (t *Telemetry) recordLLM(ctx context.Context, provider, model string, input, output int64, d time.Duration, errType string) {
	base := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", string(genaiconv.OperationNameChat)),
		keyProvider.String(provider),
		keyRequestModel.String(model),
	}
	if errType == "" {
		for _, c := range []struct {
			kind genaiconv.TokenTypeAttr
			n    int64
		}{{genaiconv.TokenTypeInput, input}, {genaiconv.TokenTypeOutput, output}} {
			t.in.tokens.Inst().Record(ctx, c.n, metric.WithAttributes(append(base[:3:3], keyTokenType.String(string(c.kind)))...))
		}
	} else {
		base = append(base, keyErrorType.String(errType))
	}
	t.in.llmOp.Inst().Record(ctx, d.Seconds(), metric.WithAttributes(base...))
}

// Run is an agent's or a workflow's run being recorded: its span (when
// tracing), the tokens its LLM requests used, and, at End, its outcome
// and duration. Make it with [Telemetry.StartRun].
type Run struct {
	t          *Telemetry
	kind, name string
	start      time.Time
	span       trace.Span // nil when not tracing
	input      atomic.Int64
	output     atomic.Int64
	end        sync.Once
}

type runKey struct{}

// StartRun starts recording a run of kind (KindAgent, KindWorkflow) named
// name (an agent's id, a workflow's: from the definitions, never a
// request) at at (zero: now). The context it returns carries the run: an
// agent turn's span, an LLM request's span and tokens started under it
// are the run's. id is the run's id, recorded in its span only.
func (t *Telemetry) StartRun(ctx context.Context, kind, name, id string, at time.Time) (context.Context, *Run) {
	if at.IsZero() {
		at = time.Now()
	}
	r := &Run{t: t, kind: kind, name: name, start: at}
	if t.tp != nil {
		attrs := []attribute.KeyValue{keyKind.String(kind), keyName.String(name), keyRunID.String(id)}
		spanName := "workflow " + name
		if kind == KindAgent {
			attrs = append(attrs, keyOperation.String(string(genaiconv.OperationNameInvokeAgent)), keyAgentName.String(name))
			spanName = string(genaiconv.OperationNameInvokeAgent) + " " + name
		}
		ctx, r.span = t.tracer.Start(ctx, spanName, trace.WithTimestamp(at), trace.WithAttributes(attrs...),
			trace.WithSpanKind(trace.SpanKindInternal))
	}
	return context.WithValue(ctx, runKey{}, r), r
}

// runOf is the run ctx carries, or nil.
func runOf(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// Tokens adds tokens to the run's (its LLM requests', under StartRun's
// context, add theirs themselves).
func (r *Run) Tokens(input, output int64) {
	r.input.Add(input)
	r.output.Add(output)
}

// End records the run's outcome (OutcomeCompleted, OutcomeFailed,
// OutcomeCancelled) at at (zero: now), with errType (a failure's code,
// never its message) for its span. d, when not zero, is the run's
// duration as its owner measured it (a run recovered in this process
// started before StartRun). Only the first call counts.
func (r *Run) End(outcome, errType string, at time.Time, d time.Duration) {
	r.end.Do(func() {
		if at.IsZero() {
			at = time.Now()
		}
		if d == 0 {
			d = at.Sub(r.start)
		}
		t, ctx := r.t, context.Background()
		t.RecordRun(ctx, r.kind, r.name, outcome, d)
		in, out := r.input.Load(), r.output.Load()
		if in > 0 || out > 0 {
			for _, c := range []struct {
				kind genaiconv.TokenTypeAttr
				n    int64
			}{{genaiconv.TokenTypeInput, in}, {genaiconv.TokenTypeOutput, out}} {
				t.in.runTokens.Add(ctx, c.n, metric.WithAttributes(keyKind.String(r.kind), keyName.String(r.name), keyTokenType.String(string(c.kind))))
			}
		}
		t.usageRun(r.kind, r.name, outcome, in, out, at)
		if r.span != nil {
			r.span.SetAttributes(keyOutcome.String(outcome), keyInputTokens.Int64(in), keyOutputTokens.Int64(out))
			if errType != "" {
				r.span.SetAttributes(keyErrorType.String(errType))
			}
			if outcome != OutcomeCompleted {
				r.span.SetStatus(codes.Error, outcome)
			}
			r.span.End(trace.WithTimestamp(at))
		}
	})
}

// StartTurn starts an agent turn's span (a model call and the tool calls
// it asks for), step counting from 1, under ctx's run; end ends it. When
// not tracing, it returns ctx and a no-op.
func (t *Telemetry) StartTurn(ctx context.Context, step int) (context.Context, func()) {
	if t.tp == nil {
		return ctx, func() {}
	}
	attrs := []attribute.KeyValue{keyTurn.Int(step)}
	if r := runOf(ctx); r != nil {
		attrs = append(attrs, keyAgentName.String(r.name))
	}
	ctx, span := t.tracer.Start(ctx, "turn "+strconv.Itoa(step), trace.WithAttributes(attrs...))
	return ctx, func() { span.End() }
}

// StartLLMRequest starts an LLM request to provider's model (both from
// the configuration): a client span "chat MODEL" under ctx's turn or run,
// when tracing. end records its tokens (gen_ai.client.token.usage, and
// the run's in ctx) and duration (gen_ai.client.operation.duration), or
// errType (the failure's kind, never its message) when it failed.
func (t *Telemetry) StartLLMRequest(ctx context.Context, provider, model string) (context.Context, func(input, output int64, errType string)) {
	start := time.Now()
	var span trace.Span
	if t.tp != nil {
		ctx, span = t.tracer.Start(ctx, string(genaiconv.OperationNameChat)+" "+model, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(keyOperation.String(string(genaiconv.OperationNameChat)), keyProvider.String(provider), keyRequestModel.String(model)))
	}
	run := runOf(ctx)
	return ctx, func(input, output int64, errType string) {
		t.recordLLM(context.Background(), provider, model, input, output, time.Since(start), errType)
		if run != nil && errType == "" {
			run.Tokens(input, output)
		}
		if span != nil {
			span.SetAttributes(keyInputTokens.Int64(input), keyOutputTokens.Int64(output))
			if errType != "" {
				span.SetAttributes(keyErrorType.String(errType))
				span.SetStatus(codes.Error, errType)
			}
			span.End()
		}
	}
}
