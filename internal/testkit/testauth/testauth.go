// Package testauth runs, for tests, a real OAuth 2.1 authorization server
// (github.com/go-oauth2/oauth2/v4: authorization code with PKCE, refresh
// tokens, client credentials) on one loopback origin and an MCP server it
// protects on another, each an httptest server on 127.0.0.1:0. The MCP
// server publishes its protected resource metadata (RFC 9728), answers a
// request without a valid token 401 with a WWW-Authenticate that points at
// it, and one whose token lacks a required scope 403 with error
// "insufficient_scope" and the scopes needed (RFC 6750 §3.1, the MCP spec's
// step-up), which the go-sdk's auth.RequireBearerToken never sends: it is
// why the MCP server here checks tokens itself.
// The authorization server approves every request at once (there is no
// user to ask): a test drives the authorization URL with an HTTP client
// and follows the redirect to the client's loopback callback.
package testauth

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-oauth2/oauth2/v4"
	oerrors "github.com/go-oauth2/oauth2/v4/errors"
	"github.com/go-oauth2/oauth2/v4/manage"
	"github.com/go-oauth2/oauth2/v4/models"
	"github.com/go-oauth2/oauth2/v4/server"
	"github.com/go-oauth2/oauth2/v4/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/transport"
)

// Options configures [Start].
type Options struct {
	// AccessTokenExp is how long an access token lives; 0 means an hour.
	// Under ten seconds golang.org/x/oauth2's own check (Token.Valid)
	// takes a token for expired at once; the oauth package renews a short
	// token a quarter of its lifetime early instead. Refresh tokens are
	// rotated at each refresh, and a spent one is refused
	// (RefreshTokenReuses counts the attempts).
	AccessTokenExp time.Duration
	// Scopes are those the MCP server requires (and its metadata lists).
	Scopes []string
	// Metadata, when set, changes the authorization server's metadata
	// before it is served (bad-input tests).
	Metadata func(m map[string]any)
	// PRM, when set, changes the protected resource metadata.
	PRM func(m map[string]any)
	// JWT issues access tokens as JWTs (RFC 9068) signed by an RSA key the
	// server publishes at jwks_uri (/jwks): for a resource server that
	// checks tokens itself, such as the gateway. Otherwise tokens are
	// opaque.
	JWT bool
	// Claims, with JWT, adds claims to the tokens issued to a client.
	Claims func(clientID string) map[string]any
	// Clients are more pre-registered confidential clients, id to secret
	// (client credentials: one per user of a gateway).
	Clients map[string]string
	// KeyClients are pre-registered clients that authenticate with a JWT
	// signed by their private key (private_key_jwt, RFC 7523 §2.2): id to
	// the public key. Their assertions are checked strictly (see
	// checkAssertion) and kept (Assertions).
	KeyClients map[string]crypto.PublicKey
	// Deny makes the user refuse every authorization: the authorization
	// endpoint redirects to the client with error=access_denied.
	Deny bool
}

// Server is the authorization server and the MCP server it protects.
type Server struct {
	// URL is the MCP endpoint (Streamable HTTP); Issuer the authorization
	// server's. SSEURL and WebSocketURL serve the same server over legacy
	// SSE and WebSocket, each its own protected resource.
	URL, SSEURL, WebSocketURL string
	Issuer                    string
	// ClientID and ClientSecret are a pre-registered confidential client.
	ClientID, ClientSecret string

	manager *manage.Manager
	opts    Options

	mu       sync.Mutex
	scopes   []string
	seen     []string // every bearer token the MCP server was sent
	asSeen   []string // every Authorization header the authorization server was sent
	refreshN int
	spent    map[string]int // refresh token -> the refresh grants that presented it
	resource []string       // the resource parameter of each token request
	keys     []signingKey
	jwksN    int

	assertions []string        // every client assertion presented
	jtis       map[string]bool // the jti of every assertion accepted
}

// Start starts both servers; they stop when t ends.
func Start(t testing.TB, o *Options) *Server {
	s, stop := New(o)
	t.Cleanup(stop)
	return s
}

