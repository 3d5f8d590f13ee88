package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboardmcp/switchboard/host"
)

// The attribute keys of the MCP and gen_ai conventions this file sets.
const (
	keyMethod     = attribute.Key("mcp.method.name")
	keyTool       = attribute.Key("gen_ai.tool.name")
	keyOperation  = attribute.Key("gen_ai.operation.name")
	keyProtocol   = attribute.Key("mcp.protocol.version")
	keySessionID  = attribute.Key("mcp.session.id")
	keyErrorType  = attribute.Key("error.type")
	keyRPCStatus  = attribute.Key("rpc.response.status_code")
	keyArguments  = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult = attribute.Key("gen_ai.tool.call.result")
)

// metaKeyError is gateway.MetaKeyError: the _meta key of a tool result the
// gateway made from the host's error (a *host.ErrorJSON). telemetry sits
// beside the gateway, not above it; daemon's test pins that they agree.
const metaKeyError = "switchboard/error"

// ClientMiddleware is the host's middleware for its connection to server
// (host.Options.ClientMiddleware): each request gets a client span (when
// tracing), its trace context written to _meta, and
// mcp.client.operation.duration. Notifications pass untouched.
func (t *Telemetry) ClientMiddleware(server string) mcp.Middleware {
	srv := keyServer.String(server)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			params := req.GetParams()
			tool := ""
			if p, ok := params.(*mcp.CallToolParams); ok && p != nil {
				tool = p.Name // the host calls only the tools it lists
			}
			var span trace.Span
			if t.tp != nil {
				ctx, span = t.tracer.Start(ctx, spanName(method, tool), trace.WithSpanKind(trace.SpanKindClient))
				if !isNil(params) {
					meta := maps.Clone(params.GetMeta())
					if meta == nil {
						meta = map[string]any{}
					}
					t.prop.Inject(ctx, metaCarrier(meta))
					params.SetMeta(meta)
				}
				if t.opts.RecordPayloads {
					if p, ok := params.(*mcp.CallToolParams); ok && p != nil {
						b, _ := json.Marshal(p.Arguments)
						span.SetAttributes(keyArguments.String(t.payload(b)))
					}
				}
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			elapsed := time.Since(start)
			d := elapsed.Seconds()

			version := ""
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
				if ir := cs.InitializeResult(); ir != nil {
					version = ir.ProtocolVersion
				}
			}
			if r, ok := res.(*mcp.InitializeResult); ok && r != nil {
				version = r.ProtocolVersion
			}
			errType := errorType(res, err)
			attrs := make([]attribute.KeyValue, 0, 6)
			attrs = append(attrs, srv, keyMethod.String(method))
			label := ""
			if tool != "" {
				label = t.clientTools.value(server, tool)
				attrs = append(attrs, keyTool.String(label))
			}
			if version != "" {
				attrs = append(attrs, keyProtocol.String(versionLabel(version)))
			}
			if errType != "" {
				attrs = append(attrs, keyErrorType.String(errType))
			}
			t.in.clientOp.Inst().Record(ctx, d, metric.WithAttributeSet(attribute.NewSet(attrs...)))
			if tool != "" {
				t.usageCall(ctx, server, tool, elapsed, errType != "")
			}
			if span != nil {
				if tool != "" {
					span.SetAttributes(keyOperation.String("execute_tool"))
				}
				t.endSpan(span, spanAttrs(attrs, tool, label), res, err, errType)
			}
			return res, err
		}
	}
}

