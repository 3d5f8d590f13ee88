package guard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// An Endpoint is what the routes of one MCP endpoint ask of a request
// besides [AccessMCP] (the gateway's endpoints: gateway.Endpoint). Every
// route of an endpoint, whatever its transport (Streamable HTTP, SSE and
// its messages, WebSocket), is registered with [Guard.HandleEndpoint] and
// the same Endpoint, so that none is left with weaker rules:
//
//   - the owner ([Options.AuthToken], the local socket) opens every
//     endpoint;
//   - AuthToken, when set, is the endpoint's own token: as a bearer token
//     it opens this endpoint's routes and nothing else (another
//     endpoint's, /mcp's, the management faces' routes answer it 403). An
//     endpoint with a token asks for a credential even on a listener
//     that has none of its own (a loopback listener without auth_token,
//     whose other routes are open): its token, or the owner's;
//   - with OAuth, a token needs Scopes here besides [OAuthOptions.Scopes]
//     (403 insufficient_scope naming them all, so that a client can step
//     up), and the gateway's policy still limits what it sees. A named
//     endpoint is a protected resource of its own (an MCP client checks
//     that the metadata it reads names the URL it connects to): its
//     resource is the gateway's ([OAuthOptions.Resource]) with Path in
//     place of the default endpoint's last path element (resource
//     http://gw/mcp, Path /e/code/mcp: http://gw/e/code/mcp), its
//     metadata is published at RFC 9728's path for it, the challenges of
//     its routes point there, and a token for it is accepted on its
//     routes alone, besides one for the gateway's audience.
//
// A caller let in by the endpoint's token is the endpoint's owner: no
// policy applies to it ([EndpointOf] names the endpoint).
type Endpoint struct {
	// Name identifies the endpoint in refusals and in [EndpointOf]; ""
	// is the default endpoint (/mcp).
	Name string
	// AuthToken is the endpoint's own token; "" leaves the endpoint to
	// the listener's credentials.
	AuthToken string
	// Scopes are the OAuth scopes a token needs on this endpoint.
	Scopes []string
	// Path is the endpoint's Streamable HTTP path, which makes a named
	// endpoint's OAuth resource; "" gives it none of its own.
	Path string
}

// endpointRules are an Endpoint's rules as registered, with its own OAuth
// resource and where its metadata is (none for the default endpoint, or
// without OAuth).
type endpointRules struct {
	Endpoint
	resource, metaURL string
}

// resourceOf is the endpoint's own OAuth resource, or "".
func (e *endpointRules) resourceOf() string {
	if e == nil {
		return ""
	}
	return e.resource
}

// metaURLOr is where the endpoint's protected resource metadata is, or
// def (the gateway's) when it has none of its own.
func (e *endpointRules) metaURLOr(def string) string {
	if e == nil || e.metaURL == "" {
		return def
	}
	return e.metaURL
}

// endpointResource is a named endpoint's OAuth resource: the gateway's
// resource with path in place of its last path element (a prefix a
// reverse proxy serves the gateway under stays).
func endpointResource(gateway, path string) (string, error) {
	u, err := url.Parse(gateway)
	if err != nil {
		return "", err
	}
	prefix := u.Path[:strings.LastIndexByte(u.Path, '/')+1]
	u.Path = strings.TrimSuffix(prefix, "/") + path
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String(), nil
}

// HandleEndpoint registers h at pattern at [AccessMCP], as a route of
// endpoint ep: besides what AccessMCP asks, the request must meet ep's
// rules (see [Endpoint]). Like [Guard.Handle] it panics on a pattern that
// is invalid or conflicts with another.
//
// With OAuth, the first route of a named endpoint with a Path registers
// the endpoint's protected resource metadata too, at [AccessPublic].
func (gd *Guard) HandleEndpoint(pattern string, ep Endpoint, h http.Handler) {
	rules, prm := gd.rulesOf(ep)
	gd.mu.Lock()
	gd.mux.Handle(pattern, h)
	gd.routes[pattern] = Route{Pattern: pattern, Access: AccessMCP, Endpoint: ep.Name, h: h, ep: rules}
	gd.countTokens()
	gd.mu.Unlock()
	gd.handleMetadata(rules, prm)
}

