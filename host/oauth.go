package host

// Signing in to a server with an oauth table (the oauth package).

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
)

// oauthHandler is the go-sdk OAuth handler of a server, its tokens loaded
// afresh (a sign-in made since the last connect counts). Its requests go
// through the guarded dialer: allow_local_endpoint admits the server's own
// endpoint, [network] ranges the rest; a metadata address never.
func (s *server) oauthHandler(rs config.Server) (auth.OAuthHandler, error) {
	if s.h.opts.OAuthTokens == nil && rs.OAuth.Grant != config.GrantClientCredentials {
		return nil, errors.New("signs in with OAuth, but this host has no token store")
	}
	d := &netguard.Dialer{Timeout: rs.ConnectTimeout}
	if rs.AllowLocalEndpoint {
		ctx, cancel := context.WithTimeout(context.Background(), rs.ConnectTimeout)
		d.AllowLocal, _ = netguard.LocalEndpoint(ctx, nil, rs.URL)
		cancel()
	}
	return oauth.NewHandler(rs.URL, rs.OAuth, oauth.Options{
		Server:      s.cfg.ID,
		Tokens:      s.h.opts.OAuthTokens,
		HTTPClient:  oauth.GuardedClient(d, s.h.opts.Network),
		Fetch:       s.h.opts.OAuthLogin,
		RedirectURL: s.h.opts.OAuthRedirectURL,
		Log:         s.log,
	})
}

// oauthClient is hc carrying the server's OAuth handler, for the
// transports the go-sdk gives none (legacy SSE, WebSocket); hc itself
// for a server without an oauth table.
func (s *server) oauthClient(rs config.Server, hc *http.Client) (*http.Client, error) {
	if rs.OAuth == nil {
		return hc, nil
	}
	oh, err := s.oauthHandler(rs)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(rs.URL)
	if err != nil {
		return nil, err
	}
	// A WebSocket's handshake is an http(s) request to the same host.
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	c := *hc
	c.Transport = &oauth.Transport{Base: hc.Transport, Handler: oh, Origin: netguard.Origin(u)}
	return &c, nil
}
