package guard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/time/rate"

	"github.com/switchboardmcp/switchboard/clientaddr"
)

// OAuthOptions makes the guarded listener an OAuth 2.1 protected resource
// (the MCP authorization spec, RFC 9728): it publishes its protected
// resource metadata, and every request needs a JWT access token of Issuer
// for Audience. See [Options.OAuth].
type OAuthOptions struct {
	// Issuer is the authorization server's issuer identifier; a token's
	// iss must equal it.
	Issuer string
	// Resource is the gateway's resource identifier: the URL of its /mcp
	// as clients reach it. Required.
	Resource string
	// Audience must be in a token's aud; "" means Resource.
	Audience string
	// Scopes are required of every token: without one, 403 with error
	// "insufficient_scope".
	Scopes []string
	// AdminScope, when set, is the scope that lets a token use the
	// management faces too ([AccessAdmin]: the REST API, /metrics), where
	// its grant still limits what it sees. "" lets no OAuth token in
	// there.
	AdminScope string
	// JWKSURL is where the issuer's keys are; "" means the jwks_uri of its
	// metadata (RFC 8414, else OpenID Connect discovery), fetched on the
	// first token.
	JWKSURL string
	// HTTPClient fetches the metadata and the keys: the guarded client
	// (oauth.GuardedClient), as for every URL Switchboard dials. nil means
	// http.DefaultClient, for tests only.
	HTTPClient *http.Client
	// Leeway is the clock skew allowed on exp, nbf and iat; 0 means
	// [DefaultLeeway].
	Leeway time.Duration
}

// DefaultLeeway is the clock skew a token's times are allowed by default:
// small, as a token is short-lived, but enough for servers whose clocks
// drift a little.
const DefaultLeeway = 30 * time.Second

// jwtAlgorithms are the signatures a token may carry: asymmetric ones only.
// "none" never verifies, and an HMAC algorithm would let a token be signed
// with the issuer's public key taken as a shared secret.
var jwtAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// The bounds on fetching the issuer's keys. A token naming a key the
// gateway does not know refetches the set, at most once every
// unknownKIDEvery: a flood of made-up key ids costs a fetch every 10 s,
// and a key rotation is picked up by its first token, which waits for the
// limiter rather than being refused (a longer interval than the wait would
// let such a flood keep a new key refused). jwksFetchWait bounds that wait
// and the fetch together.
const (
	unknownKIDEvery = 10 * time.Second
	jwksFetchWait   = 15 * time.Second
	jwksRefresh     = time.Hour
	discoveryRetry  = 10 * time.Second
)

// verifier checks access tokens. Its keys are fetched on first use, and
// refreshed on its context (the gateway's): Close stops the refresh.
type verifier struct {
	o   OAuthOptions
	ctx context.Context
	log *slog.Logger

	mu      sync.Mutex
	keys    keyfunc.Keyfunc
	tried   time.Time
	lastErr error
}

func newVerifier(ctx context.Context, o OAuthOptions, log *slog.Logger) *verifier {
	if o.Audience == "" {
		o.Audience = o.Resource
	}
	if o.Leeway <= 0 {
		o.Leeway = DefaultLeeway
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	} else {
		// The client is the gateway's: its keep-alive connections to the
		// issuer end with it.
		context.AfterFunc(ctx, o.HTTPClient.CloseIdleConnections)
	}
	return &verifier{o: o, ctx: ctx, log: log}
}

// keyfunc returns the key set, fetching it the first time (and again, at
// most every discoveryRetry, while that fails).
func (v *verifier) keyfunc(ctx context.Context) (keyfunc.Keyfunc, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys != nil {
		return v.keys, nil
	}
	if !v.tried.IsZero() && time.Since(v.tried) < discoveryRetry {
		return nil, v.lastErr
	}
	v.tried = time.Now()
	v.keys, v.lastErr = v.fetchKeys(ctx)
	if v.lastErr != nil {
		v.log.Warn("gateway.auth: cannot get the issuer's signing keys", "issuer", v.o.Issuer, "err", v.lastErr)
	}
	return v.keys, v.lastErr
}