// New starts both servers, for a program or an example without a
// testing.TB; stop stops them.
func New(o *Options) (s *Server, stop func()) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.AccessTokenExp == 0 {
		opts.AccessTokenExp = time.Hour
	}
	s = &Server{ClientID: "switchboard-test", ClientSecret: "test-client-secret-4f1e", opts: opts, scopes: slices.Clone(opts.Scopes)}

	m := manage.NewDefaultManager()
	m.SetAuthorizeCodeTokenCfg(&manage.Config{AccessTokenExp: opts.AccessTokenExp, RefreshTokenExp: 24 * time.Hour, IsGenerateRefresh: true})
	m.SetRefreshTokenCfg(&manage.RefreshingConfig{AccessTokenExp: opts.AccessTokenExp, RefreshTokenExp: 24 * time.Hour, IsGenerateRefresh: true, IsRemoveAccess: true, IsRemoveRefreshing: true})
	m.SetClientTokenCfg(&manage.Config{AccessTokenExp: opts.AccessTokenExp})
	m.MustTokenStorage(store.NewMemoryTokenStore())
	clients := store.NewClientStore()
	clients.Set(s.ClientID, &models.Client{ID: s.ClientID, Secret: s.ClientSecret, Domain: "http://127.0.0.1"})
	for id, secret := range opts.Clients {
		clients.Set(id, &models.Client{ID: id, Secret: secret, Domain: "http://127.0.0.1"})
	}
	for id := range opts.KeyClients {
		clients.Set(id, &models.Client{ID: id, Domain: "http://127.0.0.1"}) // no secret: clientInfo checks the key
	}
	if opts.JWT {
		s.keys = []signingKey{newSigningKey("k1")}
		m.MapAccessGenerate(jwtAccess{s})
	}
	m.MapClientStorage(clients)
	// RFC 8252 §7.3: a loopback redirect URI may use any port.
	m.SetValidateURIHandler(func(base, redirect string) error {
		b, err1 := url.Parse(base)
		r, err2 := url.Parse(redirect)
		if err1 != nil || err2 != nil || b.Scheme != r.Scheme || b.Hostname() != r.Hostname() {
			return oerrors.ErrInvalidRedirectURI
		}
		return nil
	})
	s.manager = m

	srv := server.NewDefaultServer(m)
	srv.SetAllowedGrantType(oauth2.AuthorizationCode, oauth2.Refreshing, oauth2.ClientCredentials)
	srv.SetClientInfoHandler(s.clientInfo)
	srv.SetUserAuthorizationHandler(func(w http.ResponseWriter, r *http.Request) (string, error) {
		if opts.Deny {
			return "", oerrors.ErrAccessDenied
		}
		return "user-1", nil
	})
	srv.SetAuthorizeScopeHandler(func(w http.ResponseWriter, r *http.Request) (string, error) { return r.FormValue("scope"), nil })

	as := http.NewServeMux()
	as.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		meta := map[string]any{
			"issuer":                                s.Issuer,
			"authorization_endpoint":                s.Issuer + "/authorize",
			"token_endpoint":                        s.Issuer + "/token",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
			"scopes_supported":                      opts.Scopes,
		}
		if opts.JWT {
			meta["jwks_uri"] = s.Issuer + "/jwks"
		}
		if len(opts.KeyClients) > 0 {
			meta["token_endpoint_auth_methods_supported"] = []string{"client_secret_basic", "private_key_jwt"}
		}
		if opts.Metadata != nil {
			opts.Metadata(meta)
		}
		writeJSON(w, meta)
	})
	as.HandleFunc("GET /jwks", s.serveJWKS)
	as.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		if err := srv.HandleAuthorizeRequest(w, r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	as.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		s.mu.Lock()
		s.asSeen = append(s.asSeen, r.Header.Get("Authorization"))
		s.resource = append(s.resource, r.PostForm.Get("resource"))
		if r.PostForm.Get("grant_type") == "refresh_token" {
			s.refreshN++
			if s.spent == nil {
				s.spent = map[string]int{}
			}
			s.spent[r.PostForm.Get("refresh_token")]++
		}
		s.mu.Unlock()
		srv.HandleTokenRequest(w, r)
	})
	ash := httptest.NewServer(as)
	s.Issuer = ash.URL

	mcpSrv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(mcpSrv, &mcp.Tool{Name: "whoami", Description: "says who called"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "user-1"}}}, nil, nil
	})
	getServer := func(*http.Request) *mcp.Server { return mcpSrv }
	streamable := mcp.NewStreamableHTTPHandler(getServer, nil)
	rs := http.NewServeMux()
	// One protected resource per endpoint: /mcp (Streamable HTTP), /sse
	// (legacy SSE) and /ws (WebSocket, whose handshake is an http request).
	rs.HandleFunc("GET /.well-known/oauth-protected-resource/{endpoint}", func(w http.ResponseWriter, r *http.Request) {
		prm := map[string]any{
			"resource":              strings.TrimSuffix(s.URL, "/mcp") + "/" + r.PathValue("endpoint"),
			"authorization_servers": []string{s.Issuer},
			"scopes_supported":      s.Scopes(),
		}
		if opts.PRM != nil {
			opts.PRM(prm)
		}
		writeJSON(w, prm)
	})
	rs.Handle("/mcp", s.protect("mcp", streamable))
	sse := mcp.NewSSEHandler(getServer, nil)
	rs.Handle("/sse", s.protect("sse", sse))
	ws := transport.NewWebSocketHandler(getServer, nil)
	rs.Handle("/ws", s.protect("ws", ws))
	rsh := httptest.NewServer(rs)
	s.URL = rsh.URL + "/mcp"
	s.SSEURL = rsh.URL + "/sse"
	s.WebSocketURL = "ws" + strings.TrimPrefix(rsh.URL, "http") + "/ws"
	return s, func() { rsh.Close(); ws.Close(); ash.Close() }
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// protect answers 401 without a valid token and 403 insufficient_scope
// for one without every required scope, as the MCP authorization spec
// says.
func (s *Server) protect(endpoint string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		meta := strings.TrimSuffix(s.URL, "/mcp") + "/.well-known/oauth-protected-resource/" + endpoint
		scopes := s.Scopes()
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok {
			s.mu.Lock()
			s.seen = append(s.seen, tok)
			s.mu.Unlock()
		}
		ti, err := s.manager.LoadAccessToken(r.Context(), tok)
		if !ok || err != nil || ti.GetAccessCreateAt().Add(ti.GetAccessExpiresIn()).Before(time.Now()) {
			ch := fmt.Sprintf(`Bearer resource_metadata=%q`, meta)
			if len(scopes) > 0 {
				ch += fmt.Sprintf(`, scope=%q`, strings.Join(scopes, " "))
			}
			w.Header().Set("WWW-Authenticate", ch)
			http.Error(w, "invalid or missing token", http.StatusUnauthorized)
			return
		}
		have := strings.Fields(ti.GetScope())
		for _, sc := range scopes {
			if !slices.Contains(have, sc) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, strings.Join(scopes, " "), meta))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Scopes returns the scopes the MCP server requires now.
