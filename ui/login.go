package ui

// The login page: with [gateway] auth_token set every face needs the
// token, and a browser cannot send the bearer header on its own
// navigations. A person types the token here once; the answer sets the
// session cookie (gateway.SessionCookie), which stands for the token on
// the UI, the REST API and /metrics — never on /mcp — until the daemon
// restarts. The cookie holds an HMAC of the token under a key of the
// process, never the token; it is HttpOnly (no script reads it),
// SameSite=Strict (no other site's page makes the browser send it) and
// Secure when the page came over HTTPS.

import (
	"net/http"
	"strings"

	"github.com/switchboardmcp/switchboard/gateway"
)

type loginData struct {
	chrome
	Err string
}

func (u *UI) loginRoutes() {
	u.mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		u.render(w, http.StatusOK, "login", "layout", loginData{chrome: chrome{"Log in", ""}})
	})
	u.mux.HandleFunc("POST /login", u.login)
}

func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	value, ok := u.d.Login(r.PostFormValue("token"))
	if !ok {
		u.render(w, http.StatusUnauthorized, "login", "login-form", loginData{Err: "That is not the token ([gateway] auth_token), or the daemon needs none."})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     gateway.SessionCookie,
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil || strings.HasPrefix(r.Header.Get("Origin"), "https://"),
		SameSite: http.SameSiteStrictMode,
	})
	redirect(w, r, "/servers")
}
