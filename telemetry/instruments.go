package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
)

// durationBuckets are the boundaries the MCP conventions recommend for
// their duration histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// sessionBuckets cover sessions from a second to a day.
var sessionBuckets = []float64{1, 10, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400}

// tokenBuckets are the gen_ai conventions' for token counts.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

// views: none beyond the instruments' own advice.
var views []sdkmetric.View

// instruments are every instrument the package records; docs/observability.md
// lists them with their attributes.
type instruments struct {
	clientOp      mcpconv.ClientOperationDuration
	serverOp      mcpconv.ServerOperationDuration
	clientSession mcpconv.ClientSessionDuration
	serverSession mcpconv.ServerSessionDuration
	tokens        genaiconv.ClientTokenUsage
	llmOp         genaiconv.ClientOperationDuration

	restarts     metric.Int64Counter
	breakerOpens metric.Int64Counter
	guardrails   metric.Int64Counter
	refused      metric.Int64Counter
	runs         metric.Int64Counter
	runDuration  metric.Float64Histogram
	runTokens    metric.Int64Counter
}

func (in *instruments) init(m metric.Meter, sources func() []source) error {
	var err error
	hist := func(b []float64) metric.Float64HistogramOption { return metric.WithExplicitBucketBoundaries(b...) }
	if in.clientOp, err = mcpconv.NewClientOperationDuration(m, hist(durationBuckets)); err != nil {
		return err
	}
	if in.serverOp, err = mcpconv.NewServerOperationDuration(m, hist(durationBuckets)); err != nil {
		return err
	}
	if in.clientSession, err = mcpconv.NewClientSessionDuration(m, hist(sessionBuckets)); err != nil {
		return err
	}
	if in.serverSession, err = mcpconv.NewServerSessionDuration(m, hist(sessionBuckets)); err != nil {
		return err
	}
	if in.tokens, err = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(tokenBuckets...)); err != nil {
		return err
	}
	if in.llmOp, err = genaiconv.NewClientOperationDuration(m, hist(durationBuckets)); err != nil {
		return err
	}
	if in.restarts, err = m.Int64Counter("switchboard.server.restarts",
		metric.WithDescription("Reconnections of a server after its first start."), metric.WithUnit("{restart}")); err != nil {
		return err
	}
	if in.guardrails, err = m.Int64Counter("switchboard.guardrail.actions",
		metric.WithDescription("Actions guardrail rules took on tool calls (mask, reject, flag; failed: a hook that failed open), by filter, direction and server."), metric.WithUnit("{action}")); err != nil {
		return err
	}
	if in.breakerOpens, err = m.Int64Counter("switchboard.server.circuit_opens",
		metric.WithDescription("Times a server's circuit breaker opened after failed calls in a row."), metric.WithUnit("{open}")); err != nil {
		return err
	}
	if in.refused, err = m.Int64Counter("switchboard.calls.refused",
		metric.WithDescription("Tool calls the gateway refused before any server saw them, by reason."), metric.WithUnit("{call}")); err != nil {
		return err
	}
	if in.runs, err = m.Int64Counter("switchboard.runs",
		metric.WithDescription("Agent and workflow runs ended, by outcome."), metric.WithUnit("{run}")); err != nil {
		return err
	}
	if in.runDuration, err = m.Float64Histogram("switchboard.run.duration",
		metric.WithDescription("How long agent and workflow runs took, by outcome."), metric.WithUnit("s"), hist(sessionBuckets)); err != nil {
		return err
	}
	if in.runTokens, err = m.Int64Counter("switchboard.run.tokens",
		metric.WithDescription("LLM tokens agent and workflow runs used, by run name and token type."), metric.WithUnit("{token}")); err != nil {
		return err
	}
	servers, err := m.Int64ObservableGauge("switchboard.servers",
		metric.WithDescription("Configured servers, by state."), metric.WithUnit("{server}"))
	if err != nil {
		return err
	}
	upstream, err := m.Int64ObservableUpDownCounter("switchboard.upstream.sessions",
		metric.WithDescription("Upstream MCP sessions open (servers connected)."), metric.WithUnit("{session}"))
	if err != nil {
		return err
	}
	downstream, err := m.Int64ObservableUpDownCounter("switchboard.downstream.sessions",
		metric.WithDescription("Downstream MCP sessions open on the gateway."), metric.WithUnit("{session}"))
	if err != nil {
		return err
	}
	g := &gauges{servers: servers, upstream: upstream, downstream: downstream}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		for _, f := range sources() {
			f(ctx, o, g)
		}
		return nil
	}, servers, upstream, downstream)
	return err
}

// gauges are the observable instruments a source reports to.
type gauges struct {
	servers, upstream, downstream metric.Int64Observable
}

// A source reports observed values at each collection.
type source func(ctx context.Context, o metric.Observer, g *gauges)