func (v *verifier) fetchKeys(ctx context.Context) (keyfunc.Keyfunc, error) {
	jwksURL := v.o.JWKSURL
	if jwksURL == "" {
		ctx, cancel := context.WithTimeout(ctx, jwksFetchWait)
		defer cancel()
		var err error
		if jwksURL, err = discoverJWKS(ctx, v.o.Issuer, v.o.HTTPClient); err != nil {
			return nil, err
		}
	}
	no := false
	return keyfunc.NewDefaultOverrideCtx(v.ctx, []string{jwksURL}, keyfunc.Override{
		Client:                    v.o.HTTPClient,
		HTTPTimeout:               jwksFetchWait,
		NoErrorReturnFirstHTTPReq: &no,
		RateLimitWaitMax:          jwksFetchWait,
		RefreshInterval:           jwksRefresh,
		RefreshUnknownKID:         rate.NewLimiter(rate.Every(unknownKIDEvery), 1),
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				v.log.Warn("gateway.auth: refreshing the issuer's signing keys", "jwks_url", u, "err", err)
			}
		},
	})
}

// discoverJWKS finds the issuer's jwks_uri in its authorization server
// metadata (RFC 8414), else its OpenID Connect discovery document; either
// must name the issuer itself.
func discoverJWKS(ctx context.Context, issuer string, c *http.Client) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", fmt.Errorf("issuer %q: %v", issuer, err)
	}
	p := strings.TrimSuffix(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	var errs []error
	for _, m := range []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	} {
		meta, err := oauthex.GetAuthServerMeta(ctx, m, issuer, c)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", m, err))
		case meta == nil:
			continue // 4xx: not there
		case meta.JWKSURI == "":
			return "", fmt.Errorf("%s names no jwks_uri; set [gateway.auth] jwks_url", m)
		default:
			return meta.JWKSURI, nil
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("discovering the issuer's metadata: %w", errors.Join(errs...))
	}
	return "", fmt.Errorf("issuer %s publishes no authorization server metadata; set [gateway.auth] jwks_url", issuer)
}

// verify is the auth.TokenVerifier: the token's signature by one of the
// issuer's keys, with an allowed algorithm; exp (required) and nbf, with
// the leeway; iss; aud containing the audience. A refusal wraps
// auth.ErrInvalidToken and says why, never quoting the token.
//
// A token for resource (a named endpoint's own, when not "") is accepted
// too: the guard passes the resource of the endpoint whose route r is for.
func (v *verifier) verify(ctx context.Context, token string, r *http.Request, resource string) (*auth.TokenInfo, error) {
	ti, err := v.check(ctx, token, resource)
	if err != nil {
		v.log.Info("gateway.auth: refused a token", "reason", err.Error(), "remote", clientaddr.String(r), "path", r.URL.Path)
	}
	return ti, err
}

