package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
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
	base := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", string(genaiconv.OperationNameChat)),
		attribute.String("gen_ai.provider.name", provider),
		attribute.String("gen_ai.request.model", model),
	}
	for _, c := range []struct {
		kind genaiconv.TokenTypeAttr
		n    int64
	}{{genaiconv.TokenTypeInput, input}, {genaiconv.TokenTypeOutput, output}} {
		t.in.tokens.Inst().Record(ctx, c.n, metric.WithAttributes(append(base[:3:3], attribute.String("gen_ai.token.type", string(c.kind)))...))
	}
	t.in.llmOp.Inst().Record(ctx, d.Seconds(), metric.WithAttributes(base...))
}
