// Package guard is the one check in front of every route of a listener:
// the daemon's mux, where every face (the MCP gateway, the REST API, the
// web UI, /metrics) is mounted, and a gateway served alone
// (gateway.Gateway.Handler). No face has a check of its own to forget.
//
// The guard owns the listener's mux, so a route exists only as
// registered with Guard.Handle, at an Access that says who may use it;
// what matches no route (a 404, a 405) is checked as the strictest. The checks, in order:
//
//  1. the Host check on loopback (DNS rebinding) and the cross-origin
//     check (crossorigin.go: a page of another site), on every route but
//     a public one;
//  2. the credential the route's Access asks for: the owner's auth_token
//     (as a bearer token, or as the session cookie the web UI's login
//     sets, never on the MCP endpoints), or an OAuth access token of the
//     configured issuer (any valid one on the MCP endpoints, which the
//     policy then limits; one with admin_scope on the management faces);
//     on a route of a named MCP endpoint (Guard.HandleEndpoint), also
//     the endpoint's own token, and the endpoint's OAuth scopes
//     (endpoint.go). Where no credential is configured (a loopback
//     listener) every caller is the owner, but an endpoint with a token
//     of its own still asks for it.
//
// A refused request's body is never read. A request that passes has its
// Authorization header removed before any handler sees it, and its body
// bounded in time (BodyTimeout).
package guard

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/clientaddr"
)

// Access is what a route asks of a request, besides the Host and Origin
// checks that every route but a public one passes.
type Access int

const (
	// AccessOwner: the owner only, by [Options.AuthToken] as a bearer
	// token or as the [SessionCookie] a login set; or anyone where no
	// credential is configured (a loopback listener). No OAuth token. The
	// zero value, so that a route nobody classed gets the strictest.
	AccessOwner Access = iota
	// AccessAdmin: the owner, or an OAuth access token that carries
	// [OAuthOptions.AdminScope] (none when it is not set). The handler
	// shows such a caller only what its grant covers (gateway.GrantFor).
	AccessAdmin
	// AccessMCP: the owner by the bearer token alone (an MCP client sends
	// the header; a cookie that a browser sends by itself would open the
	// endpoint to other sites' pages), or any valid OAuth access token,
	// which the policy then limits.
	AccessMCP
	// AccessOpen: anyone, past the Host and cross-origin checks: a login page
	// and the files it loads.
	AccessOpen
	// AccessPublic: anyone, nothing checked: what a load balancer probes
	// and what an OAuth client reads before it has a token (RFC 9728
	// metadata), none of which reveals anything.
	AccessPublic
)

func (a Access) String() string {
	switch a {
	case AccessOwner:
		return "owner"
	case AccessAdmin:
		return "admin"
	case AccessMCP:
		return "mcp"
	case AccessOpen:
		return "open"
	case AccessPublic:
		return "public"
	}
	return "Access(" + strconv.Itoa(int(a)) + ")"
}

// A Route is a pattern registered on a [Guard], with what it asks of a
// request.
type Route struct {
	// Pattern is the http.ServeMux pattern.
	Pattern string
	Access  Access
	// Reason says why an open or public route needs no credential.
	Reason string
	// Endpoint names the MCP endpoint whose route it is, registered with
	// [Guard.HandleEndpoint] ("" for the default one, and for a route of
	// no endpoint).
	Endpoint string

	h  http.Handler
	ep *endpointRules // HandleEndpoint's rules; nil for Handle's routes
}

// Guard is the one check in front of every route of a listener (see the
// file's comment). Make it with [New], register every route with
// [Guard.Handle], and serve it as the listener's handler.
type Guard struct {
	opts  Options
	log   *slog.Logger
	oauth *oauthGuard // nil without OAuth
	mux   *http.ServeMux

	mu     sync.RWMutex
	routes map[string]Route
	tokens map[string][sha256.Size]byte // endpoint name -> its own token's digest (HandleEndpoint)
	// metas are the endpoints' protected resource metadata, by path: what
	// each serves is replaced when its endpoint's rules are (SetEndpoint).
	metas map[string]*atomic.Pointer[http.Handler]
}