func (v *verifier) check(ctx context.Context, token, resource string) (*auth.TokenInfo, error) {
	kf, err := v.keyfunc(ctx)
	if err != nil {
		// Not the client's fault: 500, not a 401 that would send it to
		// sign in again.
		return nil, fmt.Errorf("cannot check tokens: the issuer's signing keys are unavailable")
	}
	claims := jwt.MapClaims{}
	_, err = jwt.NewParser(
		jwt.WithValidMethods(jwtAlgorithms),
		jwt.WithIssuer(v.o.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(v.o.Leeway),
		jwt.WithIssuedAt(),
	).ParseWithClaims(token, claims, kf.KeyfuncCtx(ctx))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	aud, _ := claims.GetAudience()
	if !oauthex.MatchesResource(aud, v.o.Audience) && (resource == "" || !oauthex.MatchesResource(aud, resource)) {
		if resource != "" {
			return nil, fmt.Errorf("%w: audience %q is neither this gateway's (%s) nor this endpoint's (%s)", auth.ErrInvalidToken, []string(aud), v.o.Audience, resource)
		}
		return nil, fmt.Errorf("%w: audience %q is not this gateway's (%s)", auth.ErrInvalidToken, []string(aud), v.o.Audience)
	}
	exp, _ := claims.GetExpirationTime()
	sub, _ := claims.GetSubject()
	ti := &auth.TokenInfo{
		Scopes:     tokenScopes(claims),
		Expiration: exp.Time,
		UserID:     cmp.Or(sub, claimString(claims, "client_id"), claimString(claims, "azp")),
		Extra:      map[string]any{"claims": map[string]any(claims)},
	}
	return ti, nil
}

func claimString(c jwt.MapClaims, k string) string {
	s, _ := c[k].(string)
	return s
}

// tokenScopes reads a token's scopes: "scope" as a space-separated string
// (RFC 9068), or "scp" as a list or a string (as some issuers write it).
func tokenScopes(c jwt.MapClaims) []string {
	if s, ok := c["scope"].(string); ok {
		return strings.Fields(s)
	}
	switch s := c["scp"].(type) {
	case string:
		return strings.Fields(s)
	case []any:
		var out []string
		for _, e := range s {
			if e, ok := e.(string); ok {
				out = append(out, e)
			}
		}
		return out
	}
	return nil
}

// resourceMetadataURL is where the metadata of resource is published: the
// well-known path with the resource's path after it (RFC 9728 §3.1).
func resourceMetadataURL(resource string) (string, string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("guard: OAuth resource %q is not an absolute URL", resource)
	}
	p := "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + p, p, nil
}

// oauthGuard is the handler's OAuth half: the metadata documents, and the
// token check in front of what it protects.
type oauthGuard struct {
	o        OAuthOptions
	v        *verifier
	metaURL  string
	metaPath string
	prm      http.Handler
}

func newOAuthGuard(ctx context.Context, o OAuthOptions, log *slog.Logger) (*oauthGuard, error) {
	if o.Issuer == "" || o.Resource == "" {
		return nil, errors.New("guard: OAuth needs an issuer and a resource")
	}
	metaURL, metaPath, err := resourceMetadataURL(o.Resource)
	if err != nil {
		return nil, err
	}
	v := newVerifier(ctx, o, log)
	og := &oauthGuard{o: v.o, v: v, metaURL: metaURL, metaPath: metaPath}
	og.prm = og.metadata(o.Resource, o.Scopes, "Switchboard")
	return og, nil
}

// metadata serves the protected resource metadata of resource (the
// gateway's, or a named endpoint's), whose tokens need scopes.
func (og *oauthGuard) metadata(resource string, scopes []string, name string) http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{og.o.Issuer},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           name,
	})
}

// metadataPaths are where the protected resource metadata is served: the
// path-suffixed form RFC 9728 defines for the resource, and the bare
// well-known path clients also try.
func (og *oauthGuard) metadataPaths() []string {
	paths := []string{"/.well-known/oauth-protected-resource"}
	if og.metaPath != paths[0] {
		paths = append(paths, og.metaPath)
	}
	return paths
}

// challenge is the WWW-Authenticate of a refusal with status (RFC 6750
// §3): it points at the metadata (metaURL: the gateway's, or a named
// endpoint's), says "invalid_token" on a 401 when a
// token came and "insufficient_scope" on a 403, with the scopes needed.
func (og *oauthGuard) challenge(metaURL string, status int, hasToken bool, scopes []string) string {
	params := []string{fmt.Sprintf("resource_metadata=%q", metaURL)}
	switch {
	case status == http.StatusForbidden:
		params = append([]string{`error="insufficient_scope"`}, params...)
	case hasToken:
		params = append([]string{`error="invalid_token"`}, params...)
	}
	if len(scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
	}
	return "Bearer " + strings.Join(params, ", ")
}

// hasScope reports whether a token carries scope.
func hasScope(ti *auth.TokenInfo, scope string) bool { return slices.Contains(ti.Scopes, scope) }
