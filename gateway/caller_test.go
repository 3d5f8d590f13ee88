package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/transport"
)

// whoami is an in-process server whose tool answers with the caller and
// the idempotency key the host gave it.
func whoami() host.InProcessServer {
	srv := mcp.NewServer(&mcp.Implementation{Name: "who", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		m := req.Params.GetMeta()
		caller, _ := m[host.MetaKeyCaller].(string)
		key, _ := m[host.MetaKeyIdempotencyKey].(string)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: caller + " " + key}}}, nil
	})
	return host.InProcessServer{ID: "who", Server: srv}
}

// askWho calls whoami through cs with a _meta that names another caller,
// and returns what the server saw.
func askWho(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	p := &mcp.CallToolParams{Name: "mcp_who_whoami", Arguments: map[string]any{},
		Meta: mcp.Meta{"switchboard/caller": "owner", "switchboard/idempotency_key": "k1"}}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("whoami: %v %v", res, err)
	}
	return textOf(res)
}

// TestCallerOfEachCaller: the caller the gateway names for the host, as
// each kind of request authenticates, whatever the client claims in its
// _meta: each OAuth token's subject, the auth token's holder on every
// transport (on a named endpoint too), a named endpoint's own token's
// holder as the endpoint, the Local handler's client and the stdio
// client as the owner, an anonymous client's session, and "anonymous" without one. The
// idempotency key passes as the client gave it.
func TestCallerOfEachCaller(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true, Scopes: []string{"mcp"}, Clients: map[string]string{"bob": "bob-secret-0123"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := namedEndpoint("code", nil)
	code.AuthToken = "the-code-token-0123456789abcdef"
	g, err := gateway.Start(ctx, nil, &host.Options{InProcess: []host.InProcessServer{whoami()}}, &gateway.Options{Endpoints: []gateway.Endpoint{{}, code}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	const owner = "the-owner-token-0123456789abcdef"
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	ts.Config.Handler = g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true, AuthToken: owner,
		OAuth: &guard.OAuthOptions{Issuer: as.Issuer, Resource: base + "/mcp", Scopes: []string{"mcp"}}}})
	ts.Start()
	anon := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	local := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true, Local: true}}))
	// After the sessions' own cleanups (connect, connectAs).
	t.Cleanup(func() {
		for _, s := range []*httptest.Server{ts, anon, local} {
			s.CloseClientConnections()
			s.Close()
		}
	})

	for _, c := range []struct{ who, prefix, tok, want string }{
		{"alice", "", token(t, as, as.ClientID, as.ClientSecret, base+"/mcp", "mcp"), "oauth:" + as.ClientID + " k1"},
		{"bob", "", token(t, as, "bob", "bob-secret-0123", base+"/mcp", "mcp"), "oauth:bob k1"},
		{"owner", "", owner, "owner k1"},
		{"the owner on /e/code", "/e/code", owner, "owner k1"},
		{"code's own token", "/e/code", code.AuthToken, "endpoint:code k1"},
	} {
		for _, kind := range []string{"streamable", "sse", "ws"} {
			cs, err := connectAt(t, base, c.prefix, kind, c.tok)
			if err != nil {
				t.Fatalf("%s over %s: %v", c.who, kind, err)
			}
			if got := askWho(t, cs); got != c.want {
				t.Errorf("%s over %s: the server saw %q, want %q", c.who, kind, got, c.want)
			}
		}
	}

	cs := connect(t, local.URL, clientOpts{version: "2025-11-25"})
	if got := askWho(t, cs); got != "owner k1" {
		t.Errorf("through the Local handler: %q, want owner", got)
	}
	cs = connect(t, anon.URL, clientOpts{version: "2025-11-25"})
	if got, want := askWho(t, cs), "session:"+cs.ID()+" k1"; got != want {
		t.Errorf("anonymous, on a session: %q, want %q", got, want)
	}
	cs = connect(t, anon.URL, clientOpts{version: "2026-07-28"})
	if got := askWho(t, cs); got != host.CallerAnonymous+" k1" {
		t.Errorf("anonymous, 2026-07-28 (no session): %q, want anonymous", got)
	}
	ws, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&transport.WebSocket{URL: "ws" + strings.TrimPrefix(anon.URL, "http") + "/ws", Header: http.Header{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	if got := askWho(t, ws); got != host.CallerAnonymous+" k1" {
		t.Errorf("anonymous over WebSocket: %q, want anonymous", got)
	}

	// Over stdio, on the context the daemon serves it with.
	ct, st := mcp.NewInMemoryTransports()
	sctx, stop := context.WithCancel(guard.OwnerContext(ctx))
	defer stop()
	go g.Server().Run(sctx, st)
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := askWho(t, cs); got != "owner k1" {
		t.Errorf("over stdio: %q, want owner", got)
	}
}
