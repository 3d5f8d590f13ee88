package gateway_test

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// serverInfoName is the name in a result's _meta serverInfo, "" if none.
func serverInfoName(t *testing.T, meta mcp.Meta) string {
	t.Helper()
	v, ok := meta[mcp.MetaKeyServerInfo]
	if !ok {
		return ""
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var impl mcp.Implementation
	if err := json.Unmarshal(raw, &impl); err != nil || impl.Name == "" {
		return string(raw)
	}
	return impl.Name
}

// TestGatewayOwnIdentity: a result's _meta serverInfo names the gateway,
// never the upstream the request went to (issue 11 §4). 2026-07-28
// upstreams put theirs in every result: the fixture (both generations),
// one that speaks only 2026-07-28 (so that even the gateway's own
// connection to it is of that generation) and the go-sdk's everything
// example. A 2026-07-28 client sees the gateway's identity on tools/call,
// resources/read, prompts/get and an input-required result; an older
// client sees none.
func TestGatewayOwnIdentity(t *testing.T) {
	ev := interop.GoInstall(t, interop.GoSDKEverything)
	_, base := serve(t, []config.Server{
		fixture(t, "fx"),
		fixture(t, "new", "-protocol-version", "2026-07-28"),
		{ID: "ev", Transport: config.TransportStdio, Command: ev},
	}, nil, nil)
	ctx := context.Background()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			want := ""
			if v >= host.InputRequiredVersion {
				want = "switchboard"
			}
			check := func(what string, meta mcp.Meta) {
				t.Helper()
				if got := serverInfoName(t, meta); got != want {
					t.Errorf("%s: _meta serverInfo %q, want %q", what, got, want)
				}
			}
			cs := connect(t, base, clientOpts{version: v, opts: &mcp.ClientOptions{
				// Input-required results come back as they are.
				MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			}})
			for _, c := range []struct{ tool, args string }{
				{"mcp_fx_echo", `{"text":"x"}`},
				{"mcp_new_echo", `{"text":"x"}`},
				{"mcp_ev_greet", `{"name":"x"}`},
			} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
				if err != nil || res.IsError {
					t.Fatalf("CallTool(%s) = %+v, %v", c.tool, res, err)
				}
				check("tools/call "+c.tool, res.Meta)
			}
			for _, uri := range []string{"test://static/1", "embedded:info"} {
				rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatalf("ReadResource(%s): %v", uri, err)
				}
				check("resources/read "+uri, rr.Meta)
			}
			for _, p := range []string{"mcp_fx_greet", "mcp_new_greet", "mcp_ev_greet"} {
				gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p, Arguments: map[string]string{"name": "x"}})
				if err != nil {
					t.Fatalf("GetPrompt(%s): %v", p, err)
				}
				check("prompts/get "+p, gp.Meta)
			}
			if v >= host.InputRequiredVersion {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_fx_elicit", Arguments: map[string]any{}})
				if err != nil || len(res.InputRequests) == 0 {
					t.Fatalf("CallTool(mcp_fx_elicit) = %+v, %v; want an input-required result", res, err)
				}
				check("input-required tools/call", res.Meta)
			}
		})
	}
}

// TestLegacySSEUpstream: a legacy HTTP+SSE upstream built on go-sdk
// v1.1.0, configured as "http" (reached by the SSE fallback), serves
// clients of both generations; a 2026-07-28 client's call is bridged.
func TestLegacySSEUpstream(t *testing.T) {
	url := interop.StartGoSDKLegacySSE(t)
	_, base := serve(t, []config.Server{{ID: "legacy", Transport: config.TransportHTTP, URL: url, AllowLocalEndpoint: true}}, nil, nil)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, base, clientOpts{version: v})
			if got := textOf(call(t, cs, "mcp_legacy_greet1", map[string]any{"name": "Ada"})); got != "Hi Ada" {
				t.Errorf("greet1 = %q, want Hi Ada", got)
			}
		})
	}
}

// TestOptionalThroughGateway: an upstream that lacks an optional method
// serves the gateway's clients without errors, and the gateway's syncs
// without warnings: no templates, no completions (an empty result, not
// -32601), a subscription that brings no updates.
func TestOptionalThroughGateway(t *testing.T) {
	logs := &interop.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx", "-without", "resources/templates/list")},
		&host.Options{Logger: log}, &gateway.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			ct, st := mcp.NewInMemoryTransports()
			go g.Server().Run(ctx, st)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil).
				Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			rs, err := cs.ListResources(ctx, nil)
			if err != nil || len(rs.Resources) != 1 {
				t.Errorf("resources = %+v, %v; want the fixture's one", rs, err)
			}
			ts, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(ts.ResourceTemplates) != 0 {
				t.Errorf("templates = %+v, %v; want none", ts, err)
			}
			// The fixture declares no completions.
			cr, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "mcp_fx_greet"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"},
			})
			if err != nil || len(cr.Completion.Values) != 0 {
				t.Errorf("complete = %+v, %v; want no values, no error", cr, err)
			}
			// The fixture does not declare resources.subscribe.
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://static/1"}); err != nil {
				t.Errorf("subscribe: %v, want nil", err)
			}
		})
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings logged:\n%s", logs)
	}
}

// TestNewClientToDefaultGoSDKUpstream: a 2026-07-28 client (the go-sdk's
// default) through the gateway to go-sdk v1.8.0 servers as they come by
// default, over Streamable HTTP (stateful: 2025-11-25 at most) and over
// stdio, started with the gateway or lazily by that client's first call:
// each call succeeds, as it does directly. The client's protocol version
// must not follow its request upstream: the go-sdk's server keeps it in
// the request's context under the key its client reads for the
// MCP-Protocol-Version header of a connection's first POST, and a
// connection opened during that request (the host's 2026-07-28
// connection, or a lazy server's) then opened with initialize under a
// 2026-07-28 header, which a stateful server refuses ("protocol version
// "2026-07-28" is not supported by this server").
func TestNewClientToDefaultGoSDKUpstream(t *testing.T) {
	url := interop.StartGoSDKEverythingHTTP(t)
	ev := interop.GoInstall(t, interop.GoSDKEverything)
	_, base := serve(t, []config.Server{
		{ID: "http", Transport: config.TransportHTTP, URL: url, AllowLocalEndpoint: true},
		{ID: "lazyhttp", Transport: config.TransportHTTP, URL: url, AllowLocalEndpoint: true, Lazy: true},
		{ID: "stdio", Transport: config.TransportStdio, Command: ev},
	}, nil, nil)

	direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("direct: %v", err)
	}
	defer direct.Close()
	if got := textOf(call(t, direct, "greet", map[string]any{"name": "Ada"})); got != "Hi Ada" {
		t.Fatalf("direct greet = %q, want Hi Ada", got)
	}

	for _, v := range []string{"", "2025-11-25"} { // "": the client's default, 2026-07-28
		t.Run("client "+cmp.Or(v, "default"), func(t *testing.T) {
			cs := connect(t, base, clientOpts{version: v})
			if v == "" {
				if got := cs.InitializeResult().ProtocolVersion; got != host.InputRequiredVersion {
					t.Fatalf("the go-sdk client's default negotiated %s, want %s", got, host.InputRequiredVersion)
				}
			}
			for _, tool := range []string{"mcp_http_greet", "mcp_lazyhttp_greet", "mcp_stdio_greet"} {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"name": "Ada"}})
				if err != nil || res.IsError || textOf(res) != "Hi Ada" {
					t.Errorf("%s = %+v, %v; want Hi Ada, as directly", tool, res, err)
				}
			}
		})
	}
}