// New makes the guard of a listener from the checks of opts:
// AuthToken, OAuth, AllowedOrigins, AllowedHosts, Loopback, BodyTimeout,
// Logger and Local. With OAuth, the protected resource metadata is
// registered at once, at [AccessPublic]. ctx is the guard's lifetime: the
// OAuth issuer's keys are refreshed until it ends. It fails when OAuth
// lacks an issuer or a resource.
func New(ctx context.Context, opts *Options) (*Guard, error) {
	gd := &Guard{mux: http.NewServeMux(), routes: map[string]Route{}, tokens: map[string][sha256.Size]byte{},
		metas: map[string]*atomic.Pointer[http.Handler]{}}
	if opts != nil {
		gd.opts = *opts
	}
	if gd.opts.BodyTimeout <= 0 {
		gd.opts.BodyTimeout = DefaultBodyTimeout
	}
	gd.log = cmp.Or(gd.opts.Logger, slog.New(slog.DiscardHandler))
	if gd.opts.OAuth == nil {
		return gd, nil
	}
	og, err := newOAuthGuard(ctx, *gd.opts.OAuth, gd.log)
	if err != nil {
		return nil, err
	}
	gd.oauth = og
	for _, p := range og.metadataPaths() {
		gd.Handle(p, AccessPublic, "OAuth protected resource metadata (RFC 9728): what a client reads to learn where to get a token, so it has none yet", og.prm)
	}
	return gd, nil
}

// Handle registers h at pattern (an http.ServeMux pattern) with what it
// asks of a request. An open or public route must say why in reason.
// Like http.ServeMux.Handle it panics on a pattern that is invalid or
// conflicts with another.
func (gd *Guard) Handle(pattern string, access Access, reason string, h http.Handler) {
	if (access == AccessOpen || access == AccessPublic) && reason == "" {
		panic(fmt.Sprintf("guard: the %s route %q needs a reason", access, pattern))
	}
	gd.mu.Lock()
	defer gd.mu.Unlock()
	gd.mux.Handle(pattern, h)
	gd.routes[pattern] = Route{Pattern: pattern, Access: access, Reason: reason, h: h}
}

// Routes returns every route registered, by pattern.
func (gd *Guard) Routes() []Route {
	gd.mu.RLock()
	defer gd.mu.RUnlock()
	out := make([]Route, 0, len(gd.routes))
	for _, r := range gd.routes {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Route) int { return strings.Compare(a.Pattern, b.Pattern) })
	return out
}

// route is the route r is for; a request that matches none (404, 405, a
// redirect to a cleaned path) gets the zero Route: AccessOwner.
func (gd *Guard) route(r *http.Request) Route {
	_, pattern := gd.mux.Handler(r)
	gd.mu.RLock()
	defer gd.mu.RUnlock()
	return gd.routes[pattern]
}

