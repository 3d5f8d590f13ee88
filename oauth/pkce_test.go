package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
)

// TestPKCERequired (issue 23 §6): an authorization server whose metadata
// does not list S256 in code_challenge_methods_supported — only "plain",
// or no methods at all — is refused before any page is shown, with an
// error naming the server, the authorization server, the field and what
// it lists; nothing is stored. The MCP authorization spec: clients MUST
// refuse to proceed without PKCE, and use S256.
func TestPKCERequired(t *testing.T) {
	for _, tc := range []struct {
		name    string
		methods []string // nil: the field left out
		listed  string
	}{
		{"plain_only", []string{"plain"}, `code_challenge_methods_supported ["plain"]`},
		{"absent", nil, "no code_challenge_methods_supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := testauth.Start(t, &testauth.Options{Metadata: func(m map[string]any) {
				if tc.methods == nil {
					delete(m, "code_challenge_methods_supported")
				} else {
					m["code_challenge_methods_supported"] = tc.methods
				}
			}})
			tokens := openTokens(t, t.TempDir(), "")
			l, err := oauth.Listen()
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			shown := false
			l.Show = func(string) { shown = true }
			h, err := oauth.NewHandler(as.URL, &config.OAuth{ClientID: as.ClientID, ClientSecret: as.ClientSecret}, oauth.Options{
				Server: "remote", Tokens: tokens, HTTPClient: oauth.GuardedClient(&netguard.Dialer{}, loopback),
				Fetch: l.Fetch, RedirectURL: l.RedirectURL,
			})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Post(as.URL, "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, as.URL, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// No page to visit: without the refusal the sign-in would
			// wait for one, and the error would be the timeout's.
			err = h.Authorize(ctx, req, resp)
			if err == nil || !errors.Is(err, oauth.ErrLoginFailed) {
				t.Fatalf("Authorize = %v, want a failed sign-in", err)
			}
			for _, want := range []string{"remote", as.Issuer, tc.listed, "S256"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Authorize = %q, want it to name %q", err, want)
				}
			}
			if shown {
				t.Error("the authorization page was shown")
			}
			if rec, _ := tokens.Load(as.URL, as.ClientID); rec != nil {
				t.Error("a login was stored")
			}
		})
	}
}
