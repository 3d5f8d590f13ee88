// Package telemetry is Switchboard's metrics and traces, in OpenTelemetry's
// names: the MCP semantic conventions on both sides of the gateway (the
// host as a client of its servers, the gateway as a server to its
// clients), the gen_ai conventions for LLM token usage, and Switchboard's
// own instruments (servers by state, restarts, refused calls, sessions
// open, runs by outcome).
//
// It attaches from the outside, as the architecture asks: an
// [mcp.Middleware] on each upstream client ([Telemetry.ClientMiddleware],
// through host.Options.ClientMiddleware), an [mcp.Middleware] on the
// gateway's server ([Telemetry.ServerMiddleware], through
// gateway.Options.Middleware), and a watcher of the host's events
// ([Telemetry.Watch]). No function signature carries a span: the trace
// context travels in each request's context, and in _meta
// (traceparent, tracestate) between processes.
//
// Metrics are always collected and served in Prometheus's text format by
// [Telemetry.Handler] (the daemon mounts it at /metrics, behind the
// gateway's Host, Origin and token checks), and pushed over OTLP/HTTP
// when Options.OTLPEndpoint is set. Traces are recorded only when
// there is somewhere to send them: Options.OTLPEndpoint, or
// Options.SpanExporter in tests. Label values come only from what the
// configuration and the servers' catalogs name (server ids, published tool
// names, method names of the protocol), never from raw request data, and
// what comes from outside is bounded: at most Options.MaxToolLabels tool
// names per server (the rest are "_other"), protocol versions and
// JSON-RPC error codes only those of the protocol (the rest "_OTHER").
//
//	t, err := telemetry.New(&telemetry.Options{OTLPEndpoint: cfg.Telemetry.OTLPEndpoint})
//	hostOpts.ClientMiddleware = t.ClientMiddleware
//	gwOpts.EndpointMiddleware = func(e gateway.Endpoint) []mcp.Middleware { return []mcp.Middleware{t.ServerMiddleware(e.Name, serverOf)} }
//	go t.Watch(ctx, h)
//	mux.Handle("/metrics", t.Handler())
//	defer t.Close(ctx)
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// Options configures [New]. Nil means defaults: metrics only, no traces.
type Options struct {
	// Logger receives export failures; nil discards them.
	Logger *slog.Logger
	// Redactor redacts payloads recorded in spans (RecordPayloads); nil
	// means a new, empty one.
	Redactor *secret.Redactor

	// OTLPEndpoint, when set, is an OTLP/HTTP collector's base URL
	// (http://collector:4318): traces are recorded and sent to
	// /v1/traces, and metrics pushed to /v1/metrics every OTLPInterval,
	// as protobuf (besides /metrics, served either way). The URL floor
	// applies (netguard.CheckURL), with AllowLocalEndpoint as a server's
	// allow_local_endpoint.
	OTLPEndpoint       string
	AllowLocalEndpoint bool
	// OTLPInterval is how often metrics are pushed to OTLPEndpoint; 0
	// means DefaultOTLPInterval.
	OTLPInterval time.Duration
	// Network is the operator's policy for the connection to the collector.
	Network *netguard.Network
	// RecordPayloads records a tool call's arguments and result in its
	// spans, redacted and bounded (PayloadBytes). Off, no argument value
	// or result ever reaches a span.
	RecordPayloads bool

	// SpanExporter, when set, receives the spans (synchronously, for
	// tests: sdk/trace/tracetest's InMemoryExporter), in addition to
	// OTLPEndpoint's.
	SpanExporter sdktrace.SpanExporter

	// Version is the service.version of the resource.
	Version string

	// MaxToolLabels bounds the tool names of one server that become
	// values of gen_ai.tool.name, on each side of the gateway: the others
	// are counted under OtherLabel ("_other"), and a warning names the
	// server once. 0 means DefaultMaxToolLabels ([telemetry]
	// max_tool_labels).
	MaxToolLabels int

	// Usage, when set, is the store the usage aggregates are written to
	// (tool calls per server and tool, runs and tokens per agent and
	// workflow: `switchboard stats`), every UsageFlush and at Close.
	// Telemetry does not close it.
	Usage *store.Store
}

