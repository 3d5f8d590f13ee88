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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
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

// TestOptionalMethods: a method a server does not implement (JSON-RPC
// -32601) or whose capability it did not declare means "none", never a
// failure, for every optional request the host makes.
func TestOptionalMethods(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		flags []string
		check func(t *testing.T, h *host.Host)
	}{
		{"resources/templates/list", []string{"-without", "resources/templates/list"}, func(t *testing.T, h *host.Host) {
			ts, err := h.ResourceTemplates(ctx)
			if err != nil || len(ts) != 0 {
				t.Errorf("ResourceTemplates = %v, %v; want none, no error", ts, err)
			}
			rs, err := h.Resources(ctx)
			if err != nil || len(rs) != 1 {
				t.Errorf("Resources = %v, %v; want the one resource", rs, err)
			}
		}},
		{"resources/list", []string{"-without", "resources/list"}, func(t *testing.T, h *host.Host) {
			rs, err := h.Resources(ctx)
			if err != nil || len(rs) != 0 {
				t.Errorf("Resources = %v, %v; want none, no error", rs, err)
			}
		}},
		{"prompts/list", []string{"-without", "prompts/list"}, func(t *testing.T, h *host.Host) {
			ps, err := h.Prompts(ctx)
			if err != nil || len(ps) != 0 {
				t.Errorf("Prompts = %v, %v; want none, no error", ps, err)
			}
		}},
		{"tools/list", []string{"-without", "tools/list"}, func(t *testing.T, h *host.Host) {
			if st := h.Servers()[0]; st.State != host.StateReady || st.Tools != 0 {
				t.Errorf("server %s with %d tools, want ready with none", st.State, st.Tools)
			}
		}},
		{"logging/setLevel", []string{"-without", "logging/setLevel"}, func(t *testing.T, h *host.Host) {
			if err := h.SetLoggingLevel(ctx, "debug"); err != nil {
				t.Errorf("SetLoggingLevel: %v, want nil", err)
			}
		}},
		{"resources/subscribe undeclared", []string{"-protocol-version", "2025-11-25"}, func(t *testing.T, h *host.Host) {
			// The fixture does not declare resources.subscribe. (Under
			// 2026-07-28 the SDK subscribes with subscriptions/listen.)
			if err := h.Subscribe(ctx, "opt", "test://static/1"); err != nil {
				t.Errorf("Subscribe: %v, want nil (no updates will come)", err)
			}
			if err := h.Unsubscribe(ctx, "opt", "test://static/1"); err != nil {
				t.Errorf("Unsubscribe: %v, want nil", err)
			}
		}},
		{"completion/complete undeclared", nil, func(t *testing.T, h *host.Host) {
			checkNoCompletions(t, h)
		}},
		{"completion/complete not implemented", []string{"-protocol-version", "2024-11-05"}, func(t *testing.T, h *host.Host) {
			// 2024-11-05 has no completions capability: the server is
			// asked, and answers -32601.
			checkNoCompletions(t, h)
		}},
		{"ping", []string{"-without", "ping", "-protocol-version", "2025-11-25"}, func(t *testing.T, h *host.Host) {
			if _, err := h.Ping(ctx, "opt"); err != nil {
				t.Errorf("Ping: %v, want nil (the server answered)", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, logs := start(t, []config.Server{fixture(t, "opt", c.flags...)}, nil)
			c.check(t, h)
			if strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("warnings logged:\n%s", logs)
			}
		})
	}
}

func checkNoCompletions(t *testing.T, h *host.Host) {
	t.Helper()
	res, err := h.Complete(context.Background(), "opt", &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"},
	})
	if err != nil || res == nil || len(res.Completion.Values) != 0 {
		t.Errorf("Complete = %+v, %v; want an empty result", res, err)
	}
}

// TestHealthPingNotImplemented: a server that answers ping with -32601
// has answered: its health pings succeed, it is never degraded nor
// reconnected. (On 2025-11-25, where ping exists; TestHealthPing2026 is
// the generation without it.)
func TestHealthPingNotImplemented(t *testing.T) {
	st := newStates()
	s := fixture(t, "noping", "-without", "ping", "-protocol-version", "2025-11-25")
	s.HealthInterval = 20 * time.Millisecond
	h, _ := start(t, []config.Server{s}, &host.Options{}, st)
	t0 := time.Now()
	// Polling a condition: a successful ping leaves no other trace.
	waitFor(t, func() bool { return h.Servers()[0].LastHealthy.After(t0) }, "a health ping answered after start")
	checkStayedReady(t, h, st)
}