func (s *Server) Scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.scopes)
}

// RequireScopes changes the scopes the MCP server requires (step-up).
func (s *Server) RequireScopes(scopes ...string) {
	s.mu.Lock()
	s.scopes = scopes
	s.mu.Unlock()
}

// Refreshes is how many refresh_token grants the server was asked for.
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshN
}

// RefreshTokenReuses is how many refresh_token grants presented a refresh
// token that an earlier grant had presented already: the server rotates
// refresh tokens and refuses a spent one (invalid_grant), as an
// authorization server that detects reuse does; a client that shares its
// login across processes must spend each once.
func (s *Server) RefreshTokenReuses() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.spent {
		n += c - 1
	}
	return n
}

// RevokeAccessTokens revokes every access token the MCP server has been
// sent: it refuses them (401) from now on, and a client must refresh.
// Refresh tokens stay valid.
func (s *Server) RevokeAccessTokens() {
	for _, tok := range s.TokensSeen() {
		s.manager.RemoveAccessToken(context.Background(), tok)
	}
}

// Resources are the resource parameters of the token requests, in order.
func (s *Server) Resources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resource)
}

// TokensSeen are the bearer tokens the MCP server was sent.
func (s *Server) TokensSeen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// Authorize visits an authorization URL as a browser whose user approves
// at once would, and then the redirect it is given (the client's loopback
// callback), returning the callback's answer.
func Authorize(ctx context.Context, authURL string) error {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, "GET", authURL, nil)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || loc == "" {
		return fmt.Errorf("authorization endpoint answered %s, not a redirect", resp.Status)
	}
	req, _ = http.NewRequestWithContext(ctx, "GET", loc, nil)
	resp, err = c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("callback answered %s", resp.Status)
	}
	return nil
}
