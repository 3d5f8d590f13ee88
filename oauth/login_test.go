package oauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
)

// page is the loopback callback's answer to a browser.
type page struct {
	status int
	body   string
}

// visit fetches u as a browser would, not following redirects.
func visit(u string) page {
	c := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second, // a callback that never answers fails the test, not hangs it
	}
	resp, err := c.Get(u)
	if err != nil {
		return page{0, err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusFound && resp.Header.Get("Cache-Control") != "no-store" {
		return page{resp.StatusCode, "no Cache-Control: no-store: " + string(b)}
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		return page{resp.StatusCode, loc}
	}
	return page{resp.StatusCode, string(b)}
}

// authArgs is a sign-in's authorization URL with state st.
func authArgs(st string) *auth.AuthorizationArgs {
	return &auth.AuthorizationArgs{URL: "http://as.invalid/authorize?response_type=code&state=" + st}
}

// TestLoginCallback: the loopback callback of a sign-in with no handler
// behind it. Its code is handed to Fetch; the authorization server's
// error=, a state not the sign-in's and a callback without a code end the
// sign-in with that error, and the page says it failed and why (escaped).
// Each sign-in takes one callback: a second hit (before the sign-in ends,
// or after), or one when no sign-in waits, is refused (409) and changes
// nothing.
func TestLoginCallback(t *testing.T) {
	for _, tc := range []struct {
		name   string
		query  string
		status int
		page   string // in the page
		err    string // in Fetch's error; "" for none
	}{
		{"code", "code=c-1&state=st-1&iss=https%3A%2F%2Fas.example", http.StatusOK, "Sign-in received", ""},
		{"error", "error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E&state=st-1", http.StatusBadRequest,
			"the authorization server refused the sign-in: access_denied: &lt;b&gt;no&lt;/b&gt;", "the authorization server refused the sign-in: access_denied: <b>no</b>"},
		{"state", "code=c-1&state=st-2", http.StatusBadRequest, "Sign-in failed", "the callback's state is not this sign-in's"},
		{"no_code", "state=st-1", http.StatusBadRequest, "carries no authorization code", "carries no authorization code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := oauth.Listen()
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			cb := l.RedirectURL + "?" + tc.query
			if p := visit(cb); p.status != http.StatusConflict || !strings.Contains(p.body, "no sign-in is waiting") {
				t.Errorf("callback before the sign-in: %d %q, want 409", p.status, p.body)
			}
			pages := make(chan page, 2)
			// Fetch waits for Show: the second hit comes while the
			// sign-in still waits.
			l.Show = func(string) { pages <- visit(cb); pages <- visit(cb) }
			res, err := l.Fetch(context.Background(), authArgs("st-1"))
			p, second := <-pages, <-pages
			if p.status != tc.status || !strings.Contains(p.body, tc.page) || strings.Contains(p.body, "<b>") {
				t.Errorf("page %d %q, want %d with %q, escaped", p.status, p.body, tc.status, tc.page)
			}
			if tc.err == "" {
				if err != nil || res == nil || res.Code != "c-1" || res.State != "st-1" || res.Iss != "https://as.example" {
					t.Errorf("Fetch = %+v, %v; want the code, state and iss", res, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Fetch = %+v, %v; want an error with %q", res, err, tc.err)
			}
			if second.status != http.StatusConflict || !strings.Contains(second.body, "no sign-in is waiting") {
				t.Errorf("second hit: %d %q, want 409", second.status, second.body)
			}
			if p := visit(cb); p.status != http.StatusConflict || !strings.Contains(p.body, "no sign-in is waiting") {
				t.Errorf("hit after the sign-in: %d %q, want 409", p.status, p.body)
			}
		})
	}
}

// TestLoginWaitEnds: a sign-in whose wait is cancelled, or times out,
// ends with the cause, and a callback that comes later is refused. A
// browser that does not open is told to Show (with ""). Close is
// idempotent and stops the callback.
func TestLoginWaitEnds(t *testing.T) {
	l, err := oauth.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cb := l.RedirectURL + "?code=c-1&state=st-1"

	cause := errors.New("the user pressed ^C")
	bound, stop := context.WithTimeout(context.Background(), 10*time.Second) // if Show is not told
	defer stop()
	ctx, cancel := context.WithCancelCause(bound)
	var shown []string
	l.Show = func(u string) {
		shown = append(shown, u)
		if u == "" {
			cancel(cause)
		}
	}
	l.Open = func(string) error { return errors.New("no browser") }
	_, err = l.Fetch(ctx, authArgs("st-1"))
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "waiting for the sign-in in the browser") {
		t.Errorf("Fetch cancelled: %v, want the cause", err)
	}
	if len(shown) != 2 || shown[0] != authArgs("st-1").URL || shown[1] != "" {
		t.Errorf("Show was told %q, want the URL, then \"\" (the browser did not open)", shown)
	}
	if p := visit(cb); p.status != http.StatusConflict {
		t.Errorf("callback after the cancel: %d %q, want 409", p.status, p.body)
	}

	l.Show, l.Open = nil, nil
	ctx, stop2 := context.WithTimeout(context.Background(), 50*time.Millisecond) // no browser comes
	defer stop2()
	if _, err := l.Fetch(ctx, authArgs("st-1")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Fetch timed out: %v, want DeadlineExceeded", err)
	}

	l.Close()
	l.Close()
	if p := visit(cb); p.status != 0 {
		t.Errorf("callback after Close: %d %q, want no answer", p.status, p.body)
	}
}

// TestLoginFailedOnce: a sign-in through a handler that the authorization
// server refuses (error=access_denied) or whose callback carries another
// issuer (RFC 9207) fails: the browser's page waits for the outcome and
// says the sign-in failed and why, Authorize returns a LoginFailedError
// naming the server and the cause, nothing is stored, and Authorize again
// returns the same error without sending the user to another page.
func TestLoginFailedOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  *testauth.Options
		forge func(url.Values)
		want  string
	}{
		{"access_denied", &testauth.Options{Deny: true}, nil, "access_denied"},
		{"iss", nil, func(q url.Values) { q.Set("iss", "https://evil.example") }, "https://evil.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := testauth.Start(t, tc.opts)
			tokens := openTokens(t, t.TempDir(), "")
			l, err := oauth.Listen()
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			pages := make(chan page, 2)
			var shown atomic.Int32
			l.Show = func(u string) {
				shown.Add(1)
				go func() {
					p := visit(u) // the authorization server's redirect
					loc, err := url.Parse(p.body)
					if p.status != http.StatusFound || err != nil {
						pages <- p
						return
					}
					if tc.forge != nil {
						q := loc.Query()
						tc.forge(q)
						loc.RawQuery = q.Encode()
					}
					pages <- visit(loc.String())
				}()
			}
			h, err := oauth.NewHandler(as.URL, &config.OAuth{ClientID: as.ClientID, ClientSecret: as.ClientSecret}, oauth.Options{
				Server: "remote", Tokens: tokens, HTTPClient: oauth.GuardedClient(&netguard.Dialer{}, loopback),
				Fetch: l.Fetch, RedirectURL: l.RedirectURL,
			})
			if err != nil {
				t.Fatal(err)
			}
			authorize := func() error {
				resp, err := http.Post(as.URL, "application/json", strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				req, _ := http.NewRequest(http.MethodPost, as.URL, nil)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				return h.Authorize(ctx, req, resp)
			}
			err = authorize()
			var lf *oauth.LoginFailedError
			if !errors.As(err, &lf) || lf.Server != "remote" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Authorize = %v, want a LoginFailedError naming %q", err, tc.want)
			}
			p := <-pages
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Sign-in failed") || !strings.Contains(p.body, tc.want) {
				t.Errorf("page %d %q, want the failure naming %q", p.status, p.body, tc.want)
			}
			if again := authorize(); again != err {
				t.Errorf("Authorize again = %v, want the same error %v", again, err)
			}
			if n := shown.Load(); n != 1 {
				t.Errorf("the user was sent to %d pages, want 1", n)
			}
			if rec, _ := tokens.Load(as.URL, ""); rec != nil {
				t.Error("a login was stored")
			}
		})
	}
}
