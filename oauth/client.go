package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/netguard"
)

// oauthTimeout bounds each OAuth request (discovery, registration, a token
// request): an authorization server that never answers must not hold a
// start or a call.
const oauthTimeout = 30 * time.Second

// GuardedClient is the HTTP client OAuth requests go through: the guarded
// dialer d (nil: one that refuses every private, loopback and metadata
// address) with the operator's network n, no proxy from the environment,
// and every redirect checked again with cross-origin hops refused (a
// metadata document that redirects elsewhere is refused, not followed).
func GuardedClient(d *netguard.Dialer, n *netguard.Network) *http.Client {
	if d == nil {
		d = &netguard.Dialer{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), oauthTimeout)
	defer cancel()
	policy := &netguard.RedirectPolicy{AllowLocal: len(d.AllowLocal) > 0, Network: n}
	return &http.Client{Transport: n.Transport(ctx, d), CheckRedirect: policy.CheckRedirect, Timeout: oauthTimeout}
}

// Transport carries a go-sdk OAuth handler over transports that do not
// take one (legacy SSE, WebSocket): each request to Origin gets the
// handler's token, and a 401 or 403 calls Authorize and retries the
// request once, as the go-sdk's Streamable HTTP transport does. A request
// to any other origin goes out untouched: a token is only ever sent to the
// server it belongs to.
type Transport struct {
	Base    http.RoundTripper
	Handler auth.OAuthHandler
	// Origin is the server's (netguard.Origin of its URL).
	Origin string
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Origin == "" || netguard.Origin(req.URL) != t.Origin {
		return t.Base.RoundTrip(req)
	}
	first, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.Base.RoundTrip(first)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // cannot be sent again
	}
	if err := t.Handler.Authorize(req.Context(), first, resp); err != nil {
		return nil, err
	}
	again, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	return t.Base.RoundTrip(again)
}

// authorized is a copy of req with the handler's token and a fresh body.
func (t *Transport) authorized(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = b
	}
	ts, err := t.Handler.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	if ts == nil {
		return r, nil
	}
	tok, err := ts.Token()
	if err != nil {
		if errors.Is(err, ErrLoginRequired) {
			return nil, err
		}
		// The server then answers 401, and Authorize says what to do.
		return r, nil
	}
	r.Header.Set("Authorization", fmt.Sprintf("Bearer %s", tok.AccessToken))
	return r, nil
}