// PayloadBytes bounds a payload recorded in a span (Options.RecordPayloads).
const PayloadBytes = 4 << 10

// Telemetry holds the meter and tracer providers and the instruments. Its
// methods are safe for concurrent use. Make it with [New]; [Telemetry.Close]
// flushes and stops the exporters.
type Telemetry struct {
	opts   Options
	log    *slog.Logger
	red    *secret.Redactor
	reg    *prometheus.Registry
	mp     *sdkmetric.MeterProvider
	tp     *sdktrace.TracerProvider // nil: traces off
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	in     instruments

	downstream atomic.Int64 // downstream sessions open

	// The downstream sessions open, and the gateway's to follow their
	// ends (sessions.go); sessMu.
	sessMu    sync.Mutex
	sessions  func() iter.Seq[*mcp.ServerSession]
	open      map[*mcp.ServerSession]openSession
	sweeps    uint64
	lastSweep time.Time

	// clientTools and serverTools bound the tool names of each server
	// that become label values (Options.MaxToolLabels).
	clientTools, serverTools *toolLabels

	ctx    context.Context // ends at Close: the watchers' lifetime
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	observed []source // the gauges' sources
	closed   bool

	usage *usage // nil: no Options.Usage

	wfMu   sync.Mutex
	wfRuns map[string]*openRun // workflow runs seen started, by id (WorkflowEvent)
	// wfCallers are the trace contexts of the calls that started runs not
	// yet seen started (WorkflowStarting), by run id.
	wfCallers map[string]trace.SpanContext
}

// New makes the providers. With Options.OTLPEndpoint it checks the URL
// (the error names [telemetry] otlp_endpoint, never the URL's userinfo).
func New(opts *Options) (*Telemetry, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	t := &Telemetry{opts: o, log: o.Logger, red: o.Redactor, prop: propagation.TraceContext{}}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if t.red == nil {
		t.red = secret.NewRedactor()
	}
	t.clientTools = newToolLabels(o.MaxToolLabels, "client", t.log)
	t.serverTools = newToolLabels(o.MaxToolLabels, "gateway", t.log)
	res := resource.NewSchemaless(semconv.ServiceName("switchboard"), semconv.ServiceVersion(o.Version))

	var client *http.Client
	if o.OTLPEndpoint != "" {
		var err error
		if client, err = t.collectorClient(); err != nil {
			return nil, err
		}
	}

	t.reg = prometheus.NewRegistry()
	pe, err := otelprom.New(otelprom.WithRegisterer(t.reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
	}
	readers := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(pe), sdkmetric.WithView(views...)}
	if client != nil {
		// Our own exporter, not otlpmetrichttp: see metricExporter.
		interval := o.OTLPInterval
		if interval <= 0 {
			interval = DefaultOTLPInterval
		}
		me := &metricExporter{url: collectorURL(o.OTLPEndpoint, "/v1/metrics"), client: client}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me, sdkmetric.WithInterval(interval))))
	}
	t.mp = sdkmetric.NewMeterProvider(readers...)

	var tpo []sdktrace.TracerProviderOption
	if client != nil {
		te, err := otlptrace.New(context.Background(), &otlpClient{url: collectorURL(o.OTLPEndpoint, "/v1/traces"), client: client})
		if err != nil {
			return nil, fmt.Errorf("telemetry: [telemetry] otlp_endpoint: %w", err)
		}
		tpo = append(tpo, sdktrace.WithBatcher(te))
	}
	if o.SpanExporter != nil {
		tpo = append(tpo, sdktrace.WithSyncer(o.SpanExporter))
	}
	if len(tpo) > 0 {
		tpo = append(tpo, sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
		t.tp = sdktrace.NewTracerProvider(tpo...)
		t.tracer = t.tp.Tracer(scope)
	} else {
		t.tracer = noop.NewTracerProvider().Tracer(scope)
	}
	if err := t.in.init(t.mp.Meter(scope), t.sources); err != nil {
		t.Close(context.Background())
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if o.Usage != nil {
		t.startUsage(o.Usage)
	}
	return t, nil
}

// scope is the instrumentation scope's name.
const scope = "github.com/switchboardmcp/switchboard/telemetry"

// collectorClient checks the collector's URL against the floor and
// returns an HTTP client that dials it through the guarded dialer.
func (t *Telemetry) collectorClient() (*http.Client, error) {
	o := t.opts
	if err := o.Network.CheckURL(o.OTLPEndpoint, o.AllowLocalEndpoint); err != nil {
		return nil, fmt.Errorf("[telemetry] otlp_endpoint: %w", err)
	}
	d := &netguard.Dialer{}
	if o.AllowLocalEndpoint {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		local, err := netguard.LocalEndpoint(ctx, nil, o.OTLPEndpoint)
		if err != nil {
			return nil, fmt.Errorf("[telemetry] otlp_endpoint: %w", err)
		}
		d.AllowLocal = local
	}
	if o.Network != nil {
		d.AllowCIDRs, d.DenyCIDRs = o.Network.AllowCIDRs, o.Network.DenyCIDRs
	}
	rp := &netguard.RedirectPolicy{AllowLocal: o.AllowLocalEndpoint}
	// An export that hangs must not hold the exporter's goroutine forever.
	return &http.Client{Transport: o.Network.Transport(context.Background(), d), CheckRedirect: rp.CheckRedirect, Timeout: 30 * time.Second}, nil
}

// collectorURL is the collector's base URL with the signal's path, unless
// the URL names a path of its own.
func collectorURL(base, path string) string {
	u, err := url.Parse(base)
	if err != nil || strings.Trim(u.Path, "/") != "" {
		return base
	}
	u.Path = path
	return u.String()
}

// Handler serves the metrics in Prometheus's text format.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{t.log}})
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("metrics", "err", fmt.Sprint(v...)) }