// ServerMiddleware is the middleware of the gateway's endpoint named
// endpoint ("" for the default one, /mcp; gateway.Options.EndpointMiddleware):
// each request gets a server span (when tracing), continuing the trace
// context of its _meta or, when _meta has none, of its HTTP headers, and
// mcp.server.operation.duration; a tool call the host refused
// (invalid arguments, circuit open, an unknown tool) counts in
// switchboard.calls.refused. serverOf says whether a tool name is one the
// gateway publishes, and of which server: only those become
// gen_ai.tool.name (a client may send any string), at most
// Options.MaxToolLabels of each server's. A named endpoint's metrics and
// spans carry switchboard.endpoint, and the tool calls the host makes for
// its requests count in the usage under its name (the gateway marks them,
// host.WithEndpoint); the default endpoint's
// carry none, as before there were named ones.
func (t *Telemetry) ServerMiddleware(endpoint string, serverOf func(tool string) (server string, ok bool)) mcp.Middleware {
	var epAttrs []attribute.KeyValue
	if endpoint != "" {
		epAttrs = []attribute.KeyValue{keyEndpoint.String(endpoint)}
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			params := req.GetParams()
			tool, label, unknownTool := "", "", false
			var args json.RawMessage
			if p, ok := params.(*mcp.CallToolParamsRaw); ok && p != nil {
				if server, ok := serverOf(p.Name); ok {
					tool, label = p.Name, t.serverTools.value(server, p.Name)
				} else {
					unknownTool = true
				}
				args = p.Arguments
			}
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if method == "initialize" && ss != nil {
				t.sessionOpened(ss)
			}
			var span trace.Span
			if t.tp != nil {
				ctx = t.prop.Extract(ctx, incomingCarrier(params, req.GetExtra()))
				ctx, span = t.tracer.Start(ctx, spanName(method, tool), trace.WithSpanKind(trace.SpanKindServer))
				if t.opts.RecordPayloads && args != nil {
					span.SetAttributes(keyArguments.String(t.payload(args)))
				}
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			d := time.Since(start).Seconds()

			version := ""
			if ss != nil {
				if ip := ss.InitializeParams(); ip != nil {
					version = ip.ProtocolVersion
				}
			}
			if r, ok := res.(*mcp.InitializeResult); ok && r != nil {
				version = r.ProtocolVersion
			}
			errType := errorType(res, err)
			if method == "tools/call" {
				reason := refusal(res)
				if reason == "" && unknownTool && err != nil {
					reason = "unknown_tool"
				}
				if reason != "" {
					t.in.refused.Add(ctx, 1, metric.WithAttributes(append(epAttrs, keyReason.String(reason))...))
				}
			}
			attrs := make([]attribute.KeyValue, 0, 6)
			attrs = append(attrs, epAttrs...)
			attrs = append(attrs, keyMethod.String(method))
			if tool != "" {
				attrs = append(attrs, keyTool.String(label))
			}
			if version != "" {
				// The version the client asked for: any string.
				attrs = append(attrs, keyProtocol.String(versionLabel(version)))
			}
			if errType != "" {
				attrs = append(attrs, keyErrorType.String(errType))
			}
			t.in.serverOp.Inst().Record(ctx, d, metric.WithAttributeSet(attribute.NewSet(attrs...)))
			if span != nil {
				if ss != nil && ss.ID() != "" {
					// The session id is a handle on the session: spans get a
					// digest of it, which correlates a session's spans without
					// handing it to the collector.
					span.SetAttributes(keySessionID.String(sessionDigest(ss.ID())))
				}
				if method == "tools/call" {
					span.SetAttributes(keyOperation.String("execute_tool"))
				}
				t.endSpan(span, spanAttrs(attrs, tool, label), res, err, errType)
			}
			return res, err
		}
	}
}

