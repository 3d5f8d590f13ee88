package ui_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/ui"
)

// TestLogin: with [gateway] auth_token set, a page without the token sends
// the browser to /login (303; HX-Redirect for htmx), whose stylesheet and
// script load without it; /login takes the token typed and sets a session
// cookie that is not the token (HttpOnly, SameSite=Strict); the cookie
// opens the UI but not /mcp; a cookie of another value, or sent from
// another origin, is refused; a wrong token sets nothing.
func TestLogin(t *testing.T) {
	const token = "ui-login-token-5c1f0e9a7b"
	t.Setenv("SB_UI_TOKEN", token)
	s := serveWith(t, func(o *daemon.Options) { o.Config.Gateway.AuthToken = "{{env.SB_UI_TOKEN}}" },
		config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	csrf := []string{ui.CSRFHeader, "1"}
	for _, p := range []string{"/", "/servers", "/tools/x"} {
		if status, hdr, _ := s.do("GET", p, nil); status != http.StatusSeeOther || hdr.Get("Location") != "/login" {
			t.Errorf("GET %s without the token: %d Location %q, want 303 to /login", p, status, hdr.Get("Location"))
		}
	}
	if status, hdr, _ := s.do("GET", "/servers/live", nil, "HX-Request", "true"); status != http.StatusNoContent || hdr.Get("HX-Redirect") != "/login" {
		t.Errorf("htmx's poll without the token: %d HX-Redirect %q, want 204 to /login", status, hdr.Get("HX-Redirect"))
	}
	for _, p := range []string{"/static/style.css", "/static/htmx.min.js"} {
		if status, _, body := s.do("GET", p, nil); status != http.StatusOK || len(body) < 100 {
			t.Errorf("GET %s without the token: %d (%d bytes), want the file: the login page loads it", p, status, len(body))
		}
	}
	status, _, body := s.do("GET", "/login", nil)
	if status != http.StatusOK || !strings.Contains(body, `id="login-form"`) {
		t.Fatalf("GET /login: %d\n%s", status, body)
	}
	status, hdr, _ := s.do("POST", "/login", url.Values{"token": {"not-it"}}, csrf...)
	if status != http.StatusUnauthorized || hdr.Get("Set-Cookie") != "" {
		t.Errorf("a wrong token: %d, Set-Cookie %q", status, hdr.Get("Set-Cookie"))
	}
	status, hdr, _ = s.do("POST", "/login", url.Values{"token": {token}}, append(csrf, "HX-Request", "true")...)
	resp := http.Response{Header: hdr}
	cookies := resp.Cookies()
	if status != http.StatusNoContent || hdr.Get("HX-Redirect") != "/servers" || len(cookies) != 1 {
		t.Fatalf("logging in: %d %q %v", status, hdr.Get("HX-Redirect"), cookies)
	}
	c := cookies[0]
	if c.Name != guard.SessionCookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" ||
		strings.Contains(c.Value, token) || len(c.Value) < 32 {
		t.Errorf("the cookie: %+v", c)
	}
	cookie := "Cookie"
	if status, _, body := s.do("GET", "/servers", nil, cookie, c.Name+"="+c.Value); status != http.StatusOK {
		t.Errorf("GET /servers with the cookie: %d\n%s", status, body)
	}
	if status, _, _ := s.do("POST", "/servers/a/refresh", url.Values{}, append(csrf, cookie, c.Name+"="+c.Value)...); status != http.StatusOK {
		t.Errorf("a change with the cookie: %d", status)
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		hdr    []string
		want   int
	}{
		{"another value", "GET", "/servers", []string{cookie, c.Name + "=" + strings.Repeat("0", len(c.Value))}, http.StatusSeeOther},
		{"the token itself", "GET", "/servers", []string{cookie, c.Name + "=" + token}, http.StatusSeeOther},
		{"another value, a change", "POST", "/servers/a/refresh", append([]string{cookie, c.Name + "=" + strings.Repeat("0", len(c.Value))}, csrf...), http.StatusUnauthorized},
		{"from another origin", "POST", "/servers/a/refresh", append([]string{cookie, c.Name + "=" + c.Value, "Origin", "https://evil.example"}, csrf...), http.StatusForbidden},
		{"on /mcp", "POST", "/mcp", []string{cookie, c.Name + "=" + c.Value, "Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, http.StatusUnauthorized},
	} {
		var form url.Values
		if tc.method == "POST" && tc.path != "/mcp" {
			form = url.Values{}
		}
		if status, _, body := s.do(tc.method, tc.path, form, tc.hdr...); status != tc.want {
			t.Errorf("%s: %s %s: %d, want %d\n%s", tc.name, tc.method, tc.path, status, tc.want, body)
		}
	}
}

// TestLoginLimit: five wrong tokens from one address are each a 401; the
// sixth attempt is a 429 with Retry-After, and so is the right token then
// (an address over its limit learns nothing); a page then offers to log
// out, and logging out (a POST with the CSRF header) clears the cookie.
func TestLoginLimit(t *testing.T) {
	const token = "ui-login-token-limit-8d2e"
	t.Setenv("SB_UI_TOKEN", token)
	s := serveWith(t, func(o *daemon.Options) { o.Config.Gateway.AuthToken = "{{env.SB_UI_TOKEN}}" },
		config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	csrf := []string{ui.CSRFHeader, "1"}

	// Logged in first: the cookie stays good while the address is limited.
	status, hdr, body := s.do("POST", "/login", url.Values{"token": {token}}, append(csrf, "HX-Request", "true")...)
	cookies := (&http.Response{Header: hdr}).Cookies()
	if status != http.StatusNoContent || len(cookies) != 1 {
		t.Fatalf("logging in: %d %v\n%s", status, cookies, body)
	}
	session := cookies[0].Name + "=" + cookies[0].Value

	for i := range 5 {
		if status, hdr, _ := s.do("POST", "/login", url.Values{"token": {"wrong"}}, csrf...); status != http.StatusUnauthorized || hdr.Get("Retry-After") != "" {
			t.Fatalf("wrong token %d: %d, Retry-After %q; want 401", i+1, status, hdr.Get("Retry-After"))
		}
	}
	for _, typed := range []string{"wrong", token} {
		status, hdr, body := s.do("POST", "/login", url.Values{"token": {typed}}, csrf...)
		after, err := strconv.Atoi(hdr.Get("Retry-After"))
		if status != http.StatusTooManyRequests || err != nil || after < 1 || after > 60 || hdr.Get("Set-Cookie") != "" || !strings.Contains(body, "try again in") {
			t.Errorf("after 5 wrong tokens, %q: %d, Retry-After %q, Set-Cookie %q; want 429 with 1 to 60 s and no cookie\n%s", typed, status, hdr.Get("Retry-After"), hdr.Get("Set-Cookie"), body)
		}
	}

	status, _, body = s.do("GET", "/servers", nil, "Cookie", session)
	if status != http.StatusOK || !strings.Contains(body, `id="logout"`) || !strings.Contains(body, `action="/logout"`) {
		t.Errorf("GET /servers with the cookie: %d, want a page with a log-out button\n%s", status, body)
	}
	if status, _, _ := s.do("POST", "/logout", url.Values{}, "Cookie", session); status != http.StatusForbidden {
		t.Errorf("POST /logout without the CSRF header: %d, want 403", status)
	}
	status, hdr, _ = s.do("POST", "/logout", url.Values{}, append(csrf, "Cookie", session, "HX-Request", "true")...)
	cookies = (&http.Response{Header: hdr}).Cookies()
	if status != http.StatusNoContent || hdr.Get("HX-Redirect") != "/login" || len(cookies) != 1 ||
		cookies[0].Name != guard.SessionCookie || cookies[0].Value != "" || cookies[0].MaxAge >= 0 || cookies[0].Path != "/" {
		t.Errorf("logging out: %d %q %+v, want the cookie cleared and /login", status, hdr.Get("HX-Redirect"), cookies)
	}
}

// TestLoginForm: the login form works as a plain form post, before any
// script has loaded: a browser posts it without the CSRF header, marked
// Sec-Fetch-Site: same-origin and with this origin in Origin (pages are
// served with Referrer-Policy: same-origin: under no-referrer Chromium
// sends "Origin: null"). What another site's page could send is refused:
// Origin null, another Origin, a same-site or cross-site post, a post
// with no Fetch metadata; and only /login takes a post without the CSRF
// header.
func TestLoginForm(t *testing.T) {
	const token = "ui-login-form-token-4a7c9e"
	t.Setenv("SB_UI_TOKEN", token)
	s := serveWith(t, func(o *daemon.Options) { o.Config.Gateway.AuthToken = "{{env.SB_UI_TOKEN}}" },
		config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	if _, hdr, _ := s.do("GET", "/login", nil); hdr.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("Referrer-Policy %q, want same-origin", hdr.Get("Referrer-Policy"))
	}
	form := url.Values{"token": {token}}
	for _, tc := range []struct {
		name string
		hdr  []string
	}{
		{"Origin null", []string{"Origin", "null", "Sec-Fetch-Site", "same-origin"}},
		{"another Origin", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}},
		{"same-site", []string{"Origin", s.url, "Sec-Fetch-Site", "same-site"}},
		{"cross-site with the header", []string{"Origin", s.url, "Sec-Fetch-Site", "cross-site", ui.CSRFHeader, "1"}},
		{"no Fetch metadata", []string{"Origin", s.url}},
	} {
		if status, hdr, _ := s.do("POST", "/login", form, tc.hdr...); status != http.StatusForbidden || hdr.Get("Set-Cookie") != "" {
			t.Errorf("%s: %d, Set-Cookie %q; want 403 and no cookie", tc.name, status, hdr.Get("Set-Cookie"))
		}
	}
	status, hdr, body := s.do("POST", "/login", form, "Origin", s.url, "Sec-Fetch-Site", "same-origin")
	cookies := (&http.Response{Header: hdr}).Cookies()
	if status != http.StatusSeeOther || hdr.Get("Location") != "/servers" || len(cookies) != 1 || cookies[0].Name != guard.SessionCookie {
		t.Fatalf("the form posted by the browser: %d Location %q %v, want 303 to /servers with the cookie\n%s", status, hdr.Get("Location"), cookies, body)
	}
	session := cookies[0].Name + "=" + cookies[0].Value
	if status, _, _ := s.do("POST", "/servers/a/refresh", url.Values{}, "Cookie", session, "Origin", s.url, "Sec-Fetch-Site", "same-origin"); status != http.StatusForbidden {
		t.Errorf("another page's change without the CSRF header: %d, want 403 (only /login takes a plain form post)", status)
	}
}