// Tracing reports whether spans are recorded (an exporter is configured).
func (t *Telemetry) Tracing() bool { return t.tp != nil }

// Tracer is the tracer the package's spans come from: a no-op one when
// tracing is off.
func (t *Telemetry) Tracer() trace.Tracer { return t.tracer }

// MeterProvider is the provider the package's instruments come from.
func (t *Telemetry) MeterProvider() metric.MeterProvider { return t.mp }

// Close stops the watchers, flushes what is pending to the exporters
// and the usage to its store, within ctx, and stops them. It is
// idempotent.
func (t *Telemetry) Close(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	var errs []error
	if t.usage != nil {
		errs = append(errs, t.usage.flush(ctx))
	}
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	errs = append(errs, t.mp.Shutdown(ctx))
	return errors.Join(errs...)
}

// observe adds a source of observed values, read at each collection.
func (t *Telemetry) observe(f source) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observed = append(t.observed, f)
}

func (t *Telemetry) sources() []source {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.observed
}

// attr helpers: the attribute keys of the conventions, and Switchboard's.
var (
	keyServer = attribute.Key("switchboard.server") // a configured server's id
	// keyEndpoint names a named endpoint ([[endpoints]]) of the gateway:
	// bounded by the configuration. The default endpoint (/mcp) has none,
	// so its series are those of a gateway without named endpoints.
	keyEndpoint = attribute.Key("switchboard.endpoint")
	keyState    = attribute.Key("switchboard.server.state")
	keyReason   = attribute.Key("switchboard.refusal")
	keyKind     = attribute.Key("switchboard.run.kind") // agent, workflow
	keyName     = attribute.Key("switchboard.run.name")
	keyOutcome  = attribute.Key("switchboard.run.outcome")
	keyStep     = attribute.Key("switchboard.workflow.step")
	keyRunID    = attribute.Key("switchboard.run.id")
	keySessHash = attribute.Key("switchboard.session.hash")
	// The guardrail labels are bounded: five filters, four actions, two
	// directions (never the rule's name, which the user writes).
	keyGuardFilter    = attribute.Key("switchboard.guardrail.filter")
	keyGuardAction    = attribute.Key("switchboard.guardrail.action")
	keyGuardDirection = attribute.Key("switchboard.guardrail.direction")
)
