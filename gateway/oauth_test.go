package gateway_test

import (
	"bytes"
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
	"github.com/switchboardmcp/switchboard/internal/testauth"
	"github.com/switchboardmcp/switchboard/transport"
)

// syncBuffer is a log a test reads while the gateway writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// oauthGateway is a gateway over servers protected by as, on loopback,
// its resource the URL of its /mcp; log is what it logged.
type oauthGateway struct {
	g    *gateway.Gateway
	base string
	log  *syncBuffer
}

func serveOAuth(t *testing.T, as *testauth.Server, servers []config.Server, policy []config.AuthPolicy, ownerToken string) *oauthGateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, err := gateway.Start(ctx, servers, nil, &gateway.Options{Policy: policy, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	ts.Config.Handler = g.Handler(&gateway.HTTPOptions{
		Loopback:  true,
		AuthToken: ownerToken,
		Logger:    logger,
		OAuth:     &gateway.OAuthOptions{Issuer: as.Issuer, Resource: base + "/mcp", Scopes: []string{"mcp"}},
	})
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
