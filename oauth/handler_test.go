package oauth_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
)

// stored is a handler without a browser (a serve, a call) over the login
// stored in tokens, its token source, and its log.
func stored(t *testing.T, as *testauth.Server, tokens *oauth.Tokens) (*oauthHandler, oauth2.TokenSource) {
	t.Helper()
	logs := &interop.LogBuffer{}
	h, err := oauth.NewHandler(as.URL, &config.OAuth{ClientID: as.ClientID, ClientSecret: as.ClientSecret}, oauth.Options{
		Server: "remote", Tokens: tokens, HTTPClient: oauth.GuardedClient(&netguard.Dialer{}, loopback),
		Log: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := h.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("no stored login: %v", err)
	}
	return &oauthHandler{h, logs}, ts
}

type oauthHandler struct {
	auth.OAuthHandler
	logs *interop.LogBuffer
}

// expire marks the stored access token expired, as time would.
func expire(t *testing.T, as *testauth.Server, tokens *oauth.Tokens) oauth.Record {
	t.Helper()
	rec, err := tokens.Load(as.URL, as.ClientID)
	if err != nil || rec == nil {
		t.Fatalf("no stored login: %v", err)
	}
	rec.Expiry = time.Now().Add(-time.Minute)
	if err := tokens.Save(*rec); err != nil {
		t.Fatal(err)
	}
	return *rec
}

// refused is what the MCP server answers a request bearing token: a 401
// for a token it refuses.
func refused(t *testing.T, as *testauth.Server, token string) (*http.Request, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, as.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the MCP server answered %s, want 401", resp.Status)
	}
	return req, resp
}

// TestRefreshRotates: an expired access token is refreshed and written
// back with the rotated refresh token (the server revokes the one spent),
// twice in a row, each time by a new process that has only what is
// stored; each refresh carries the resource indicator, and each new token
// is accepted by the server.
func TestRefreshRotates(t *testing.T) {
	as := testauth.Start(t, nil)
	tokens := openTokens(t, t.TempDir(), "")
	login(t, as, tokens)
	for i := range 2 {
		old := expire(t, as, tokens)
		_, ts := stored(t, as, tokens)
		tok, err := ts.Token()
		if err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
		rec, _ := tokens.Load(as.URL, as.ClientID)
		switch {
		case tok.AccessToken == old.AccessToken:
			t.Errorf("refresh %d: the expired access token was handed out", i)
		case rec == nil || rec.AccessToken != tok.AccessToken || !rec.Expiry.After(time.Now()):
			t.Errorf("refresh %d: the new token was not written back", i)
		case rec.RefreshToken == "" || rec.RefreshToken == old.RefreshToken:
			t.Errorf("refresh %d: the rotated refresh token was not written back", i)
		}
		if err := accepted(as.URL, tok.AccessToken); err != nil {
			t.Errorf("refresh %d: %v", i, err)
		}
	}
	if n, reused := as.Refreshes(), as.RefreshTokenReuses(); n != 2 || reused != 0 {
		t.Errorf("%d refresh grants, %d presenting a spent refresh token; want 2, 0", n, reused)
	}
	for i, r := range as.Resources() {
		if r != as.URL {
			t.Errorf("token request %d: resource %q, want %q", i, r, as.URL)
		}
	}
}

// TestRefreshOn401: a token the server refuses before its expiry (revoked)
// is refreshed once by Authorize, and the retried request's token is the
// new one. A 401 for a request that carried an older token spends no
// refresh token: the current one was not refused.
func TestRefreshOn401(t *testing.T) {
	as := testauth.Start(t, nil)
	tokens := openTokens(t, t.TempDir(), "")
	login(t, as, tokens)
	h, ts := stored(t, as, tokens)
	tok0, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if err := accepted(as.URL, tok0.AccessToken); err != nil {
		t.Fatal(err)
	}
	as.RevokeAccessTokens()
	req, resp := refused(t, as, tok0.AccessToken)
	if err := h.Authorize(context.Background(), req, resp); err != nil {
		t.Fatalf("Authorize after the token was refused: %v", err)
	}
	tok1, err := ts.Token()
	if err != nil || tok1.AccessToken == tok0.AccessToken {
		t.Fatalf("Token after the refresh: same token %v, %v", err == nil, err)
	}
	if err := accepted(as.URL, tok1.AccessToken); err != nil {
		t.Error(err)
	}
	if rec, _ := tokens.Load(as.URL, as.ClientID); rec == nil || rec.AccessToken != tok1.AccessToken {
		t.Error("the refreshed token was not written back")
	}

	req, resp = refused(t, as, tok0.AccessToken) // a request sent before the refresh
	h.Authorize(context.Background(), req, resp)
	if n := as.Refreshes(); n != 1 {
		t.Errorf("%d refresh grants, want 1: a 401 for the old token refreshed again", n)
	}
	if tok, err := ts.Token(); err != nil || tok.AccessToken != tok1.AccessToken {
		t.Errorf("Token after a 401 for the old token: %v; want the current token kept", err)
	}
}

// TestRefreshInvalidGrant: the stored refresh token was spent already (a
// copy of the login refreshed elsewhere, and the server rotates them): the
// refresh is refused with invalid_grant, which Token reports, and the
// stored login is left as it was. Authorize, on the server's 401, tries
// one refresh, logs its failure and says which command signs in again;
// no token reaches the error or the log.
func TestRefreshInvalidGrant(t *testing.T) {
	as := testauth.Start(t, nil)
	tokens := openTokens(t, t.TempDir(), "")
	login(t, as, tokens)
	spent := expire(t, as, tokens)
	_, elsewhere := stored(t, as, tokens)
	if _, err := elsewhere.Token(); err != nil {
		t.Fatalf("the first refresh: %v", err)
	}
	spent.Expiry = time.Now().Add(-time.Minute)
	if err := tokens.Save(spent); err != nil { // the copy holding the spent refresh token
		t.Fatal(err)
	}

	h, ts := stored(t, as, tokens)
	_, err := ts.Token()
	if err == nil || !strings.Contains(err.Error(), "refreshing the access token") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("Token with a spent refresh token: %v, want the refresh refused (invalid_grant)", err)
	}
	if rec, _ := tokens.Load(as.URL, as.ClientID); rec == nil || rec.RefreshToken != spent.RefreshToken || rec.AccessToken != spent.AccessToken {
		t.Error("the stored login was changed by a refused refresh")
	}

	// The server revoked the spent copy's access token at the refresh.
	req, resp := refused(t, as, spent.AccessToken)
	err = h.Authorize(context.Background(), req, resp)
	if !errors.Is(err, oauth.ErrLoginRequired) || !strings.Contains(err.Error(), "could not be refreshed") || !strings.Contains(err.Error(), "switchboard auth login remote") {
		t.Errorf("Authorize with a spent refresh token: %v, want a LoginRequiredError naming the command", err)
	}
	if n := as.Refreshes(); n != 3 {
		t.Errorf("%d refresh grants, want 3 (the first, Token's, Authorize's)", n)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "OAuth refresh failed") || !strings.Contains(logs, "invalid_grant") {
		t.Errorf("log %q: want the failed refresh", logs)
	}
	for _, secret := range []string{spent.AccessToken, spent.RefreshToken, as.ClientSecret} {
		if strings.Contains(logs, secret) || (err != nil && strings.Contains(err.Error(), secret)) {
			t.Error("a token or the client secret is in the log or the error")
		}
	}
}
