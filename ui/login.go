package ui

// The login page: with [gateway] auth_token set every face needs the
// token, and a browser cannot send the bearer header on its own
// navigations. A person types the token here once; the answer sets the
// session cookie (guard.SessionCookie), which stands for the token on
// the UI, the REST API and /metrics — never on /mcp — until the daemon
// restarts or the person logs out (POST /logout clears it from this
// browser). The cookie holds an HMAC of the token under a key of the
// process, never the token; it is HttpOnly (no script reads it),
// SameSite=Strict (no other site's page makes the browser send it) and
// Secure when the page came over HTTPS.
//
// Failed logins are limited per client address (loginLimiter; behind
// [gateway] trusted_proxies, the client's, not the balancer's): the token
// is meant to have the entropy that makes guessing hopeless, and the
// limit keeps a weak one from being guessed at the speed of the network.

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardmcp/switchboard/clientaddr"
	"github.com/switchboardmcp/switchboard/guard"
)

type loginData struct {
	chrome
	Err string
}

func (u *UI) loginRoutes() {
	u.mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		u.render(w, http.StatusOK, "login", "layout", loginData{chrome: chrome{"Log in", "login"}})
	})
	u.mux.HandleFunc("POST /login", u.login)
	u.mux.HandleFunc("POST /logout", u.logout)
}

func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	// Counted per client: behind [gateway] trusted_proxies, the client
	// the balancer names, not the balancer.
	client := clientaddr.Key(r)
	now := time.Now()
	// Checked before the token: a client over its limit learns nothing,
	// not even from the right token.
	if wait := u.limit.wait(client, now); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		u.render(w, http.StatusTooManyRequests, "login", "login-form",
			loginData{Err: fmt.Sprintf("Too many wrong tokens from this address: try again in %d s.", secs)})
		return
	}
	value, ok := u.d.Login(r.PostFormValue("token"))
	if !ok {
		u.limit.fail(client, now)
		u.render(w, http.StatusUnauthorized, "login", "login-form", loginData{Err: "That is not the token ([gateway] auth_token), or the daemon needs none."})
		return
	}
	u.limit.forget(client)
	http.SetCookie(w, u.sessionCookie(r, value))
	redirect(w, r, "/servers")
}

// logout clears the session cookie from the browser that sends it. A
// POST with the CSRF header (ServeHTTP), so no other site's page can log
// a person out. The value stays valid until the daemon restarts (it is
// derived from the token, not stored): a copy taken before is not revoked.
func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	c := u.sessionCookie(r, "")
	c.MaxAge = -1
	http.SetCookie(w, c)
	// And this browser's try-it history, which is the person's.
	if id := browserOf(r); id != "" {
		u.tries.forget(id)
		h := historyCookieOf(r, "")
		h.MaxAge = -1
		http.SetCookie(w, h)
	}
	redirect(w, r, "/login")
}

func (u *UI) sessionCookie(r *http.Request, value string) *http.Cookie {
	return &http.Cookie{
		Name:     guard.SessionCookie,
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil || strings.HasPrefix(r.Header.Get("Origin"), "https://"),
		SameSite: http.SameSiteStrictMode,
	}
}

// The limit on failed logins: a client may fail loginBurst times at once,
// then once per loginRefill; over it, /login answers 429 with Retry-After.
const (
	loginBurst  = 5
	loginRefill = time.Minute
	// maxLoginClients bounds the addresses remembered, against a flood
	// of addresses: when full, those whose failures have drained are
	// forgotten, then any.
	maxLoginClients = 4096
)

// loginLimiter counts each client's failed logins as a leaky bucket: a
// failure adds one, and the count drains by one every loginRefill. Its
// zero value is ready.
type loginLimiter struct {
	mu      sync.Mutex
	clients map[string]loginCount
}

type loginCount struct {
	n  float64   // failures not yet drained, as of at
	at time.Time // when n was last set
}

// level is c's count at now.
func (c loginCount) level(now time.Time) float64 {
	return max(0, c.n-float64(now.Sub(c.at))/float64(loginRefill))
}

// wait is how long client must wait before it may try again; 0 when it
// may now.
func (l *loginLimiter) wait(client string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.clients[client]
	if !ok {
		return 0
	}
	over := c.level(now) - (loginBurst - 1)
	if over <= 0 {
		return 0
	}
	return time.Duration(over * float64(loginRefill))
}

// fail counts a failed login of client.
func (l *loginLimiter) fail(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients == nil {
		l.clients = map[string]loginCount{}
	}
	c, ok := l.clients[client]
	if !ok && len(l.clients) >= maxLoginClients {
		for k, c := range l.clients {
			if c.level(now) == 0 {
				delete(l.clients, k)
			}
		}
		for k := range l.clients {
			if len(l.clients) < maxLoginClients {
				break
			}
			delete(l.clients, k)
		}
	}
	l.clients[client] = loginCount{n: c.level(now) + 1, at: now}
}

// forget drops client's failures: it has logged in.
func (l *loginLimiter) forget(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.clients, client)
}
