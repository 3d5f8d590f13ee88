package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
)

// TestLegacySSEServer: a legacy HTTP+SSE server built on go-sdk v1.1.0
// (its own examples/server/sse, as go-sdk up to v1.6.1) answers a
// server/discover POST with 400. It is reached with transport "sse" and
// with "http" falling back to SSE, and no 2026-07-28 connection is tried
// for a caller that would want one (issue 11 §4).
func TestLegacySSEServer(t *testing.T) {
	url := interop.StartGoSDKLegacySSE(t)
	for _, tr := range []config.Transport{config.TransportSSE, config.TransportHTTP} {
		t.Run(string(tr), func(t *testing.T) {
			h, _ := start(t, []config.Server{{ID: "legacy", Transport: tr, URL: url, AllowLocalEndpoint: true}}, nil)
			if got := callText(t, h, "mcp_legacy_greet1", `{"name":"Ada"}`, nil); got != "Hi Ada" {
				t.Errorf("greet1 = %q, want Hi Ada", got)
			}
			st := h.Servers()[0]
			if st.ServerInfo == nil || st.ServerInfo.Name != "greeter1" || st.ProtocolVersion > "2025-11-25" {
				t.Errorf("server %+v speaking %q, want greeter1 on at most 2025-11-25", st.ServerInfo, st.ProtocolVersion)
			}
			// HTTP+SSE has no 2026-07-28: a caller asking for that
			// generation is told at once, to bridge instead.
			_, err := h.CallTool(context.Background(), "mcp_legacy_greet1", json.RawMessage(`{"name":"Bo"}`),
				&host.CallOptions{RequestOptions: host.RequestOptions{InputRequired: true}})
			if !errors.Is(err, host.ErrOlderGeneration) {
				t.Errorf("a 2026-07-28 call: err = %v, want ErrOlderGeneration", err)
			}
		})
	}
}

// postRecorder serves h and records the JSON-RPC method of every POST that
// carries one (with sseOnly, of those to an SSE session's message
// endpoint, not the Streamable HTTP attempts before a fallback).
type postRecorder struct {
	h       http.Handler
	sseOnly bool
	mu      sync.Mutex
	methods []string
}

func (p *postRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && (!p.sseOnly || r.URL.Query().Has("sessionid")) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			p.mu.Lock()
			p.methods = append(p.methods, msg.Method)
			p.mu.Unlock()
		}
	}
	p.h.ServeHTTP(w, r)
}

func (p *postRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.methods)
}

// TestConnectRoundTrips: over legacy SSE the first request is initialize,
// with no server/discover probe (which 2026-07-28 does not define there),
// whether configured as "sse" or reached by the "http" fallback, and the
// fallback keeps the configured roots; a Streamable HTTP server that
// speaks 2026-07-28 gets its probe and no initialize, as before.
func TestConnectRoundTrips(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "current", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, " ")}}}, nil, nil
	})
	for _, tr := range []config.Transport{config.TransportSSE, config.TransportHTTP} {
		t.Run("sse server, transport "+string(tr), func(t *testing.T) {
			rec := &postRecorder{h: mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil), sseOnly: true}
			ts := httptest.NewServer(rec)
			h, _ := start(t, []config.Server{{ID: "now", Transport: tr, URL: ts.URL, AllowLocalEndpoint: true,
				Roots: []string{"file:///tmp/configured-root"}}}, nil)
			seen := rec.seen()
			if len(seen) == 0 || seen[0] != "initialize" || slices.Contains(seen, "server/discover") {
				t.Errorf("SSE POSTs at connect = %q, want initialize first and no server/discover", seen)
			}
			if got := callText(t, h, "mcp_now_roots", `{}`, nil); got != "file:///tmp/configured-root" {
				t.Errorf("roots = %q, want the configured root", got)
			}
			h.Close()
			ts.Close()
		})
	}
	t.Run("streamable server", func(t *testing.T) {
		rec := &postRecorder{h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})}
		ts := httptest.NewServer(rec)
		h, _ := start(t, []config.Server{{ID: "now", Transport: config.TransportHTTP, URL: ts.URL, AllowLocalEndpoint: true}}, nil)
		if v := h.Servers()[0].ProtocolVersion; v != host.InputRequiredVersion {
			t.Errorf("negotiated %q, want %s", v, host.InputRequiredVersion)
		}
		seen := rec.seen()
		if n := strings.Count(strings.Join(seen, " "), "server/discover"); n != 1 || slices.Contains(seen, "initialize") {
			t.Errorf("POSTs at connect = %q, want one server/discover and no initialize", seen)
		}
		h.Close()
		ts.Close()
	})
}