func (gd *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := gd.route(r)
	if rt.Access == AccessPublic {
		gd.serve(w, r)
		return
	}
	if gd.opts.Loopback && !gd.hostAllowed(r.Host) {
		gd.log.Warn("refused a request for a foreign Host (DNS rebinding protection)", "host", r.Host, "remote", clientaddr.String(r))
		gd.refuse(w, r, rt, Refusal{http.StatusForbidden, "Host", "forbidden: Host not allowed"})
		return
	}
	if rf, ok := gd.crossOrigin(r, rt); !ok {
		gd.refuse(w, r, rt, rf)
		return
	}
	owner := gd.owner(r, rt.Access) || gd.opts.Local || isLocal(r.Context())
	if owner {
		// Who calls (caller.go): the guard's word, never the client's.
		r = r.WithContext(OwnerContext(r.Context()))
	}
	// An endpoint with its own token asks for a credential even where
	// the listener has none (endpoint.go).
	epToken := ""
	if rt.ep != nil {
		epToken = rt.ep.AuthToken
	}
	switch {
	case rt.Access == AccessOpen, gd.opts.AuthToken == "" && gd.oauth == nil && epToken == "", owner:
		gd.serve(w, r)
	case epToken != "" && bearerIs(r, epToken):
		gd.serve(w, r.WithContext(context.WithValue(r.Context(), endpointKey{}, rt.ep.Name)))
	default:
		if name, ok := gd.tokenOf(r); ok {
			// Not the owner's token, nor an OAuth token to check: another
			// endpoint's own, which opens that endpoint alone.
			gd.refuse(w, r, rt, Refusal{http.StatusForbidden, "Authorization",
				fmt.Sprintf("forbidden: this token is the endpoint %q's own ([[endpoints]] auth_token): it opens that endpoint alone", name)})
			return
		}
		if gd.oauth != nil {
			gd.serveOAuth(w, r, rt)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
		gd.refuse(w, r, rt, Refusal{http.StatusUnauthorized, "Authorization", gd.needs(rt)})
	}
}

// bearerIs reports whether r bears token as its bearer token.
func bearerIs(r *http.Request, token string) bool {
	tok, ok := bearer(r)
	return ok && TokenEqual(tok, token)
}

// owner reports whether r carries the owner's credential: AuthToken as a
// bearer token, or, on a route that is not an MCP endpoint, the session
// cookie that stands for it.
func (gd *Guard) owner(r *http.Request, access Access) bool {
	if gd.opts.AuthToken == "" {
		return false
	}
	if bearerIs(r, gd.opts.AuthToken) {
		return true
	}
	if access == AccessMCP {
		return false
	}
	// SameSite=Strict keeps a browser from sending it cross-site; the
	// Origin check refuses what a page elsewhere sends.
	c, err := r.Cookie(SessionCookie)
	return err == nil && TokenEqual(c.Value, SessionValue(gd.opts.AuthToken))
}

// bearer is the bearer token of r's Authorization header.
func bearer(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

// needs says what route rt needs, for a request that came without it.
func (gd *Guard) needs(rt Route) string {
	access := rt.Access
	var ways []string
	if rt.ep != nil && rt.ep.AuthToken != "" {
		ways = append(ways, fmt.Sprintf("the endpoint %q's own token ([[endpoints]] auth_token) as Authorization: Bearer TOKEN", rt.ep.Name))
	}
	if gd.opts.AuthToken != "" {
		w := "[gateway] auth_token as Authorization: Bearer TOKEN"
		if access != AccessMCP {
			w += " (or the session cookie that signing in at /login sets)"
		}
		ways = append(ways, w)
	}
	if og := gd.oauth; og != nil {
		switch {
		case access == AccessMCP && rt.ep != nil && len(rt.ep.Scopes) > 0:
			ways = append(ways, fmt.Sprintf("an OAuth access token of the issuer of [gateway.auth] with the scopes %q as Authorization: Bearer TOKEN", gd.scopes(rt)))
		case access == AccessMCP:
			ways = append(ways, "an OAuth access token of the issuer of [gateway.auth] as Authorization: Bearer TOKEN")
		case access == AccessAdmin && og.o.AdminScope != "":
			ways = append(ways, fmt.Sprintf("an OAuth access token with the scope %q ([gateway.auth] admin_scope)", og.o.AdminScope))
		}
	}
	if len(ways) == 0 { // OAuth alone, on a face it does not open
		hint := ""
		if access == AccessAdmin {
			hint = ", and this too with [gateway.auth] admin_scope"
		}
		return "unauthorized: this needs [gateway] auth_token, which is not set (OAuth access tokens open /mcp" + hint + ")"
	}
	return "unauthorized: this needs " + strings.Join(ways, ", or ")
}

// serveOAuth checks r's OAuth access token for route rt, and serves r
// with the token's information in its context (where the go-sdk's
// handlers and [GrantFor]'s callers find it: auth.TokenInfoFromContext).
func (gd *Guard) serveOAuth(w http.ResponseWriter, r *http.Request, rt Route) {
	og := gd.oauth
	tok, ok := bearer(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", og.challenge(rt.ep.metaURLOr(og.metaURL), http.StatusUnauthorized, false, gd.scopes(rt)))
		gd.refuse(w, r, rt, Refusal{http.StatusUnauthorized, "Authorization", gd.needs(rt)})
		return
	}
	ti, err := og.v.verify(r.Context(), tok, r, rt.ep.resourceOf())
	switch {
	case errors.Is(err, auth.ErrInvalidToken):
		w.Header().Set("WWW-Authenticate", og.challenge(rt.ep.metaURLOr(og.metaURL), http.StatusUnauthorized, true, gd.scopes(rt)))
		gd.refuse(w, r, rt, Refusal{http.StatusUnauthorized, "Authorization", err.Error()})
		return
	case err != nil:
		// Not the client's fault: a 500, not a 401 that would send it to
		// sign in again.
		gd.refuse(w, r, rt, Refusal{http.StatusInternalServerError, "Authorization", err.Error()})
		return
	}
	for _, s := range og.o.Scopes {
		if !hasScope(ti, s) {
			w.Header().Set("WWW-Authenticate", og.challenge(rt.ep.metaURLOr(og.metaURL), http.StatusForbidden, true, gd.scopes(rt)))
			gd.refuse(w, r, rt, Refusal{http.StatusForbidden, "Authorization", fmt.Sprintf("insufficient scope: every token needs %q ([gateway.auth] scopes)", og.o.Scopes)})
			return
		}
	}
	if rt.ep != nil {
		for _, s := range rt.ep.Scopes {
			if !hasScope(ti, s) {
				// Step up: the challenge names every scope this endpoint
				// needs, the gateway's with its own.
				w.Header().Set("WWW-Authenticate", og.challenge(rt.ep.metaURLOr(og.metaURL), http.StatusForbidden, true, gd.scopes(rt)))
				gd.refuse(w, r, rt, Refusal{http.StatusForbidden, "Authorization",
					fmt.Sprintf("insufficient scope: the endpoint %q needs a token with the scopes %q ([[endpoints]] scopes)", rt.ep.Name, rt.ep.Scopes)})
				return
			}
		}
	}
	switch rt.Access {
	case AccessOwner:
		gd.refuse(w, r, rt, Refusal{http.StatusForbidden, "Authorization",
			"forbidden: this is the owner's ([gateway] auth_token, or the session cookie of /login): an OAuth access token does not open it"})
		return
	case AccessAdmin:
		admin := og.o.AdminScope
		if admin == "" {
			gd.refuse(w, r, rt, Refusal{http.StatusForbidden, "Authorization",
				"forbidden: OAuth access tokens may not use the management faces (the REST API, its events, /metrics) unless [gateway.auth] admin_scope names the scope that allows it; or use [gateway] auth_token"})
			return
		}
		if !hasScope(ti, admin) {
			w.Header().Set("WWW-Authenticate", og.challenge(og.metaURL, http.StatusForbidden, true, []string{admin}))
			gd.refuse(w, r, rt, Refusal{http.StatusForbidden, "Authorization",
				fmt.Sprintf("forbidden: the management faces need a token with the scope %q ([gateway.auth] admin_scope)", admin)})
			return
		}
	}
	// The token is checked: auth.RequireBearerToken, with a verifier that
	// answers what was found, is the only way to put it where the go-sdk
	// looks for it.
	known := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) { return ti, nil }
	auth.RequireBearerToken(known, &auth.RequireBearerTokenOptions{ClockSkew: og.o.Leeway})(http.HandlerFunc(gd.serve)).ServeHTTP(w, r)
}

// serve serves a request that passed every check.
func (gd *Guard) serve(w http.ResponseWriter, r *http.Request) {
	// No handler sees a client's credentials, and the gateway never
	// passes them upstream: upstream requests are made by the host with
	// the upstream's own headers. The one place they go on to is another
	// replica of this gateway, whose guard checks them again: a retry
	// forwarded to the replica holding its call (forwardRetry).
	if c := r.Header.Get("Authorization"); c != "" {
		r = r.WithContext(context.WithValue(r.Context(), credentialKey{}, c))
	}
	r.Header.Del("Authorization")
	// Whether the request came through a Local guard, or on a
	// LocalContext, is the guard's or listener's word, never the
	// client's.
	r.Header.Del(LocalHeader)
	if gd.opts.Local || isLocal(r.Context()) {
		r.Header.Set(LocalHeader, "1")
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = newTimedBody(w, r.Body, gd.opts.BodyTimeout)
	}
	gd.mux.ServeHTTP(w, r)
}

// credentialKey holds, in the context of a request the guard let through,
// the Authorization header it took off.
type credentialKey struct{}

// Credential is the Authorization header that the guard took off the
// request of ctx: what a retry forwarded to another replica of the
// gateway, whose guard checks it again, carries on.
func Credential(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(credentialKey{}).(string)
	return c, ok
}

// ownerKey marks the context of a request the owner made.
type ownerKey struct{}

// OwnerContext returns ctx marked as the owner's: the guard marks so the
// requests of the owner, and a session served on it (stdio: the client
// that started the process) is the owner's.
func OwnerContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, ownerKey{}, true)
}

