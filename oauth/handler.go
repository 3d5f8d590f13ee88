package oauth

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/netguard"
)

// ErrLoginRequired matches a [LoginRequiredError].
var ErrLoginRequired = errors.New("login required")

// A LoginRequiredError is a server that needs an interactive login (or a
// wider one, for more scopes) where none can happen: a start or a call.
type LoginRequiredError struct {
	Server string
	// Reason says why: no token stored, the refresh refused, more scopes
	// asked for.
	Reason string
}

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("%s: sign in with: switchboard auth login %s", e.Reason, e.Server)
}

func (e *LoginRequiredError) Is(target error) bool { return target == ErrLoginRequired }

// ErrLoginFailed matches a [LoginFailedError].
var ErrLoginFailed = errors.New("sign-in failed")

// A LoginFailedError is a browser sign-in that ran and failed: its
// callback was refused (a state not the sign-in's, an iss not its
// authorization server's), the authorization server refused it or does
// not offer PKCE with S256, or the code could not be exchanged. Nothing
// was stored; signing in again right away, unasked, would open another
// page to fail the same way, so the handler that failed returns it again.
type LoginFailedError struct {
	Server string
	Err    error
}

func (e *LoginFailedError) Error() string {
	return fmt.Sprintf("signing in to %s failed: %v", e.Server, e.Err)
}

func (e *LoginFailedError) Unwrap() error { return e.Err }

func (e *LoginFailedError) Is(target error) bool { return target == ErrLoginFailed }

// Options configures [NewHandler].
type Options struct {
	// Server is the server's id, for messages.
	Server string
	// Tokens is where tokens are loaded from and stored. Required for the
	// authorization code grant.
	Tokens *Tokens
	// HTTPClient makes every OAuth request (discovery, registration, token
	// requests); it should be the guarded client (see [GuardedClient]).
	HTTPClient *http.Client
	// Fetch runs the browser part of an authorization code flow and
	// RedirectURL is where it receives the code (see [Login]). Nil: no
	// flow can run here, and a server that needs one fails with a
	// [LoginRequiredError].
	Fetch       auth.AuthorizationCodeFetcher
	RedirectURL string
	// Log receives what happens (never a token); nil discards.
	Log *slog.Logger
}

// NewHandler returns the go-sdk OAuth handler for a server at resource
// (its URL) configured with c: the go-sdk's
// [auth.AuthorizationCodeHandler] for the authorization code grant, with
// its tokens loaded from and written back to o.Tokens, or the go-sdk's
// [extauth.ClientCredentialsHandler] for client_credentials.
func NewHandler(resource string, c *config.OAuth, o Options) (auth.OAuthHandler, error) {
	if o.HTTPClient == nil {
		o.HTTPClient = GuardedClient(nil, nil)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if c.Grant == config.GrantClientCredentials {
		return newClientCredentials(c, o)
	}
	if o.Tokens == nil {
		return nil, fmt.Errorf("server %q: no token store for OAuth", o.Server)
	}
	redirect := o.RedirectURL
	if o.Fetch == nil {
		// Nothing will be redirected: the SDK wants a URL all the same.
		redirect = "http://127.0.0.1/callback"
	}
	if err := checkRedirectURL(redirect); err != nil {
		return nil, fmt.Errorf("server %q: %w", o.Server, err)
	}
	h := &handler{resource: resource, opts: o, conf: c}
	rec, err := o.Tokens.Load(resource, c.ClientID)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", o.Server, err)
	}
	if rec != nil {
		h.src = h.newSource(*rec)
	}
	hc := *o.HTTPClient
	hc.Transport = &issuerTap{base: o.HTTPClient.Transport, h: h}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		Client:              &hc,
		RequestRefreshToken: true,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{redirect},
				ClientName:   "Switchboard",
				GrantTypes:   []string{"authorization_code", "refresh_token"},
			},
		},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if o.Fetch == nil {
				return nil, &LoginRequiredError{Server: o.Server, Reason: "not signed in"}
			}
			return o.Fetch(ctx, args)
		},
		NewTokenSource: h.newTokenSource,
	}
	if c.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: c.ClientID}
		if c.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret}
		}
	}
	if c.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: c.ClientMetadataURL}
	}
	if len(c.Scopes) > 0 {
		scopes := c.Scopes
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	h.sdk, err = auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", o.Server, err)
	}
	return h, nil
}

// checkRedirectURL admits only a loopback http URL (RFC 8252 §7.3): the
// authorization code must come back to this machine, not to a host that
// a configuration or a registration response names.
func checkRedirectURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("redirect URI %q: %v", raw, err)
	}
	a, err := netip.ParseAddr(u.Hostname())
	loopback := err == nil && a.IsLoopback() || netguard.IsLoopbackName(u.Hostname())
	if u.Scheme != "http" || !loopback {
		return fmt.Errorf("redirect URI %q is not a loopback http URL (http://127.0.0.1:PORT/…): the authorization code would leave this machine", raw)
	}
	return nil
}