// TestTypeScriptServerWithoutTemplates: a real server written with the
// TypeScript SDK's low-level Server declares resources but answers
// resources/templates/list with -32601: it has no templates, and its
// resources are listed and read.
func TestTypeScriptServerWithoutTemplates(t *testing.T) {
	argv := interop.TSResourcesOnly(t)
	h, logs := start(t, []config.Server{{ID: "ts", Transport: config.TransportStdio, Command: argv[0], Args: argv[1:]}}, nil)
	ctx := context.Background()
	ts, err := h.ResourceTemplates(ctx)
	if err != nil || len(ts) != 0 {
		t.Errorf("ResourceTemplates = %v, %v; want none, no error", ts, err)
	}
	rs, err := h.Resources(ctx)
	if err != nil || len(rs) != 1 || rs[0].Resource.URI != "ts://only/readme" {
		t.Fatalf("Resources = %v, %v; want ts://only/readme", rs, err)
	}
	rr, err := h.ReadResource(ctx, "ts", "ts://only/readme", nil)
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "read from the TypeScript SDK" {
		t.Errorf("ReadResource = %v, %v", rr, err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings logged:\n%s", logs)
	}
}

// TestHealthPing2026: 2026-07-28 removed ping (and logging/setLevel), and
// a server of that generation served statelessly over Streamable HTTP
// refuses a request without its per-request _meta (400). The host's health
// pings are answered all the same, and the server stays ready; it was
// reconnected every three intervals.
func TestHealthPing2026(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hi"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + in.Name}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	st := newStates()
	s := config.Server{ID: "new", Transport: config.TransportHTTP, URL: ts.URL, AllowLocalEndpoint: true, HealthInterval: 20 * time.Millisecond}
	h, _ := start(t, []config.Server{s}, &host.Options{}, st)
	if v := h.Servers()[0].ProtocolVersion; v != host.InputRequiredVersion {
		t.Fatalf("negotiated %q, want %s", v, host.InputRequiredVersion)
	}
	t0 := time.Now()
	// Polling a condition: a successful ping leaves no other trace.
	waitFor(t, func() bool { return h.Servers()[0].LastHealthy.After(t0) }, "a health ping answered after start")
	checkStayedReady(t, h, st)
	if got := callText(t, h, "mcp_new_hi", `{"name":"Ada"}`, nil); got != "hi Ada" {
		t.Errorf("hi = %q", got)
	}
	// logging/setLevel is gone from 2026-07-28 too (the server declares
	// logging: a level travels with each request); it is not sent.
	if err := h.SetLoggingLevel(context.Background(), "debug"); err != nil {
		t.Errorf("SetLoggingLevel: %v, want nil", err)
	}
	h.Close()
	ts.Close()
}

// checkStayedReady checks that the host's only server announced no state
// but ready (or connecting) and was never restarted.
func checkStayedReady(t *testing.T, h *host.Host, st *states) {
	t.Helper()
	for _, ev := range drainEvents(st.w) {
		if s := ev.Status; ev.Kind == host.EventState && s.State != host.StateReady && s.State != host.StateConnecting {
			t.Errorf("state %s (%v), want ready throughout", s.State, s.Err)
		}
	}
	if s := h.Servers()[0]; s.State != host.StateReady || s.Restarts != 0 {
		t.Errorf("status %s after %d restarts, want ready after none", s.State, s.Restarts)
	}
}

// TestGoSDKEverything: the go-sdk's own everything example (v1.8.0) over
// stdio, which logs every message to stderr in lines of many KiB (the
// crash of issue 11 §0), and over Streamable HTTP: the host lists and
// calls its tools, reads a resource, gets a prompt, and completes.
func TestGoSDKEverything(t *testing.T) {
	bin := interop.GoInstall(t, interop.GoSDKEverything)
	for _, s := range []config.Server{
		{ID: "ev", Transport: config.TransportStdio, Command: bin},
		{ID: "ev", Transport: config.TransportHTTP, URL: interop.StartGoSDKEverythingHTTP(t), AllowLocalEndpoint: true},
	} {
		t.Run(string(s.Transport), func(t *testing.T) {
			h, _ := start(t, []config.Server{s}, nil)
			for _, want := range []string{"mcp_ev_greet", "mcp_ev_greet__structured_", "mcp_ev_log", "mcp_ev_roots"} {
				if !hasTool(h, want) {
					t.Errorf("tool %s not offered; have %v", want, toolNames(h))
				}
			}
			if got := callText(t, h, "mcp_ev_greet", `{"name":"Ada"}`, nil); got != "Hi Ada" {
				t.Errorf("greet = %q, want Hi Ada", got)
			}
			checkReadAndPrompt(t, h, "ev", "embedded:info", "This is the hello example server.", "greet", map[string]string{"name": "Ada"}, "Say hi to Ada")
			ctx := context.Background()
			ts, err := h.ResourceTemplates(ctx)
			if err != nil || len(ts) != 1 {
				t.Errorf("ResourceTemplates = %v, %v; want one", ts, err)
			}
			cr, err := h.Complete(ctx, "ev", &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "Ad"},
			})
			if err != nil || !slices.Equal(cr.Completion.Values, []string{"Adx"}) {
				t.Errorf("Complete = %+v, %v; want [Adx]", cr, err)
			}
		})
	}
}

