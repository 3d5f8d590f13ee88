package guard

import (
	"context"
	"net/http"
	"slices"
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
//     up), and the gateway's policy still limits what it sees.
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
}

// HandleEndpoint registers h at pattern at [AccessMCP], as a route of
// endpoint ep: besides what AccessMCP asks, the request must meet ep's
// rules (see [Endpoint]). Like [Guard.Handle] it panics on a pattern that
// is invalid or conflicts with another.
func (gd *Guard) HandleEndpoint(pattern string, ep Endpoint, h http.Handler) {
	ep.Scopes = slices.Clone(ep.Scopes)
	gd.mu.Lock()
	defer gd.mu.Unlock()
	gd.mux.Handle(pattern, h)
	gd.routes[pattern] = Route{Pattern: pattern, Access: AccessMCP, Endpoint: ep.Name, h: h, ep: &ep}
	if ep.AuthToken != "" {
		gd.tokens[ep.Name] = ep.AuthToken
	}
}

// tokenOf is the name of the endpoint whose own token r bears, if any.
// It compares r's bearer token with every endpoint's (each in constant
// time): only a request about to be refused gets here.
func (gd *Guard) tokenOf(r *http.Request) (string, bool) {
	tok, ok := bearer(r)
	if !ok {
		return "", false
	}
	gd.mu.RLock()
	defer gd.mu.RUnlock()
	found, name := false, ""
	for n, t := range gd.tokens {
		if TokenEqual(tok, t) && !found {
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