// handler is the authorization code grant: the go-sdk's handler for the
// flow, and the stored token (refreshed and written back) in front of it.
type handler struct {
	resource string
	opts     Options
	conf     *config.OAuth
	sdk      *auth.AuthorizationCodeHandler

	mu     sync.Mutex
	src    *source // the stored token; nil before a login
	issuer string  // from the last authorization server metadata read
	// noPKCE: the authorization server's metadata, read for a sign-in,
	// does not offer PKCE with S256 (issuerTap).
	noPKCE error
	// failed: a sign-in ran and failed (not cancelled); returned again
	// by Authorize rather than another browser page.
	failed *LoginFailedError
}

var _ auth.OAuthHandler = (*handler)(nil)

func (h *handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	src := h.src
	h.mu.Unlock()
	if src == nil {
		return nil, nil
	}
	return src, nil
}

// Authorize answers a 401 or 403: a 401 for the token just sent is
// answered with one refresh (the request is then retried once, by the
// transport); otherwise a login runs if one can, else the error says
// which command to run.
func (h *handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	src := h.src
	h.mu.Unlock()
	if resp.StatusCode == http.StatusUnauthorized && src != nil && src.sent(req) && src.canRefresh() {
		if err := src.refresh(ctx); err == nil {
			drain(resp)
			return nil
		} else {
			h.opts.Log.Info("OAuth refresh failed", "server", h.opts.Server, "err", err)
		}
	}
	if h.opts.Fetch == nil {
		drain(resp)
		reason := "not signed in"
		switch {
		case resp.StatusCode == http.StatusForbidden:
			reason = "the server asks for more scopes (insufficient_scope)"
			if !strings.Contains(strings.Join(resp.Header.Values("WWW-Authenticate"), " "), "insufficient_scope") {
				return nil // a plain 403: the transport reports it
			}
		case src != nil:
			reason = "the stored login was refused and could not be refreshed"
		}
		return &LoginRequiredError{Server: h.opts.Server, Reason: reason}
	}
	h.mu.Lock()
	failed := h.failed
	h.noPKCE = nil
	h.mu.Unlock()
	if failed != nil {
		// The go-sdk's client asks twice when a connection offers
		// 2026-07-28 (server/discover, then initialize): one page.
		drain(resp)
		return failed
	}
	// The callback's page waits for the outcome of this flow (login.go).
	f := newFlow()
	err := h.sdk.Authorize(context.WithValue(ctx, flowKey{}, f), req, resp)
	if err != nil && ctx.Err() == nil {
		h.mu.Lock()
		if h.noPKCE != nil {
			err = h.noPKCE // the go-sdk's error says less
		}
		h.failed = &LoginFailedError{Server: h.opts.Server, Err: err}
		err = h.failed
		h.mu.Unlock()
	}
	f.finish(err)
	return err
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// newTokenSource is the go-sdk's hook after a code exchange: the token is
// stored, and the source handed back refreshes and writes back.
func (h *handler) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	h.mu.Lock()
	issuer := h.issuer
	h.mu.Unlock()
	if issuer == "" {
		// The 2025-03-26 fallback: no metadata, the server's origin is
		// the authorization server.
		if u, err := url.Parse(cfg.Endpoint.TokenURL); err == nil {
			issuer = netguard.Origin(u)
		}
	}
	rec := Record{
		Resource:     h.resource,
		Issuer:       issuer,
		ClientID:     cfg.ClientID,
		TokenURL:     cfg.Endpoint.TokenURL,
		AuthStyle:    cfg.Endpoint.AuthStyle,
		Scopes:       cfg.Scopes,
		AccessToken:  tok.AccessToken,
		TokenType:    tok.TokenType,
		RefreshToken: tok.RefreshToken,
		Expiry:       tok.Expiry,
		Updated:      h.opts.Tokens.now(),
	}
	if h.conf.ClientSecret == "" {
		// A dynamically registered client's secret: needed to refresh.
		rec.ClientSecret = cfg.ClientSecret
	}
	rec.setToken(tok)
	if err := h.opts.Tokens.Save(rec); err != nil {
		return nil, err
	}
	src := h.newSource(rec)
	h.mu.Lock()
	h.src = src
	h.mu.Unlock()
	h.opts.Log.Info("OAuth login stored", "server", h.opts.Server, "issuer", issuer, "scopes", strings.Join(rec.Scopes, " "))
	return src, nil
}

func (h *handler) newSource(rec Record) *source {
	if h.conf.ClientSecret != "" && rec.ClientID == h.conf.ClientID {
		rec.ClientSecret = h.conf.ClientSecret
	}
	return &source{tokens: h.opts.Tokens, rec: rec, client: h.opts.HTTPClient}
}

// source is a stored token: refreshed when it expires (or when the server
// refuses it), under the store's lock, and written back.
type source struct {
	tokens *Tokens
	client *http.Client

	mu  sync.Mutex
	rec Record
}

func (s *source) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec.fresh(s.tokens.now()) {
		return s.rec.Token(), nil
	}
	if err := s.refreshLocked(context.Background(), false); err != nil {
		return nil, err
	}
	return s.rec.Token(), nil
}

