package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
)

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeOAuth: serve with [gateway.auth] on loopback: the resource is
// the listener's /mcp, the issuer on loopback is reached through the
// guarded client only with allow_local_issuer, a token for the resource
// works and the policy applies; without a token, 401 pointing at the
// metadata.
func TestServeOAuth(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	cfg := &config.Config{
		Servers: []config.Server{fixture(t, "fx"), fixture(t, "hidden")},
		Gateway: config.Gateway{Auth: &config.GatewayAuth{Issuer: as.Issuer, AllowLocalIssuer: true,
			Policy: []config.AuthPolicy{{Servers: []string{"fx"}}}}},
	}
	r := run(t, cfg, openStore(t), nil)
	// Before run's check for goroutines left: this test's own clients'.
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	r.awaitReady(t)

	resp, err := http.Post(r.url+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := `resource_metadata="` + r.url + `/.well-known/oauth-protected-resource/mcp"`; resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
		t.Errorf("no token: %s %q; want 401 with %s", resp.Status, resp.Header.Get("WWW-Authenticate"), want)
	}

	cc := clientcredentials.Config{ClientID: as.ClientID, ClientSecret: as.ClientSecret, TokenURL: as.Issuer + "/token",
		EndpointParams: map[string][]string{"resource": {r.url + "/mcp"}}}
	tok, err := cc.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{tok.AccessToken}}}, nil)
	if err != nil {
		t.Fatalf("connect with a token: %v", err)
	}
	defer cs.Close()
	for _, n := range toolNames(t, cs) {
		if !strings.HasPrefix(n, "mcp_fx_") {
			t.Errorf("listed %s; the policy grants fx only", n)
		}
	}
}
