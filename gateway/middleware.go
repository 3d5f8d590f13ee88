package gateway

// What every answer passes besides the policy and redaction: log levels
// passed upstream, server/discover on older transports, and the gateway's
// own identity in place of the upstreams'.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
)

// loggingMiddleware passes a downstream logging/setLevel upstream once the
// SDK has recorded it for the downstream session.
func (g *Gateway) loggingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && method == "logging/setLevel" {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				g.wantLogLevel(ctx, p.Level)
			}
		}
		return res, err
	}
}

// olderGenerationDiscover answers server/discover, on a connection whose
// transport speaks no 2026-07-28 version (the legacy HTTP+SSE transport
// at /sse, which that revision dropped), as a server of the older
// generation does: -32601, method not found. That is what the spec's
// dual-era clients fall back to initialize on, every one of them: the
// go-sdk's SDK would answer a result listing only the older versions,
// which mcp-go's client (v1.6.0) takes for a 2026-07-28 server it cannot
// speak to, and aborts. Connections that speak 2026-07-28 (stdio,
// Streamable HTTP served statelessly) get the SDK's result.
func olderGenerationDiscover(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil && method == "server/discover" &&
			!slices.ContainsFunc(dr.SupportedVersions, func(v string) bool { return v >= host.InputRequiredVersion }) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("Method not found: server/discover is a %s method, and this transport speaks older versions only (%s): send initialize", host.InputRequiredVersion, strings.Join(dr.SupportedVersions, ", "))}
		}
		return res, err
	}
}

// ownIdentity keeps upstreams' identities out of the gateway's answers. A
// 2026-07-28 server names itself in each result's _meta
// (io.modelcontextprotocol/serverInfo), and the results of tools/call,
// resources/read, prompts/get and completion/complete (input-required ones
// included) come through from upstream with their _meta. The key is
// dropped here, on the way out of every method, and the SDK then puts the
// gateway's own there for a 2026-07-28 client (it does only where the key
// is absent), and nothing for an older one.
func ownIdentity(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		return withoutServerInfo(res), nil
	}
}

// withoutServerInfo returns res without _meta's serverInfo, for the
// results the gateway passes on from upstream (its own lists, discover and
// empty results never carry one). It copies rather than changes: the
// go-sdk client may hand one result to several callers (its cache of
// 2026-07-28 results).
func withoutServerInfo(res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	case *mcp.ReadResourceResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	case *mcp.GetPromptResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	case *mcp.CompleteResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	}
	return res
}

// stripServerInfo returns a copy of m without serverInfo, and whether m
// had one.
func stripServerInfo(m mcp.Meta) (mcp.Meta, bool) {
	if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
		return m, false
	}
	if len(m) == 1 {
		return nil, true // nothing else: no copy to make
	}
	m = maps.Clone(m)
	delete(m, mcp.MetaKeyServerInfo)
	if len(m) == 0 {
		m = nil
	}
	return m, true
}

// logLevels orders the syslog levels of MCP logging, most verbose first.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// wantLogLevel makes the upstreams send log messages at level and above.
// Upstream sessions are shared, so their level only ever becomes more
// verbose: the most verbose any downstream client asked for. Each
// downstream session still gets only what its own level lets through (the
// SDK filters what the gateway forwards).
func (g *Gateway) wantLogLevel(ctx context.Context, level mcp.LoggingLevel) {
	i := slices.Index(logLevels, level)
	if i < 0 {
		return
	}
	g.mu.Lock()
	if cur := slices.Index(logLevels, g.logLevel); cur >= 0 && cur <= i {
		g.mu.Unlock()
		return
	}
	g.logLevel = level
	g.mu.Unlock()
	if err := g.h.SetLoggingLevel(ctx, level); err != nil {
		g.log.Warn("setting the upstreams' log level", "level", level, "err", err)
	}
}