// sent reports whether req carried the current token.
func (s *source) sent(req *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return req.Header.Get("Authorization") == "Bearer "+s.rec.AccessToken
}

func (s *source) canRefresh() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.RefreshToken != ""
}

// refresh gets a new access token although the current one has not
// expired: the server refused it.
func (s *source) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked(ctx, true)
}

// refreshLocked refreshes under the store's lock. Another process may
// have refreshed meanwhile, while this one waited for the lock: the
// refresh token this one holds is then spent (an authorization server
// that rotates refresh tokens refuses it, and may revoke the login), so
// the stored record is taken instead, and refreshed in turn only if its
// own token is due too (or, with force, never: the server refused this
// one's token, not that one).
func (s *source) refreshLocked(ctx context.Context, force bool) error {
	unlock, err := s.tokens.lock(s.rec.Resource)
	if err != nil {
		return err
	}
	defer unlock()
	recs, err := s.tokens.read(s.rec.Resource)
	if err == nil {
		for _, r := range recs {
			if r.key() != s.rec.key() || (r.AccessToken == s.rec.AccessToken && r.RefreshToken == s.rec.RefreshToken) {
				continue
			}
			secret := s.rec.ClientSecret
			s.rec = r
			if s.rec.ClientSecret == "" {
				s.rec.ClientSecret = secret
			}
			if force || s.rec.fresh(s.tokens.now()) {
				return nil
			}
			break
		}
	}
	if s.rec.RefreshToken == "" {
		return errors.New("the access token expired and there is no refresh token")
	}
	hc := *s.client
	hc.Transport = &withResource{base: s.client.Transport, resource: s.rec.Resource}
	ctx = context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, &hc)
	tok, err := s.rec.config().TokenSource(ctx, &oauth2.Token{RefreshToken: s.rec.RefreshToken}).Token()
	if err != nil {
		return fmt.Errorf("refreshing the access token: %w", err)
	}
	s.rec.setToken(tok)
	s.rec.Updated = s.tokens.now() // when it was issued, near enough (Record.fresh)
	s.tokens.redact(&s.rec)
	return s.tokens.saveLocked(s.rec)
}

// issuerTap reads the issuer of each authorization server metadata
// document the go-sdk's handler fetches (the handler checks it against
// the URL it was fetched for): tokens are stored under it.
type issuerTap struct {
	base http.RoundTripper
	h    *handler
}

// maxMetadataBytes bounds a metadata document read twice (here and by the
// go-sdk, which bounds it too).
const maxMetadataBytes = 1 << 20

func (t *issuerTap) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	p := req.URL.Path
	if err != nil || resp.StatusCode != http.StatusOK ||
		!(strings.Contains(p, "/.well-known/oauth-authorization-server") || strings.Contains(p, "/.well-known/openid-configuration")) {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Issuer  string   `json:"issuer"`
		Methods []string `json:"code_challenge_methods_supported"`
	}
	if json.Unmarshal(body, &m) == nil && m.Issuer != "" {
		t.h.mu.Lock()
		t.h.issuer = m.Issuer
		t.h.mu.Unlock()
	}
	if !slices.Contains(m.Methods, "S256") {
		// The MCP authorization spec: a client MUST refuse to proceed
		// without PKCE, and use S256. The go-sdk (v1.8.0) refuses only
		// metadata without the field, and would go on with S256 where
		// the server lists only "plain".
		listed := "lists no code_challenge_methods_supported"
		if m.Methods != nil {
			b, _ := json.Marshal(m.Methods)
			listed = "lists code_challenge_methods_supported " + string(b)
		}
		err := fmt.Errorf("the authorization server %s does not offer PKCE with S256 (its metadata %s %s), which the MCP authorization spec requires: switchboard will not sign in there",
			cmp.Or(m.Issuer, netguard.Origin(req.URL)), req.URL.Redacted(), listed)
		t.h.mu.Lock()
		t.h.noPKCE = err
		t.h.mu.Unlock()
		return nil, err
	}
	return resp, nil
}

// newClientCredentials is the go-sdk's client credentials handler: no
// login, no stored token (a new one is asked for when needed).
func newClientCredentials(c *config.OAuth, o Options) (auth.OAuthHandler, error) {
	if c.PrivateKey != "" {
		h, err := newJWTHandler(c.ClientID, c.PrivateKey, o.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("server %q: oauth.%w", o.Server, err)
		}
		return h, nil
	}
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{
			ClientID:         c.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret},
		},
		HTTPClient: o.HTTPClient,
	})
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", o.Server, err)
	}
	return h, nil
}

// withResource adds the resource indicator (RFC 8707) to a refresh
// request, which golang.org/x/oauth2 sends without it: the MCP
// authorization spec wants it in every token request, so that the token
// is bound to this server.
type withResource struct {
	base     http.RoundTripper
	resource string
}

func (t *withResource) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if req.Method != http.MethodPost || req.Body == nil || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return base.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<10))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err == nil && form.Get("grant_type") == "refresh_token" && form.Get("resource") == "" {
		form.Set("resource", t.resource)
		body = []byte(form.Encode())
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return base.RoundTrip(r)
}