// IsOwner reports whether ctx is an [OwnerContext].
func IsOwner(ctx context.Context) bool {
	v, _ := ctx.Value(ownerKey{}).(bool)
	return v
}

// LocalHeader marks, for the handlers, a request that came through a
// Local guard (see Options.Local) or on a [LocalContext]; a client's own
// is removed.
const LocalHeader = "Switchboard-Local"

// localKey marks the context of a request that came on a listener only
// its owner can reach.
type localKey struct{}

// LocalContext returns ctx marked as that of a request that came on a
// listener only its owner can reach (the daemon's unix socket, in a
// folder only its owner may enter): the guard serves it as the owner's,
// with what Options.Local allows, beside requests of other listeners
// on the same guard. The listener's server sets it, never the client.
func LocalContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, localKey{}, true)
}

func isLocal(ctx context.Context) bool {
	v, _ := ctx.Value(localKey{}).(bool)
	return v
}

// A Refusal is the guard's answer to a request it does not serve.
type Refusal struct {
	Status int
	// Header is the request header at fault: Host, Origin or
	// Authorization.
	Header string
	// Msg says what is wrong and, where the caller can do something,
	// what it needs (the setting, the scope).
	Msg string
}

// A Refuser renders the guard's refusals of the requests for its route:
// the REST API answers an RFC 9457 problem document as it does for its
// own errors, the web UI sends a browser to its login page. Without one
// a refusal is plain text. The guard has set WWW-Authenticate already,
// and made sure the body is never read.
type Refuser interface {
	Refuse(w http.ResponseWriter, r *http.Request, rf Refusal)
}