// ContextMiddleware is a receiving middleware for a server in this
// process that the host calls (host.InProcessServer): each request's
// context gets the trace context of its _meta, which the host's
// ClientMiddleware wrote, so that what the handler starts continues the
// caller's trace. It records no span and no metric: the host's client
// span is the call's.
func (t *Telemetry) ContextMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if t.tp != nil && !strings.HasPrefix(method, "notifications/") {
				if params := req.GetParams(); !isNil(params) {
					if meta := params.GetMeta(); meta != nil {
						ctx = t.prop.Extract(ctx, metaCarrier(meta))
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// spanAttrs are a call's metric attributes for its span, which names the
// tool a label folded (a span is no series).
func spanAttrs(attrs []attribute.KeyValue, tool, label string) []attribute.KeyValue {
	if tool == label {
		return attrs
	}
	return append(slices.Clone(attrs), keyTool.String(tool)) // the last value of a key wins
}

// endSpan sets a span's attributes and status and ends it.
func (t *Telemetry) endSpan(span trace.Span, attrs []attribute.KeyValue, res mcp.Result, err error, errType string) {
	span.SetAttributes(attrs...)
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		span.SetAttributes(keyRPCStatus.String(strconv.FormatInt(je.Code, 10)))
	}
	if errType != "" {
		// The error's own message may quote what the caller sent: only its
		// kind goes into the span.
		span.SetStatus(codes.Error, errType)
	}
	if t.opts.RecordPayloads {
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			b, _ := json.Marshal(r)
			span.SetAttributes(keyToolResult.String(t.payload(b)))
		}
	}
	span.End()
}

// payload is a value recorded in a span: redacted and bounded.
func (t *Telemetry) payload(b []byte) string {
	s := t.red.Redact(string(b))
	if len(s) > PayloadBytes {
		s = s[:PayloadBytes] + "…"
	}
	return s
}

// spanName is the conventions' "{mcp.method.name} {target}".
func spanName(method, tool string) string {
	if tool != "" {
		return method + " " + tool
	}
	return method
}

// errorType is a failed operation's error.type: the JSON-RPC error code
// (one of the protocol's, else _OTHER: a server may send any number), a
// host refusal's kind, tool_error for a tool's own failure, "" for
// success. Never a message: it may quote the request.
func errorType(res mcp.Result, err error) string {
	if err != nil {
		var je *jsonrpc.Error
		switch {
		case errors.As(err, &je):
			return codeLabel(je.Code)
		case errors.Is(err, context.Canceled):
			return "cancelled"
		case errors.Is(err, context.DeadlineExceeded):
			return "timeout"
		}
		return "_OTHER"
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
		if reason := hostErrorKind(r); reason != "" {
			return reason
		}
		return "tool_error"
	}
	return ""
}

// hostErrorKinds name the host's errors a gateway tool result can carry.
var hostErrorKinds = []struct {
	err  error
	kind string
}{
	{host.ErrInvalidArguments, "invalid_arguments"},
	{host.ErrCircuitOpen, "circuit_open"},
	{host.ErrTimeout, "timeout"},
	{host.ErrUnavailable, "unavailable"},
	{host.ErrUnknownTool, "unknown_tool"},
	{host.ErrToolHeld, "tool_held"},
}

// hostErrorKind is the kind of the host's error a tool result the gateway
// made carries, or "".
func hostErrorKind(r *mcp.CallToolResult) string {
	ej, ok := r.Meta[metaKeyError].(*host.ErrorJSON)
	if !ok {
		return ""
	}
	err := ej.Err()
	for _, k := range hostErrorKinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return ""
}

// refusal is why the host refused a call before any server saw it, or "".
func refusal(res mcp.Result) string {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil || !r.IsError {
		return ""
	}
	switch k := hostErrorKind(r); k {
	case "invalid_arguments", "circuit_open", "unknown_tool", "tool_held":
		return k
	}
	return ""
}

// sessionDigest stands for a session id in a span.
func sessionDigest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// isNil reports whether p is nil or a nil pointer: a request without
// params has no _meta to write to.
func isNil(p mcp.Params) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// metaCarrier carries trace context in a request's _meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// incomingCarrier is where a request's trace context is read: its _meta,
// or its HTTP headers when _meta has no traceparent.
func incomingCarrier(params mcp.Params, extra *mcp.RequestExtra) propagation.TextMapCarrier {
	if !isNil(params) {
		if meta := params.GetMeta(); meta != nil {
			if _, ok := meta["traceparent"].(string); ok {
				return metaCarrier(meta)
			}
		}
	}
	if extra != nil && extra.Header != nil {
		return propagation.HeaderCarrier(extra.Header)
	}
	return propagation.HeaderCarrier(http.Header{})
}
