package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
)

// loopback admits the test's authorization server, on another port than
// the MCP server's allow_local_endpoint admits.
var loopback = &netguard.Network{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

type oauthEnv struct {
	as     *testauth.Server
	vault  secret.Vault
	tokens *oauth.Tokens
	srv    config.Server
	logs   *interop.LogBuffer

	watchers []*host.Watcher // one per host started, for the events canary
}

// eventsText is every event the env's hosts published so far, as JSON
// and as the status's own event form (errors as text).
func (e *oauthEnv) eventsText(t *testing.T) string {
	t.Helper()
	var all []any
	for _, w := range e.watchers {
		for _, ev := range drainEvents(w) {
			all = append(all, ev, ev.Status.Event())
		}
	}
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + fmt.Sprintf("%+v", all)
}

func newOAuthEnv(t *testing.T, o *testauth.Options) *oauthEnv {
	t.Helper()
	as := testauth.Start(t, o)
	dir := t.TempDir()
	v, err := secret.OpenStore(&secret.StoreOptions{Dir: dir, Backend: secret.BackendFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Set("as_secret", as.ClientSecret); err != nil {
		t.Fatal(err)
	}
	return &oauthEnv{
		as:     as,
		vault:  v,
		tokens: &oauth.Tokens{Vault: v, LockPath: dir + "/oauth.lock"},
		srv: config.Server{ID: "remote", URL: as.URL, AllowLocalEndpoint: true, ConnectTimeout: 20 * time.Second,
			OAuth: &config.OAuth{ClientID: as.ClientID, ClientSecret: "{{secrets.as_secret}}"}},
		logs: &interop.LogBuffer{},
	}
}

// host starts a host of the one server; login says whether a browser
// sign-in may run (as switchboard auth login does), driven by an HTTP
// client through the loopback callback.
func (e *oauthEnv) host(t *testing.T, login bool) (*host.Host, error) {
	t.Helper()
	red := secret.NewRedactor()
	e.tokens.Redactor = red
	opts := &host.Options{
		Secrets:     e.vault,
		Redactor:    red,
		Network:     loopback,
		OAuthTokens: e.tokens,
		Logger:      slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if login {
		l, err := oauth.Listen()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		// Room for a sign-in and a step-up's.
		errc := make(chan error, 4)
		l.Show = func(u string) { go func() { errc <- testauth.Authorize(context.Background(), u) }() }
		opts.OAuthLogin, opts.OAuthRedirectURL = l.Fetch, l.RedirectURL
		t.Cleanup(func() {
			for {
				select {
				case err := <-errc:
					if err != nil {
						t.Errorf("driving the authorization URL: %v", err)
					}
				default:
					return
				}
			}
		})
	}
	h, err := host.New([]config.Server{e.srv}, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.watchers = append(e.watchers, h.Watch(4096))
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h, h.Start(ctx)
}

func callWhoami(t *testing.T, h *host.Host) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.CallTool(ctx, "mcp_remote_whoami", json.RawMessage(`{}`), nil)
	if err == nil && res.IsError {
		err = errors.New("tool error")
	}
	return err
}

// TestOAuthLoginRefreshLogout: a sign-in through the loopback callback is
// stored in the secret store under the resource URL; a later host without
// a browser uses it, refreshing the expired access token and writing the
// new one back; after logout a start says which command to run, once, and
// is not retried in a loop. No token reaches the logs.
func TestOAuthLoginRefreshLogout(t *testing.T) {
	e := newOAuthEnv(t, &testauth.Options{AccessTokenExp: 5 * time.Second, Scopes: []string{"tools"}})

	// No login yet: the start fails saying what to run.
	if _, err := e.host(t, false); err == nil || !strings.Contains(err.Error(), "switchboard auth login remote") {
		t.Fatalf("start before login: %v, want the login command", err)
	}

	h, err := e.host(t, true)
	if err != nil {
		t.Fatalf("start with a login: %v", err)
	}
	if err := callWhoami(t, h); err != nil {
		t.Fatalf("call after login: %v", err)
	}
	h.Close()
	rec, err := e.tokens.Load(e.as.URL, "")
	if err != nil || rec == nil {
		t.Fatalf("no record stored after login: %v", err)
	}
	if rec.Issuer != e.as.Issuer || rec.ClientID != e.as.ClientID || rec.RefreshToken == "" {
		t.Errorf("record: issuer %q client %q refresh token set %v; want %q, %q, true", rec.Issuer, rec.ClientID, rec.RefreshToken != "", e.as.Issuer, e.as.ClientID)
	}
	for i, r := range e.as.Resources() {
		if r != e.as.URL {
			t.Errorf("token request %d: resource %q, want %q", i, r, e.as.URL)
		}
	}

	// A host without a browser: the stored, expired token is refreshed
	// and written back. (Expired by hand: a token of a few seconds is
	// used for most of its life, not renewed at every use.)
	expired := *rec
	expired.Expiry = time.Now().Add(-time.Second)
	if err := e.tokens.Save(expired); err != nil {
		t.Fatal(err)
	}
	before := e.as.Refreshes()
	h2, err := e.host(t, false)
	if err != nil {
		t.Fatalf("start with the stored login: %v", err)
	}
	if err := callWhoami(t, h2); err != nil {
		t.Fatalf("call with the stored login: %v", err)
	}
	if e.as.Refreshes() == before {
		t.Errorf("the expired access token was not refreshed")
	}
	rec2, _ := e.tokens.Load(e.as.URL, "")
	if rec2 == nil || rec2.AccessToken == rec.AccessToken {
		t.Errorf("the refreshed token was not written back")
	}
	h2.Close()

	// The canary: no token the server saw is in the logs.
	for _, tok := range e.as.TokensSeen() {
		if strings.Contains(e.logs.String(), tok) {
			t.Fatalf("an access token is in the logs")
		}
	}

	if n, err := e.tokens.Delete(e.as.URL); err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v; want 1, nil", n, err)
	}
	// An optional server: the host starts, and the server's state and
	// message say what to run.
	e.srv.Optional = true
	h3, err := e.host(t, false)
	if err != nil {
		t.Fatalf("start of an optional server after logout: %v", err)
	}
	st := h3.Servers()[0]
	if st.State != host.StateFailed || st.Err == nil || !strings.Contains(st.Err.Error(), "switchboard auth login remote") {
		t.Errorf("after logout: state %s, error %v; want failed, naming the login command", st.State, st.Err)
	}

	// The canary, for events: every event of the four hosts (states,
	// catalogs, the failures), none holding a token the server saw, nor
	// the stored refresh tokens.
	events := e.eventsText(t)
	if !strings.Contains(events, "switchboard auth login remote") {
		t.Fatalf("the events do not hold the failed start: the canary looked at nothing")
	}
	secrets := append(e.as.TokensSeen(), rec.RefreshToken, rec2.RefreshToken, rec.AccessToken)
	for _, tok := range secrets {
		if tok != "" && strings.Contains(events, tok) {
			t.Errorf("a token is in the host's events")
		}
	}
}

// TestOAuthStepUp: a server that starts requiring a scope the stored
// token lacks answers a call 403 insufficient_scope (RFC 6750 §3.1). A host
// that can sign in asks for the wider scopes and the call goes through; a
// host that cannot (a serve) fails the call once, naming the command to
// run, without the token.
func TestOAuthStepUp(t *testing.T) {
	e := newOAuthEnv(t, &testauth.Options{Scopes: []string{"tools"}})
	h, err := e.host(t, true)
	if err != nil {
		t.Fatalf("start with a login: %v", err)
	}
	if err := callWhoami(t, h); err != nil {
		t.Fatalf("call before the step-up: %v", err)
	}
	e.as.RequireScopes("tools", "admin")

	// No browser: the call fails saying what to run.
	h2, err := e.host(t, false)
	if err == nil {
		err = callWhoami(t, h2)
	}
	if err == nil || !strings.Contains(err.Error(), "insufficient_scope") || !strings.Contains(err.Error(), "switchboard auth login remote") {
		t.Errorf("call needing more scopes without a browser: %v; want insufficient_scope and the login command", err)
	}
	h2.Close()

	// With one: a new authorization for the wider scopes, then the call.
	if err := callWhoami(t, h); err != nil {
		t.Fatalf("call after the step-up: %v", err)
	}
	rec, _ := e.tokens.Load(e.as.URL, e.as.ClientID)
	if rec == nil || !slices.Contains(rec.Scopes, "admin") || !slices.Contains(rec.Scopes, "tools") {
		var got []string
		if rec != nil {
			got = rec.Scopes
		}
		t.Errorf("stored scopes after the step-up = %v, want tools and admin", got)
	}
	for _, tok := range e.as.TokensSeen() {
		if strings.Contains(e.logs.String(), tok) {
			t.Fatalf("an access token is in the logs")
		}
	}
}

// TestOAuthBadInput: metadata that points at a cloud metadata address, an
// authorization server whose metadata names another issuer, protected
// resource metadata for another resource, and a redirect URI that is not
// loopback: each is refused (the go-sdk falls back to the 2025-03-26
// discovery on the server's own origin when the protected resource
// metadata is refused), no browser is sent to the bad address, and no
// token request is made.
func TestOAuthBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts testauth.Options
		// redirect, when set, is the sign-in's redirect URI.
		redirect string
		want     string
	}{
		{
			name: "authorization server at the metadata address",
			opts: testauth.Options{PRM: func(m map[string]any) { m["authorization_servers"] = []string{"http://169.254.169.254/latest"} }},
			want: "no browser here",
		},
		{
			name: "token endpoint at the metadata address",
			opts: testauth.Options{Metadata: func(m map[string]any) { m["token_endpoint"] = "http://169.254.169.254/token" }},
			want: "169.254.169.254",
		},
		{
			name: "issuer of another origin",
			opts: testauth.Options{Metadata: func(m map[string]any) { m["issuer"] = "https://evil.example" }},
			want: "issuer",
		},
		{
			name: "metadata for another resource",
			opts: testauth.Options{PRM: func(m map[string]any) { m["resource"] = "https://evil.example/mcp" }},
			want: "no browser here",
		},
		{
			name:     "redirect URI not loopback",
			redirect: "http://evil.example/callback",
			want:     "not a loopback http URL",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newOAuthEnv(t, &tc.opts)
			redirect := tc.redirect
			if redirect == "" {
				redirect = "http://127.0.0.1:1/callback"
			}
			var visited []string
			h, err := host.New([]config.Server{e.srv}, &host.Options{
				Secrets: e.vault, Network: loopback, OAuthTokens: e.tokens,
				OAuthRedirectURL: redirect,
				OAuthLogin: func(_ context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
					visited = append(visited, a.URL)
					return nil, errors.New("no browser here")
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = h.Start(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("start: %v; want an error naming %q", err, tc.want)
			}
			for _, u := range visited {
				if strings.Contains(u, "169.254") || strings.Contains(u, "evil.example/authorize") {
					t.Errorf("the browser was sent to %s", u)
				}
			}
			if n := len(e.as.Resources()); n != 0 {
				t.Errorf("%d token requests made; want none", n)
			}
		})
	}
}

// TestOAuthOtherTransports: a server on legacy SSE or WebSocket, which the
// go-sdk gives no OAuth handler, signs in through oauth.Transport: the 401
// of the SSE stream's GET or the WebSocket handshake starts the sign-in,
// the token is stored under that endpoint's URL, and a later host without
// a browser connects and calls with it.
func TestOAuthOtherTransports(t *testing.T) {
	for _, tc := range []struct {
		transport config.Transport
		url       func(*testauth.Server) string
	}{
		{config.TransportSSE, func(s *testauth.Server) string { return s.SSEURL }},
		{config.TransportWebSocket, func(s *testauth.Server) string { return s.WebSocketURL }},
	} {
		t.Run(string(tc.transport), func(t *testing.T) {
			e := newOAuthEnv(t, &testauth.Options{Scopes: []string{"tools"}})
			e.srv.Transport, e.srv.URL = tc.transport, tc.url(e.as)
			if _, err := e.host(t, false); err == nil || !strings.Contains(err.Error(), "switchboard auth login remote") {
				t.Fatalf("start before login: %v, want the login command", err)
			}
			h, err := e.host(t, true)
			if err != nil {
				t.Fatalf("start with a login: %v", err)
			}
			if err := callWhoami(t, h); err != nil {
				t.Fatalf("call after login: %v", err)
			}
			h.Close()
			if rec, _ := e.tokens.Load(e.srv.URL, e.as.ClientID); rec == nil {
				t.Fatalf("no login stored under %s", e.srv.URL)
			}
			h2, err := e.host(t, false)
			if err != nil {
				t.Fatalf("start with the stored login: %v", err)
			}
			if err := callWhoami(t, h2); err != nil {
				t.Fatalf("call with the stored login: %v", err)
			}
			for _, tok := range e.as.TokensSeen() {
				if strings.Contains(e.logs.String(), tok) {
					t.Fatalf("an access token is in the logs")
				}
			}
		})
	}
}
