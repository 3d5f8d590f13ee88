package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/ui"
)

// TestLogin: with [gateway] auth_token set, the UI answers 401 without
// the token; /login takes the token typed and sets a session cookie that
// is not the token (HttpOnly, SameSite=Strict); the cookie opens the UI
// but not /mcp; a cookie of another value, or sent from another origin, is
// refused; a wrong token sets nothing.
func TestLogin(t *testing.T) {
	const token = "ui-login-token-5c1f0e9a7b"
	t.Setenv("SB_UI_TOKEN", token)
	s := serveWith(t, func(o *daemon.Options) { o.Config.Gateway.AuthToken = "{{env.SB_UI_TOKEN}}" },
		config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	csrf := []string{ui.CSRFHeader, "1"}
	if status, _, _ := s.do("GET", "/servers", nil); status != http.StatusUnauthorized {
		t.Fatalf("GET /servers without the token: %d, want 401", status)
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
	if c.Name != gateway.SessionCookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" ||
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
		{"another value", "GET", "/servers", []string{cookie, c.Name + "=" + strings.Repeat("0", len(c.Value))}, http.StatusUnauthorized},
		{"the token itself", "GET", "/servers", []string{cookie, c.Name + "=" + token}, http.StatusUnauthorized},
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