// refuse answers a refusal of the guard, through the route's Refuser if
// it has one.
func (gd *Guard) refuse(w http.ResponseWriter, r *http.Request, rt Route, rf Refusal) {
	if rfr, ok := rt.h.(Refuser); ok {
		holdNoBody(w)
		rfr.Refuse(w, r, rf)
		return
	}
	Refuse(w, rf.Status, rf.Msg)
}

// Refuse answers a request that will not be served without reading its
// body: "Connection: close" keeps net/http from reading what is left of
// it (up to 256 KiB) to reuse the connection, and a read deadline in the
// past makes sure nothing waits for a body that trickles in.
func Refuse(w http.ResponseWriter, status int, msg string) {
	holdNoBody(w)
	http.Error(w, msg, status)
}

// holdNoBody is Refuse's care for the body, before any answer.
func holdNoBody(w http.ResponseWriter) {
	http.NewResponseController(w).SetReadDeadline(time.Now()) // not every ResponseWriter can; then there is no connection to hold
	w.Header().Set("Connection", "close")
}

// SessionCookie is the cookie the web UI's login page sets once a person
// has typed the auth token: a browser cannot send the bearer header on
// its own navigations. Its value is [SessionValue] of the token.
const SessionCookie = "switchboard_session"

// sessionKey is this process's key for session values: random, never
// stored, so a restart signs everyone out.
var sessionKey = sync.OnceValue(func() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
})

// SessionValue is the session cookie's value for token: an HMAC-SHA256 of
// the token under a key of this process. It proves that the token was
// typed into this process's login page, never reveals the token (a cookie
// read off a disk or a log does not give the token for /mcp), and is void
// once the process restarts or the token changes.
func SessionValue(token string) string {
	m := hmac.New(sha256.New, sessionKey())
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

// TokenEqual reports whether a token presented equals the one expected,
// in a time that depends on neither, their lengths included:
// subtle.ConstantTimeCompare answers at once when the lengths differ,
// which tells a guesser the token's length; the SHA-256 digests compared
// instead always have the same length.
func TokenEqual(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// hostAllowed reports whether a Host header names this gateway: a loopback
// name or an allowed host, with a port that is a plain number if there is
// one. The port need not be the listener's: a port forward (ssh -L, a
// container's published port) changes it, while DNS rebinding changes the
// name, which is what is checked; a page on another local port is stopped
// by the Origin check, which compares the whole host:port.
func (gd *Guard) hostAllowed(hostport string) bool {
	host, port, hasPort := splitHost(hostport)
	if host == "" || (hasPort && !validPort(port)) {
		return false
	}
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	for _, a := range gd.opts.AllowedHosts {
		if strings.EqualFold(a, hostport) || strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// splitHost splits a Host header into host and port the way RFC 9110 writes
// it: an IPv6 address in brackets, a port after the last colon. It returns
// "" for the host when the value is not of that shape ("::1" without
// brackets, a bracketed name, stray brackets).
func splitHost(hostport string) (host, port string, hasPort bool) {
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", false
		}
		host, rest := hostport[1:end], hostport[end+1:]
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", "", false
		}
		switch {
		case rest == "":
			return host, "", false
		case rest[0] == ':':
			return host, rest[1:], true
		}
		return "", "", false
	}
	host, port, hasPort = strings.Cut(hostport, ":")
	if strings.ContainsAny(host, "[]") || strings.Contains(port, ":") {
		return "", "", false
	}
	return host, port, hasPort
}

// validPort reports whether p is a port number as a URL writes it: 1 to
// 65535 in decimal digits, without sign or leading zeros.
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == p
}