// TestMCPGoEverything: mcp-go's everything example (v1.2.1) over stdio,
// which logs every request and result to stderr: the host lists and calls
// its tools, reads a resource and a template, gets a prompt.
func TestMCPGoEverything(t *testing.T) {
	bin := interop.GoInstall(t, interop.MCPGoEverything)
	h, _ := start(t, []config.Server{{ID: "mg", Transport: config.TransportStdio, Command: bin}}, nil)
	for _, want := range []string{"mcp_mg_echo", "mcp_mg_add", "mcp_mg_getTinyImage", "mcp_mg_longRunningOperation"} {
		if !hasTool(h, want) {
			t.Errorf("tool %s not offered; have %v", want, toolNames(h))
		}
	}
	if got := callText(t, h, "mcp_mg_echo", `{"message":"hi"}`, nil); got != "Echo: hi" {
		t.Errorf("echo = %q, want Echo: hi", got)
	}
	if got := callText(t, h, "mcp_mg_add", `{"a":2,"b":3}`, nil); !strings.Contains(got, "is 5.0") {
		t.Errorf("add = %q, want the sum 5", got)
	}
	// Invalid arguments are refused before the call.
	if _, err := h.CallTool(context.Background(), "mcp_mg_add", json.RawMessage(`{"a":"two","b":3}`), nil); !errors.Is(err, host.ErrInvalidArguments) {
		t.Errorf("add with a string: err = %v, want ErrInvalidArguments", err)
	}
	checkReadAndPrompt(t, h, "mg", "test://static/resource", "This is a sample resource", "simple_prompt", nil, "This is a simple prompt without arguments.")
	ts, err := h.ResourceTemplates(context.Background())
	if err != nil || len(ts) != 1 || ts[0].Template.URITemplate != "test://dynamic/resource/{id}" {
		t.Errorf("ResourceTemplates = %v, %v; want test://dynamic/resource/{id}", ts, err)
	}
}

// checkReadAndPrompt reads uri from server (want its text) and gets its
// prompt (want the first message's text).
func checkReadAndPrompt(t *testing.T, h *host.Host, server, uri, wantText, prompt string, args map[string]string, wantMessage string) {
	t.Helper()
	ctx := context.Background()
	rs, err := h.Resources(ctx)
	if err != nil || !slices.ContainsFunc(rs, func(r host.Resource) bool { return r.Server == server && r.Resource.URI == uri }) {
		t.Errorf("Resources = %v, %v; want %s of %s", rs, err, uri, server)
	}
	rr, err := h.ReadResource(ctx, server, uri, nil)
	if err != nil || len(rr.Contents) == 0 || rr.Contents[0].Text != wantText {
		t.Errorf("ReadResource(%s) = %+v, %v; want %q", uri, rr, err, wantText)
	}
	ps, err := h.Prompts(ctx)
	if err != nil || !slices.ContainsFunc(ps, func(p host.Prompt) bool { return p.Server == server && p.Prompt.Name == prompt }) {
		t.Errorf("Prompts = %v, %v; want %s of %s", ps, err, prompt, server)
	}
	gp, err := h.GetPrompt(ctx, server, prompt, args, nil)
	if err != nil || len(gp.Messages) == 0 {
		t.Fatalf("GetPrompt(%s) = %+v, %v", prompt, gp, err)
	}
	if tc, ok := gp.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != wantMessage {
		t.Errorf("GetPrompt(%s) first message = %#v, want %q", prompt, gp.Messages[0].Content, wantMessage)
	}
}
