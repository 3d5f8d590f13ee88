package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/transport"
)

// oauthGateway is a gateway over servers protected by as, on loopback,
// its resource the URL of its /mcp; log is what it logged.
type oauthGateway struct {
	g    *gateway.Gateway
	base string
	log  *interop.LogBuffer
}

func serveOAuth(t *testing.T, as *testauth.Server, servers []config.Server, policy []config.AuthPolicy, ownerToken string) *oauthGateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := &interop.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, err := gateway.Start(ctx, servers, nil, &gateway.Options{Endpoints: []gateway.Endpoint{{Policy: policy}}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	ts.Config.Handler = g.Handler(&gateway.HTTPOptions{Guard: guard.Options{
		Loopback:  true,
		AuthToken: ownerToken,
		Logger:    logger,
		OAuth:     &guard.OAuthOptions{Issuer: as.Issuer, Resource: base + "/mcp", Scopes: []string{"mcp"}},
	}})
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	return &oauthGateway{g: g, base: base, log: log}
}

// token gets an access token for the gateway from the authorization
// server by the client credentials grant (resource indicator: the
// gateway's /mcp).
func token(t *testing.T, as *testauth.Server, id, secret, resource string, scopes ...string) string {
	t.Helper()
	cc := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: as.Issuer + "/token", Scopes: scopes,
		EndpointParams: map[string][]string{"resource": {resource}}}
	tok, err := cc.Token(context.Background())
	if err != nil {
		t.Fatalf("token for %s: %v", id, err)
	}
	return tok.AccessToken
}

func bearerClient(tok string) *http.Client { return &http.Client{Transport: bearer{tok}} }