// SetEndpoint gives the route at pattern, registered with
// [Guard.HandleEndpoint], the rules of ep from now on: what a gateway
// whose endpoints change at run time serves there now (a zero Endpoint
// for a path no endpoint has any more: its handler answers 404, and the
// token of the endpoint that had it opens nothing). It panics on a
// pattern HandleEndpoint did not register.
func (gd *Guard) SetEndpoint(pattern string, ep Endpoint) {
	rules, prm := gd.rulesOf(ep)
	gd.mu.Lock()
	rt, ok := gd.routes[pattern]
	if !ok || rt.Access != AccessMCP || rt.ep == nil {
		gd.mu.Unlock()
		panic(fmt.Sprintf("guard: SetEndpoint(%q): not an endpoint's route", pattern))
	}
	rt.Endpoint, rt.ep = ep.Name, rules
	gd.routes[pattern] = rt
	gd.countTokens()
	gd.mu.Unlock()
	gd.handleMetadata(rules, prm)
}

// rulesOf are ep's rules as registered, and where its protected resource
// metadata is to be served ("" for none).
func (gd *Guard) rulesOf(ep Endpoint) (*endpointRules, string) {
	rules := &endpointRules{Endpoint: ep}
	rules.Scopes = slices.Clone(ep.Scopes)
	var prm string
	if og := gd.oauth; og != nil && ep.Name != "" && ep.Path != "" {
		res, err := endpointResource(og.o.Resource, ep.Path)
		if err != nil {
			panic(fmt.Sprintf("guard: the endpoint %q's OAuth resource: %v", ep.Name, err))
		}
		metaURL, metaPath, err := resourceMetadataURL(res)
		if err != nil {
			panic(fmt.Sprintf("guard: the endpoint %q's OAuth resource: %v", ep.Name, err))
		}
		rules.resource, rules.metaURL, prm = res, metaURL, metaPath
	}
	return rules, prm
}

// countTokens makes the endpoints' tokens those of the rules of the
// routes now; gd.mu is held.
func (gd *Guard) countTokens() {
	clear(gd.tokens)
	for _, rt := range gd.routes {
		if rt.ep != nil && rt.ep.AuthToken != "" {
			gd.tokens[rt.ep.Name] = sha256.Sum256([]byte(rt.ep.AuthToken))
		}
	}
}

// handleMetadata serves the protected resource metadata of an endpoint
// with rules at prm ("" for none): registered the first time, replaced
// after (the endpoint's scopes may have changed).
func (gd *Guard) handleMetadata(rules *endpointRules, prm string) {
	if prm == "" {
		return
	}
	h := gd.oauth.metadata(rules.resource, gd.scopes(Route{ep: rules}), "Switchboard: "+rules.Name)
	gd.mu.Lock()
	cur, registered := gd.metas[prm]
	if !registered {
		cur = &atomic.Pointer[http.Handler]{}
		gd.metas[prm] = cur
	}
	cur.Store(&h)
	gd.mu.Unlock()
	if !registered {
		gd.Handle(prm, AccessPublic, "OAuth protected resource metadata (RFC 9728) of the endpoint "+strconv.Quote(rules.Name)+": what a client reads to learn where to get a token, so it has none yet",
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*cur.Load()).ServeHTTP(w, r) }))
	}
}

// tokenOf is the name of the endpoint whose own token r bears, if any.
// It compares the digest of r's bearer token with every endpoint's token's
// (as TokenEqual does, in a time that depends on neither): only a request
// about to be refused gets here, and it costs one digest however many
// endpoints there are.
func (gd *Guard) tokenOf(r *http.Request) (string, bool) {
	tok, ok := bearer(r)
	if !ok {
		return "", false
	}
	d := sha256.Sum256([]byte(tok))
	gd.mu.RLock()
	defer gd.mu.RUnlock()
	found, name := false, ""
	for n, t := range gd.tokens {
		if subtle.ConstantTimeCompare(d[:], t[:]) == 1 && !found {
			found, name = true, n
		}
	}
	return name, found
}

// scopes are the OAuth scopes a token needs on route rt: every token's,
// and its endpoint's.
func (gd *Guard) scopes(rt Route) []string {
	s := gd.oauth.o.Scopes
	if rt.ep != nil && len(rt.ep.Scopes) > 0 {
		s = append(slices.Clone(s), rt.ep.Scopes...)
	}
	return s
}

// endpointKey marks the context of a request let in by an endpoint's own
// token, with the endpoint's name.
type endpointKey struct{}

// EndpointOf names the endpoint whose own token ([Endpoint.AuthToken])
// let in the request of ctx: the guard's word, never the client's.
func EndpointOf(ctx context.Context) (string, bool) {
	n, ok := ctx.Value(endpointKey{}).(string)
	return n, ok
}
