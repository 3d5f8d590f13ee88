package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/transport"
)

// namedEndpoint is an endpoint served at /e/NAME/{mcp,sse,message,ws}.
func namedEndpoint(name string, servers []string) gateway.Endpoint {
	p := "/e/" + name + "/"
	return gateway.Endpoint{Name: name, Path: p + "mcp", SSE: p + "sse", Message: p + "message", WebSocket: p + "ws", Servers: servers}
}

// connectAt connects to the endpoint at prefix ("" for /mcp's, "/e/NAME"
// for a named one) over transport kind ("streamable", "sse", "ws") with
// tok.
func connectAt(t *testing.T, base, prefix, kind, tok string) (*mcp.ClientSession, error) {
	t.Helper()
	var tr mcp.Transport
	switch kind {
	case "streamable":
		tr = &mcp.StreamableClientTransport{Endpoint: base + prefix + "/mcp", HTTPClient: bearerClient(tok)}
	case "sse":
		tr = &mcp.SSEClientTransport{Endpoint: base + prefix + "/sse", HTTPClient: bearerClient(tok)}
	case "ws":
		tr = &transport.WebSocket{URL: base + prefix + "/ws", Header: http.Header{"Authorization": {"Bearer " + tok}}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	// Not a context that ends: the SSE stream lives on it.
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// rawGet sends a GET (SSE, WebSocket upgrade or Streamable HTTP stream)
// with tok to path and returns the response's status and WWW-Authenticate,
// reading no body.
func rawGet(t *testing.T, url, tok string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestEndpointAuth: named endpoints each with their own credential rules,
// over every transport of each (Streamable HTTP, SSE and its messages,
// WebSocket). An endpoint's own token opens that endpoint (all of it: it
// is the endpoint's owner, no policy) and is refused with 403 on another
// endpoint and on /mcp; the owner's token opens every endpoint; an OAuth
// token sees the intersection of the policy and the endpoint's servers,
// and one lacking the endpoint's scope is refused with 403
// insufficient_scope naming every scope the endpoint needs. A named
// endpoint is an OAuth protected resource of its own: metadata naming its
// URL (as an MCP client checks), challenges pointing there, and a token
// for it accepted there alone.
func TestEndpointAuth(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const owner, codeToken, opsToken = "owner-token-7d1f", "code-token-21ab", "ops-token-9c3e"
	code := namedEndpoint("code", []string{"pub", "secret"})
	code.AuthToken, code.Scopes = codeToken, []string{"code"}
	ops := namedEndpoint("ops", []string{"secret"})
	ops.AuthToken = opsToken
	policy := []config.AuthPolicy{{Scope: "tools:pub", Servers: []string{"pub"}}}
	for _, e := range []*gateway.Endpoint{&code, &ops} {
		e.Policy = policy
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "pub"), fixture(t, "secret")}, nil,
		&gateway.Options{Endpoints: []gateway.Endpoint{{Policy: policy}, code, ops}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	ts.Config.Handler = g.Handler(&gateway.HTTPOptions{Guard: guard.Options{
		Loopback: true, AuthToken: owner,
		OAuth: &guard.OAuthOptions{Issuer: as.Issuer, Resource: base + "/mcp", Scopes: []string{"mcp"}},
	}})
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	now := time.Now()
	mint := func(scope string) string {
		tok, err := as.Mint(jwt.MapClaims{"iss": as.Issuer, "aud": base + "/mcp", "sub": "bob", "scope": scope, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	bobCode, bob := mint("mcp tools:pub code"), mint("mcp tools:pub")

	var (
		all    = []string{"mcp_pub_echo", "mcp_secret_echo"}
		pub    = []string{"mcp_pub_echo"}
		secret = []string{"mcp_secret_echo"}
	)
	echoes := func(t *testing.T, cs *mcp.ClientSession) []string {
		var out []string
		for _, n := range toolNames(t, cs) {
			if strings.HasSuffix(n, "_echo") {
				out = append(out, n)
			}
		}
		return out
	}
	for _, kind := range []string{"streamable", "sse", "ws"} {
		t.Run(kind, func(t *testing.T) {
			for _, c := range []struct {
				who, prefix, tok string
				want             []string // nil: refused
			}{
				{"code's token", "/e/code", codeToken, all},
				{"code's token", "/e/ops", codeToken, nil},
				{"code's token", "", codeToken, nil},
				{"ops's token", "/e/ops", opsToken, secret},
				{"ops's token", "/e/code", opsToken, nil},
				{"the owner", "/e/code", owner, all},
				{"the owner", "/e/ops", owner, secret},
				{"the owner", "", owner, all},
				{"an OAuth token with code's scope", "/e/code", bobCode, pub},
				{"an OAuth token with code's scope", "/e/ops", bobCode, []string{}}, // the policy: pub only; ops: secret only
				{"an OAuth token with code's scope", "", bobCode, pub},
				{"an OAuth token without code's scope", "/e/code", bob, nil},
				{"an OAuth token without code's scope", "", bob, pub},
			} {
				at := c.prefix
				if at == "" {
					at = "/mcp's"
				}
				cs, err := connectAt(t, base, c.prefix, kind, c.tok)
				switch {
				case c.want == nil && err == nil:
					t.Errorf("%s at %s: connected (tools %v); want it refused", c.who, at, echoes(t, cs))
				case c.want == nil:
				case err != nil:
					t.Errorf("%s at %s: %v", c.who, at, err)
				default:
					if got := echoes(t, cs); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
						t.Errorf("%s at %s lists %v; want %v", c.who, at, got, c.want)
					}
				}
			}
		})
	}

	// A named endpoint is a protected resource of its own: the metadata
	// its challenge points at names its URL (what an MCP client checks,
	// as the go-sdk's does with this very call) and its scopes; a token
	// for it opens it and nothing else.
	_, www := rawGet(t, base+"/e/code/mcp", "")
	cs, err := oauthex.ParseWWWAuthenticate([]string{www})
	if err != nil || len(cs) != 1 {
		t.Fatalf("the challenge of /e/code/mcp: %q: %v", www, err)
	}
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, cs[0].Params["resource_metadata"], base+"/e/code/mcp", http.DefaultClient)
	if err != nil {
		t.Fatalf("the endpoint's protected resource metadata: %v", err)
	}
	if !slices.Equal(prm.ScopesSupported, []string{"mcp", "code"}) || !slices.Equal(prm.AuthorizationServers, []string{as.Issuer}) {
		t.Errorf("the endpoint's metadata: scopes %v, authorization servers %v; want [mcp code], [%s]", prm.ScopesSupported, prm.AuthorizationServers, as.Issuer)
	}
	forCode, err := as.Mint(jwt.MapClaims{"iss": as.Issuer, "aud": base + "/e/code/mcp", "sub": "carol", "scope": "mcp tools:pub code", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := connectAt(t, base, "/e/code", "streamable", forCode); err != nil {
		t.Errorf("a token for /e/code/mcp on it: %v", err)
	} else if got := echoes(t, cs); !slices.Equal(got, pub) {
		t.Errorf("a token for /e/code/mcp lists %v; want %v (the policy)", got, pub)
	}
	for _, p := range []string{"/e/ops/mcp", "/mcp", "/e/ops/sse", "/sse"} {
		if status, www := rawGet(t, base+p, forCode); status != http.StatusUnauthorized || !strings.Contains(www, `error="invalid_token"`) {
			t.Errorf("GET %s with a token for /e/code/mcp: %d %q; want 401 invalid_token", p, status, www)
		}
	}

	// What a refusal says, on every path of the endpoints: 403 for
	// another endpoint's token; 403 insufficient_scope naming the scopes
	// the endpoint needs; 401 without a credential, asking for those
	// scopes too.
	for _, p := range []string{"/mcp", "/sse", "/message", "/ws"} {
		for _, c := range []struct {
			path, tok  string
			status     int
			challenges []string
		}{
			{"/e/ops" + p, codeToken, http.StatusForbidden, nil},
			{"/e/code" + p, opsToken, http.StatusForbidden, nil},
			{p, opsToken, http.StatusForbidden, nil},
			{"/e/code" + p, bob, http.StatusForbidden, []string{`error="insufficient_scope"`, `scope="mcp code"`}},
			{"/e/code" + p, "", http.StatusUnauthorized, []string{`scope="mcp code"`, `resource_metadata="` + base + `/.well-known/oauth-protected-resource/e/code/mcp"`}},
			{p, "", http.StatusUnauthorized, []string{`scope="mcp"`, `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`}},
		} {
			status, www := rawGet(t, base+c.path, c.tok)
			if status != c.status {
				t.Errorf("GET %s: %d, want %d", c.path, status, c.status)
			}
			for _, s := range c.challenges {
				if !strings.Contains(www, s) {
					t.Errorf("GET %s: WWW-Authenticate %q; want %s in it", c.path, www, s)
				}
			}
		}
	}

	// The endpoint's scopes changed at run time: its metadata and its
	// challenge say the new ones.
	code.Scopes = []string{"code", "write"}
	if err := g.SetEndpoints(ctx, []gateway.Endpoint{{Policy: policy}, code, ops}); err != nil {
		t.Fatal(err)
	}
	if _, www := rawGet(t, base+"/e/code/mcp", ""); !strings.Contains(www, `scope="mcp code write"`) {
		t.Errorf("after SetEndpoints, the challenge of /e/code/mcp: %q; want the new scopes", www)
	}
	prm, err = oauthex.GetProtectedResourceMetadata(ctx, cs[0].Params["resource_metadata"], base+"/e/code/mcp", http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(prm.ScopesSupported, []string{"mcp", "code", "write"}) {
		t.Errorf("after SetEndpoints, the endpoint's metadata: scopes %v; want [mcp code write]", prm.ScopesSupported)
	}
}