// connectAs connects over transport kind ("streamable", "sse", "ws") with
// tok.
func connectAs(t *testing.T, base, kind, tok string) (*mcp.ClientSession, error) {
	t.Helper()
	var tr mcp.Transport
	switch kind {
	case "streamable":
		tr = &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: bearerClient(tok)}
	case "sse":
		tr = &mcp.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: bearerClient(tok)}
	case "ws":
		tr = &transport.WebSocket{URL: base + "/ws", Header: http.Header{"Authorization": {"Bearer " + tok}}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// initializeWith posts an initialize with tok ("" for none) and returns
// the response.
func initializeWith(t *testing.T, base, tok string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestOAuthGateway: the gateway as an OAuth protected resource, against a
// real authorization server issuing JWT access tokens: its metadata, the
// 401 that points at it, a valid token on every transport, each kind of
// bad token refused with a reason in the log (never the token), 403
// insufficient_scope, a rotated key picked up with a bounded number of
// fetches.
func TestOAuthGateway(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true, Scopes: []string{"mcp"}})
	gw := serveOAuth(t, as, []config.Server{fixture(t, "fx")}, nil, "")
	resource := gw.base + "/mcp"
	good := token(t, as, as.ClientID, as.ClientSecret, resource, "mcp")
	if c := testauth.Claims(good); c["aud"] != resource || c["iss"] != as.Issuer {
		t.Fatalf("issued token's claims = %v; want aud %s, iss %s", c, resource, as.Issuer)
	}
	var tokens []string // every token of the test, for the canary at the end
	tokens = append(tokens, good)

	t.Run("metadata", func(t *testing.T) {
		for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
			req, _ := http.NewRequest("GET", gw.base+p, nil)
			req.Header.Set("Origin", "https://elsewhere.example") // public: any origin may read it
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(b)
			var prm struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
				ScopesSupported      []string `json:"scopes_supported"`
			}
			if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &prm) != nil {
				t.Fatalf("GET %s = %s %s", p, resp.Status, body)
			}
			if prm.Resource != resource || !slices.Equal(prm.AuthorizationServers, []string{as.Issuer}) || !slices.Equal(prm.ScopesSupported, []string{"mcp"}) {
				t.Errorf("GET %s = %+v; want resource %s, authorization_servers [%s], scopes_supported [mcp]", p, prm, resource, as.Issuer)
			}
		}
	})

	t.Run("no token", func(t *testing.T) {
		resp, _ := initializeWith(t, gw.base, "")
		want := `Bearer resource_metadata="` + gw.base + `/.well-known/oauth-protected-resource/mcp", scope="mcp"`
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("initialize without a token = %s, WWW-Authenticate %q; want 401, %q", resp.Status, resp.Header.Get("WWW-Authenticate"), want)
		}
	})

	t.Run("valid on every transport", func(t *testing.T) {
		for _, kind := range []string{"streamable", "sse", "ws"} {
			cs, err := connectAs(t, gw.base, kind, good)
			if err != nil {
				t.Fatalf("%s: connect with a valid token: %v", kind, err)
			}
			if got := textOf(call(t, cs, "mcp_fx_echo", map[string]any{"text": "hi"})); got != "hi" {
				t.Errorf("%s: echo = %q", kind, got)
			}
		}
		for _, kind := range []string{"sse", "ws"} {
			if _, err := connectAs(t, gw.base, kind, "not-a-token"); err == nil {
				t.Errorf("%s: connected with a bad token", kind)
			}
		}
	})

	other := testauth.NewKey()
	now := time.Now()
	claims := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": as.Issuer, "aud": resource, "sub": "alice", "scope": "mcp", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		if change != nil {
			change(c)
		}
		return c
	}
	mint := func(c jwt.MapClaims) string {
		tok, err := as.Mint(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	t.Run("key rotation", func(t *testing.T) {
		before := as.JWKSFetches()
		kid := as.RotateKey()
		rotated := mint(claims(nil))
		tokens = append(tokens, rotated)
		if resp, body := initializeWith(t, gw.base, rotated); resp.StatusCode != 200 {
			t.Errorf("a token signed by the new key %s = %s %s; want 200 after one refetch", kid, resp.Status, body)
		}
		// A flood of made-up key ids refetches the set once in the
		// limiter's interval, not once each (the first waits for it, the
		// others are refused at once), and each is refused.
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				tok, _ := testauth.MintWith(other, fmt.Sprintf("made-up-%d", i), claims(nil))
				if resp, _ := initializeWith(t, gw.base, tok); resp.StatusCode != 401 {
					t.Errorf("made-up kid: %s, want 401", resp.Status)
				}
			})
		}
		wg.Wait()
		if n := as.JWKSFetches() - before; n != 2 {
			t.Errorf("JWKS fetched %d times for a rotation and 5 made-up key ids at once; want 2", n)
		}
		if !strings.Contains(gw.log.String(), "made-up-") {
			t.Errorf("the log does not name the unknown key ids:\n%s", gw.log.String())
		}
	})

	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	hmac, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(nil)).SignedString([]byte("k1"))
	badSig, _ := testauth.MintWith(other, "k1", claims(nil))
	for _, tc := range []struct{ name, tok, reason string }{
		{"wrong issuer", mint(claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), "invalid issuer"},
		{"wrong audience", mint(claims(func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" })), "audience"},
		{"expired", mint(claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), "token is expired"},
		{"not yet valid", mint(claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })), "token is not valid yet"},
		{"no expiry", mint(claims(func(c jwt.MapClaims) { delete(c, "exp") })), "exp claim is required"},
		{"alg none", none, "signing method none is invalid"},
		{"HMAC", hmac, "signing method HS256 is invalid"},
		{"bad signature", badSig, "verification error"},
		{"garbage", "a.b.c", "token is malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tokens = append(tokens, tc.tok)
			resp, body := initializeWith(t, gw.base, tc.tok)
			if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer error="invalid_token", resource_metadata=`) {
				t.Errorf("initialize = %s, WWW-Authenticate %q; want 401 invalid_token", resp.Status, resp.Header.Get("WWW-Authenticate"))
			}
			if !strings.Contains(body, tc.reason) || !strings.Contains(gw.log.String(), tc.reason) {
				t.Errorf("answer %q and log:\n%s\nwant the reason %q in both", body, gw.log.String(), tc.reason)
			}
		})
	}

	t.Run("insufficient scope", func(t *testing.T) {
		narrow := token(t, as, as.ClientID, as.ClientSecret, resource, "other")
		tokens = append(tokens, narrow)
		resp, _ := initializeWith(t, gw.base, narrow)
		want := `Bearer error="insufficient_scope", resource_metadata="` + gw.base + `/.well-known/oauth-protected-resource/mcp", scope="mcp"`
		if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("initialize without the scope = %s, WWW-Authenticate %q; want 403, %q", resp.Status, resp.Header.Get("WWW-Authenticate"), want)
		}
	})

	// The canary: no token the test used reaches the log.
	logged := gw.log.String()
	for _, tok := range tokens {
		for _, part := range strings.Split(tok, ".") {
			if len(part) > 16 && strings.Contains(logged, part) {
				t.Errorf("the log holds part of a token:\n%s", logged)
			}
		}
	}
}

// TestOAuthPolicy: [gateway.auth.policy] per client, through the gateway
// with real tokens: a client sees and may call only what its rules grant
// (a hidden tool, prompt or resource fails as one that does not exist);
// the owner's auth_token sees everything; no client's token reaches an
// upstream (an HTTP upstream records every Authorization it is sent).
func TestOAuthPolicy(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true, Scopes: []string{"mcp"},
		Clients: map[string]string{"bob": "bob-secret-1", "ops": "ops-secret-1"},
		Claims: func(id string) map[string]any {
			if id == "ops" {
				return map[string]any{"groups": []any{"ops", "eng"}}
			}
			return nil
		}})

	var mu sync.Mutex
	var upstreamAuth []string
	up := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "hello"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
	})
	sh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	upTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		upstreamAuth = append(upstreamAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		sh.ServeHTTP(w, r)
	}))
	t.Cleanup(upTS.Close)
	web := config.Server{ID: "web", Transport: config.TransportHTTP, URL: upTS.URL, AllowLocalEndpoint: true, Timeout: time.Minute, ConnectTimeout: 30 * time.Second}

	policy := []config.AuthPolicy{
		{Scope: "tools:pub", Servers: []string{"pub", "web"}},
		{Claims: map[string]string{"groups": "ops"}, Tools: []string{"mcp_secret_echo"}},
	}
	// secret first: the resources both fixtures offer are its (first wins).
	gw := serveOAuth(t, as, []config.Server{fixture(t, "secret"), fixture(t, "pub"), web}, policy, "owner-token-5ae1")
	resource := gw.base + "/mcp"
	bob := token(t, as, "bob", "bob-secret-1", resource, "mcp", "tools:pub")
	ops := token(t, as, "ops", "ops-secret-1", resource, "mcp")
	nobody := token(t, as, as.ClientID, as.ClientSecret, resource, "mcp")
	ctx := context.Background()

	for _, kind := range []string{"streamable", "sse", "ws"} {
		t.Run(kind, func(t *testing.T) {
			cs, err := connectAs(t, gw.base, kind, bob)
			if err != nil {
				t.Fatal(err)
			}
			names := toolNames(t, cs)
			if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp_secret_") }) ||
				!slices.Contains(names, "mcp_pub_echo") || !slices.Contains(names, "mcp_web_hello") {
				t.Errorf("bob's tools = %v; want pub's and web's, none of secret's", names)
			}
			_, hidden := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_secret_echo", Arguments: map[string]any{"text": "x"}})
			_, missing := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_nothing_here", Arguments: map[string]any{"text": "x"}})
			if hidden == nil || missing == nil || strings.ReplaceAll(hidden.Error(), "mcp_secret_echo", "N") != strings.ReplaceAll(missing.Error(), "mcp_nothing_here", "N") {
				t.Errorf("calling a hidden tool: %v; an unknown one: %v; want the same error", hidden, missing)
			}
			if got := textOf(call(t, cs, "mcp_web_hello", map[string]any{})); got != "hello" {
				t.Errorf("web hello = %q", got)
			}
			ps, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps.Prompts {
				if strings.HasPrefix(p.Name, "mcp_secret_") {
					t.Errorf("bob lists prompt %s", p.Name)
				}
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp_secret_greet", Arguments: map[string]string{"name": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown prompt") {
				t.Errorf("bob gets secret's prompt: %v; want unknown prompt", err)
			}
			rs, err := cs.ListResources(ctx, nil)
			if err != nil || len(rs.Resources) != 0 {
				t.Errorf("bob's resources = %v, %v; want none (they are secret's)", rs, err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static/1"}); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("bob reads secret's resource: %v; want not found", err)
			}
		})
	}

	t.Run("claims and tool patterns", func(t *testing.T) {
		cs, err := connectAs(t, gw.base, "streamable", ops)
		if err != nil {
			t.Fatal(err)
		}
		if names := toolNames(t, cs); !slices.Equal(names, []string{"mcp_secret_echo"}) {
			t.Errorf("ops's tools = %v; want [mcp_secret_echo]", names)
		}
		if got := textOf(call(t, cs, "mcp_secret_echo", map[string]any{"text": "ok"})); got != "ok" {
			t.Errorf("ops echo = %q", got)
		}
	})

	t.Run("no rule, nothing", func(t *testing.T) {
		cs, err := connectAs(t, gw.base, "streamable", nobody)
		if err != nil {
			t.Fatal(err)
		}
		if names := toolNames(t, cs); len(names) != 0 {
			t.Errorf("a token no rule matches lists %v; want nothing", names)
		}
	})

	t.Run("owner", func(t *testing.T) {
		cs, err := connectAs(t, gw.base, "streamable", "owner-token-5ae1")
		if err != nil {
			t.Fatal(err)
		}
		names := toolNames(t, cs)
		if !slices.Contains(names, "mcp_secret_echo") || !slices.Contains(names, "mcp_pub_echo") {
			t.Errorf("the owner's tools = %v; want every server's", names)
		}
	})

	mu.Lock()
	defer mu.Unlock()
	if len(upstreamAuth) == 0 {
		t.Fatal("the upstream was never reached")
	}
	for _, a := range upstreamAuth {
		if a != "" {
			t.Errorf("the upstream was sent Authorization %q; want none (no token passthrough)", a)
		}
	}
	for _, tok := range []string{bob, ops, nobody, "owner-token-5ae1"} {
		if strings.Contains(gw.log.String(), tok) {
			t.Errorf("the log holds a token")
		}
	}
}
