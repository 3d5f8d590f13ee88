package main

// The suite's OAuth scenarios: the server answers 401 until the client
// signs in through the suite's authorization server, then the client lists
// the tools and calls test-tool (step-up scenarios refuse that call with
// 403 insufficient_scope first). Everything goes through the host's OAuth
// support (the oauth package), as `switchboard auth login` and a serve do;
// only the browser is replaced.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
)

// The suite's contract for the authorization code scenarios: this
// redirect URI (the authorization server redirects to it at once, nothing
// listens there) and this client ID metadata document URL (the server
// accepts it without fetching it).
const (
	conformanceRedirectURL = "http://localhost:3000/callback"
	conformanceMetadataURL = "https://conformance-test.local/client-metadata.json"
)

// authScenario returns the scenario for an auth/ name: client credentials
// for auth/client-credentials-*, the authorization code grant for the rest.
func authScenario(name string) (scenario, bool) {
	if !strings.HasPrefix(name, "auth/") {
		return scenario{}, false
	}
	return scenario{server: withOAuth(strings.HasPrefix(name, "auth/client-credentials-")), run: callTestTool}, true
}

// withOAuth gives the server an oauth table from the context, the host a
// token store in a temporary folder, and the suite's servers (on
// loopback, other ports than the MCP server's) to the guarded network.
func withOAuth(clientCredentials bool) func(*config.Server, *host.Options, conformanceContext) (func(), error) {
	return func(srv *config.Server, o *host.Options, cc conformanceContext) (func(), error) {
		dir, err := os.MkdirTemp("", "switchboard-conformance-")
		if err != nil {
			return nil, err
		}
		cleanup := func() { os.RemoveAll(dir) }
		vault, err := secret.OpenStore(&secret.StoreOptions{Dir: dir, Backend: secret.BackendFile})
		if err != nil {
			cleanup()
			return nil, err
		}
		red := secret.NewRedactor()
		o.Redactor = red
		o.OAuthTokens = &oauth.Tokens{Vault: vault, LockPath: dir + "/oauth.lock", Redactor: red}
		o.Network = &netguard.Network{AllowCIDRs: []netip.Prefix{
			netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
		}}
		oc := &config.OAuth{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret}
		if clientCredentials {
			oc.Grant = config.GrantClientCredentials
			oc.PrivateKey = cc.PrivateKeyPEM
		} else {
			oc.ClientMetadataURL = conformanceMetadataURL
			o.OAuthLogin, o.OAuthRedirectURL = followAuthorization, conformanceRedirectURL
		}
		srv.OAuth = oc
		return cleanup, nil
	}
}

// followAuthorization stands in for the browser: the suite's
// authorization server answers the authorization URL with a redirect to
// the callback, whose query is the result.
func followAuthorization(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return nil, fmt.Errorf("the authorization URL answered %s without a usable redirect (%v)", resp.Status, err)
	}
	q := loc.Query()
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("the authorization server refused: %s", e)
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// callTestTool: host.Start signed in and listed the tools; the call may
// need more scopes (step-up).
func callTestTool(ctx context.Context, h *host.Host, _ conformanceContext) error {
	if _, ok := h.Tool("test-tool"); !ok {
		return errors.New(`the server offers no tool "test-tool"`)
	}
	return call(ctx, h, "test-tool", map[string]any{})
}
