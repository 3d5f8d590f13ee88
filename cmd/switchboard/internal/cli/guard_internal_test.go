package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
)

// guardResource is the resource the OAuth modes of the walk serve: the
// listener's own address is not known before it listens.
const guardResource = "http://switchboard.test/mcp"

// A guardMode is one way a serve's listener is configured to let callers
// in.
type guardMode struct {
	name   string
	listen string
	gw     config.Gateway
}

func (m guardMode) token() bool { return m.gw.AuthToken != "" }
func (m guardMode) oauth() bool { return m.gw.Auth != nil }
func (m guardMode) admin() bool { return m.oauth() && m.gw.Auth.AdminScope != "" }
func (m guardMode) open() bool  { return !m.token() && !m.oauth() }

// A guardCred is what a request of the walk carries.
type guardCred int

const (
	credNone guardCred = iota
	credWrongBearer
	credOwner       // auth_token as a bearer token
	credCookie      // the session cookie of auth_token
	credWrongCookie // a session cookie of another value
	credOAuth       // a valid OAuth access token, without the admin scope
	credOAuthAdmin  // a valid one with the admin scope
	credOAuthForged // signed by a key the issuer does not publish
	credAlpha       // the endpoint alpha's own auth_token
	credBeta        // the endpoint beta's own auth_token
	credOAuthAlpha  // a valid OAuth token with the scope the endpoint alpha needs
)

var credNames = map[guardCred]string{credNone: "no credential", credWrongBearer: "a wrong bearer token", credOwner: "auth_token",
	credCookie: "the session cookie", credWrongCookie: "a wrong session cookie", credOAuth: "an OAuth token",
	credOAuthAdmin: "an OAuth token with the admin scope", credOAuthForged: "a forged OAuth token",
	credAlpha: "alpha's auth_token", credBeta: "beta's auth_token", credOAuthAlpha: "an OAuth token with alpha's scope"}

// The named endpoints every mode of the walk serves besides /mcp: alpha
// with a token of its own and an OAuth scope, beta with a token of its
// own, gamma with neither (the gateway's rules, as /mcp).
var (
	guardEndpoints = []config.Endpoint{
		{Name: "alpha", AuthToken: "{{env.SB_GUARD_ALPHA}}", Scopes: []string{"alpha"}},
		{Name: "beta", AuthToken: "{{env.SB_GUARD_BETA}}"},
		{Name: "gamma"},
	}
	ownCred = map[string]guardCred{"alpha": credAlpha, "beta": credBeta} // by endpoint, those with a token of their own
	// oauthScopes are the scopes of each OAuth credential.
	oauthScopes = map[guardCred][]string{credOAuth: {"mcp"}, credOAuthAdmin: {"mcp", "admin"}, credOAuthAlpha: {"mcp", "alpha"}}
)

// allowed is what the guard must answer: whether a request for a route
// of access, of the named endpoint ep ("" for none, or /mcp), with cred,
// is let through in mode m. The owner opens every endpoint; an
// endpoint's own token opens that endpoint alone, and an endpoint with
// one asks for a credential even on an open listener; an OAuth token
// needs the endpoint's scopes.
func (m guardMode) allowed(access guard.Access, ep string, cred guardCred) bool {
	own, hasOwn := ownCred[ep]
	switch {
	case access == guard.AccessPublic, access == guard.AccessOpen:
		return true
	case cred == credOwner && m.token(), hasOwn && cred == own:
		return true
	case m.open():
		return !hasOwn
	case cred == credOwner, cred == credAlpha, cred == credBeta:
		return false
	case cred == credCookie:
		return m.token() && access != guard.AccessMCP
	}
	scopes, ok := oauthScopes[cred]
	switch {
	case !ok || !m.oauth():
		return false
	case access == guard.AccessMCP:
		for _, e := range guardEndpoints {
			if e.Name == ep {
				for _, s := range e.Scopes {
					if !slices.Contains(scopes, s) {
						return false
					}
				}
			}
		}
		return true
	case access == guard.AccessAdmin:
		return m.admin() && slices.Contains(scopes, "admin")
	}
	return false
}

// guardRequest is one request of the walk: a method and a path that the
// route of pattern serves.
type guardRequest struct {
	pattern, method, path string
}

// TestEveryRouteGuarded walks every route serve's listener has (the
// daemon's list: the gateway's endpoints, the probes, /metrics, the OAuth
// metadata, the REST API, the web UI and its login page, and one more
// mounted here with Daemon.Handle, as a face added later would be) in
// every auth mode — loopback without credentials; auth_token; OAuth, on
// loopback and beyond; OAuth with admin_scope beside auth_token — with no
// credential, wrong ones and right ones, and checks each answer against
// what the route's access allows; a refused request never reaches its
// handler. Each mode serves named endpoints too ([[endpoints]], every
// transport of each): one with a token of its own and an OAuth scope,
// one with a token of its own, one with neither; an endpoint's token
// opens that endpoint alone (403 on another's, on /mcp and on the
// management faces), the owner's opens every one, an OAuth token needs
// the endpoint's scope (403 insufficient_scope naming it). A foreign Origin ("null" included), and on loopback a foreign
// Host, are refused on every route but the public ones; a change without
// the CSRF header, or marked cross-site, on every route but the public
// ones and the MCP endpoints. The local socket serves every route too,
// each the owner's without a credential, and refuses any Origin and a
// Host but its own. Which routes are
// not the owner's alone is pinned: a route added with a weaker access
// fails here until it is listed, with its reason.
func TestEveryRouteGuarded(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const token = "guard-walk-token-3e8d5c71"
	t.Setenv("SB_GUARD_TOKEN", token)
	const alphaToken, betaToken = "guard-walk-alpha-8c2e4a", "guard-walk-beta-51d7f0"
	t.Setenv("SB_GUARD_ALPHA", alphaToken)
	t.Setenv("SB_GUARD_BETA", betaToken)
	tokenRef := "{{env.SB_GUARD_TOKEN}}"
	auth := func(admin string) *config.GatewayAuth {
		return &config.GatewayAuth{Issuer: as.Issuer, Resource: guardResource, AllowLocalIssuer: true, AdminScope: admin}
	}
	now := time.Now()
	mint := func(scope string) string {
		c := jwt.MapClaims{"iss": as.Issuer, "aud": guardResource, "sub": "alice", "scope": scope, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		tok, err := as.Mint(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	forged, err := testauth.MintWith(testauth.NewKey(), "k1", jwt.MapClaims{"iss": as.Issuer, "aud": guardResource, "sub": "mallory",
		"scope": "mcp admin", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	headers := map[guardCred][]string{
		credNone:        nil,
		credWrongBearer: {"Authorization", "Bearer not-" + token},
		credOwner:       {"Authorization", "Bearer " + token},
		credCookie:      {"Cookie", guard.SessionCookie + "=" + guard.SessionValue(token)},
		credWrongCookie: {"Cookie", guard.SessionCookie + "=" + guard.SessionValue("not-"+token)},
		credOAuth:       {"Authorization", "Bearer " + mint("mcp")},
		credOAuthAdmin:  {"Authorization", "Bearer " + mint("mcp admin")},
		credOAuthForged: {"Authorization", "Bearer " + forged},
		credAlpha:       {"Authorization", "Bearer " + alphaToken},
		credBeta:        {"Authorization", "Bearer " + betaToken},
		credOAuthAlpha:  {"Authorization", "Bearer " + mint("mcp alpha")},
	}

	for _, m := range []guardMode{
		{"loopback without credentials", "127.0.0.1:0", config.Gateway{}},
		{"auth_token", "0.0.0.0:0", config.Gateway{AuthToken: tokenRef}},
		{"OAuth", "0.0.0.0:0", config.Gateway{Auth: auth("")}},
		{"OAuth on loopback", "127.0.0.1:0", config.Gateway{Auth: auth("")}},
		{"OAuth with admin_scope and auth_token", "0.0.0.0:0", config.Gateway{AuthToken: tokenRef, Auth: auth("admin")}},
	} {
		t.Run(m.name, func(t *testing.T) {
			var reached atomic.Int64 // requests that reached the route mounted here
			base, sock, d := serveGuarded(t, m, func(d *daemon.Daemon) {
				d.Handle("/added-later/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					reached.Add(1)
					if r.Header.Get("Authorization") != "" {
						t.Errorf("the face saw the Authorization header")
					}
					io.WriteString(w, "added later")
				}))
			})
			routes := d.Routes()
			pinAccess(t, m, routes)

			byPattern := map[string]guard.Route{}
			var reqs []guardRequest
			for _, rt := range routes {
				byPattern[rt.Pattern] = rt
				reqs = append(reqs, requestsOf(rt)...)
			}
			// Deeper into the prefixes, and what matches no route: the
			// strictest.
			reqs = append(reqs,
				guardRequest{"/api/v1/", "GET", "/api/v1/servers"},
				guardRequest{"/api/v1/", "POST", "/api/v1/servers"},
				guardRequest{"/api/v1/", "GET", "/api/v1/events"},
				guardRequest{"/api/v1/", "POST", "/api/v1/tools/x/call"},
				guardRequest{"/api/v1/", "GET", "/api/v1/openapi.json"},
				guardRequest{"", "GET", "/no-such-route"},
				guardRequest{"", "DELETE", "/healthz"},
			)
			if uiAt("") != "" {
				reqs = append(reqs, guardRequest{"/static/", "GET", "/static/style.css"})
			}
			creds := []guardCred{credNone, credWrongBearer, credOwner, credCookie, credWrongCookie, credOAuth, credOAuthAdmin, credOAuthForged, credAlpha, credBeta, credOAuthAlpha}
			checked := 0
			for _, rq := range reqs {
				rt := byPattern[rq.pattern] // "": AccessOwner
				acc := rt.Access
				for _, cred := range creds {
					before := reached.Load()
					status, refused := guardDo(t, guardClient, base, rq.method, rq.path, headers[cred]...)
					want := m.allowed(acc, rt.Endpoint, cred)
					if refused == want {
						t.Errorf("%s %s (%s, %s) with %s: %d; want it %s", rq.method, rq.path, rq.pattern, acc, credNames[cred], status, map[bool]string{true: "served", false: "refused"}[want])
					}
					if refused && (cred == credAlpha || cred == credBeta) && status != http.StatusForbidden {
						// A token that is known, for another endpoint: not
						// a 401 that would send a client to sign in.
						t.Errorf("%s %s with %s: %d, want 403", rq.method, rq.path, credNames[cred], status)
					}
					if refused && reached.Load() != before {
						t.Errorf("%s %s with %s: refused (%d), yet the face ran", rq.method, rq.path, credNames[cred], status)
					}
					checked++
				}
				// A page of another site, even with the owner's
				// credential; and on loopback a name that is not this
				// one (DNS rebinding).
				if acc == guard.AccessPublic {
					continue
				}
				right := headers[credOwner]
				if own, ok := ownCred[rt.Endpoint]; ok {
					right = headers[own]
				} else if !m.token() {
					right = headers[credOAuthAdmin]
				}
				tricks := [][]string{{"Origin", "https://evil.example"}, {"Origin", "null"}}
				if strings.HasPrefix(m.listen, "127.") {
					tricks = append(tricks, []string{"Host", "evil.example"}, []string{"Host", "127.0.0.1:1.evil.example"})
				}
				if rq.method != "GET" && acc != guard.AccessMCP && rq.pattern != "" {
					// A change another site's page could make: without
					// the CSRF header, or marked cross-site or same-site
					// (the one cross-origin check: the face added later
					// has it without a line of its own).
					tricks = append(tricks, []string{"Switchboard-CSRF", ""}, []string{"Sec-Fetch-Site", "cross-site"}, []string{"Sec-Fetch-Site", "same-site"})
				}
				for _, trick := range tricks {
					if status, _ := guardDo(t, guardClient, base, rq.method, rq.path, append(trick, right...)...); status != http.StatusForbidden {
						t.Errorf("%s %s with %s: %q: %d, want 403", rq.method, rq.path, trick[0], trick[1], status)
					}
					checked++
				}
			}
			// The local socket serves the same routes: each is the
			// owner's there without a credential (answered as on an open
			// listener, the face added here reached), and refuses a
			// page's Origin and a Host other than the socket's.
			sc, err := daemon.SocketClient(sock)
			if err != nil {
				t.Fatal(err)
			}
			sc.CheckRedirect, sc.Timeout = guardClient.CheckRedirect, guardClient.Timeout
			defer sc.CloseIdleConnections()
			local := "http://" + daemon.SocketHost
			for _, rq := range reqs {
				before := reached.Load()
				status, refused := guardDo(t, sc, local, rq.method, rq.path)
				if refused {
					t.Errorf("%s %s on the socket: %d, want it served (the owner's)", rq.method, rq.path, status)
				}
				if _, own := ownCred[byPattern[rq.pattern].Endpoint]; m.open() && !own {
					if want, _ := guardDo(t, guardClient, base, rq.method, rq.path); status != want {
						t.Errorf("%s %s on the socket: %d, on the listener %d; want the same", rq.method, rq.path, status, want)
					}
				}
				if rq.pattern == "/added-later/" && reached.Load() == before {
					t.Errorf("%s %s on the socket did not reach the face mounted with Handle", rq.method, rq.path)
				}
				for _, trick := range [][]string{{"Origin", "http://localhost"}, {"Origin", "null"}, {"Host", "evil.example"}, {"Host", "127.0.0.1"}} {
					if status, _ := guardDo(t, sc, local, rq.method, rq.path, trick...); status != http.StatusForbidden {
						t.Errorf("%s %s on the socket with %s: %q: %d, want 403", rq.method, rq.path, trick[0], trick[1], status)
					}
				}
				checked += 5
			}
			// An OAuth token without an endpoint's scope: 403, and the
			// challenge names the scopes to step up to.
			if m.oauth() {
				for _, p := range []string{"mcp", "sse", "message", "ws"} {
					req, _ := http.NewRequest("GET", base+"/e/alpha/"+p, nil)
					req.Header.Set(headers[credOAuth][0], headers[credOAuth][1])
					resp, err := guardClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if www := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden ||
						!strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, `scope="alpha"`) {
						t.Errorf("GET /e/alpha/%s with %s: %d, WWW-Authenticate %q; want 403 insufficient_scope naming alpha", p, credNames[credOAuth], resp.StatusCode, www)
					}
				}
			}
			t.Logf("%d routes, %d requests checked (on the listener and the socket)", len(routes), checked)
		})
	}
}

// pinAccess checks which routes are not the owner's alone: exactly those
// listed here, each with the access it has, an open or public one with a
// reason. A route added with a weaker access fails here until it is
// listed.
func pinAccess(t *testing.T, m guardMode, routes []guard.Route) {
	t.Helper()
	want := map[string]guard.Access{
		"/mcp": guard.AccessMCP, "/sse": guard.AccessMCP, "/message": guard.AccessMCP, "/ws": guard.AccessMCP,
		"/api/v1/": guard.AccessAdmin, "/metrics": guard.AccessAdmin,
		"GET /healthz": guard.AccessPublic, "GET /readyz": guard.AccessPublic,
	}
	if uiAt("") != "" {
		for _, p := range []string{"/login", "/logout", "/static/"} {
			want[p] = guard.AccessOpen
		}
	}
	wantEndpoint := map[string]string{}
	for _, e := range guardEndpoints {
		for _, p := range []string{"mcp", "sse", "message", "ws"} {
			want["/e/"+e.Name+"/"+p] = guard.AccessMCP
			wantEndpoint["/e/"+e.Name+"/"+p] = e.Name
		}
	}
	if m.oauth() {
		want["/.well-known/oauth-protected-resource"] = guard.AccessPublic
		want["/.well-known/oauth-protected-resource/mcp"] = guard.AccessPublic
		for _, e := range guardEndpoints { // each named endpoint is a resource of its own
			want["/.well-known/oauth-protected-resource/e/"+e.Name+"/mcp"] = guard.AccessPublic
		}
	}
	have := map[string]bool{}
	for _, rt := range routes {
		have[rt.Pattern] = true
		w, listed := want[rt.Pattern]
		switch {
		case !listed && rt.Access != guard.AccessOwner:
			t.Errorf("route %q is %s, not the owner's alone: list it in pinAccess if it must be", rt.Pattern, rt.Access)
		case listed && rt.Access != w:
			t.Errorf("route %q is %s, want %s", rt.Pattern, rt.Access, w)
		}
		if rt.Endpoint != wantEndpoint[rt.Pattern] {
			t.Errorf("route %q is of the endpoint %q, want %q", rt.Pattern, rt.Endpoint, wantEndpoint[rt.Pattern])
		}
		if (rt.Access == guard.AccessOpen || rt.Access == guard.AccessPublic) && rt.Reason == "" {
			t.Errorf("route %q is %s without a reason", rt.Pattern, rt.Access)
		}
	}
	for p := range want {
		if !have[p] {
			t.Errorf("no route %q", p)
		}
	}
	if !have["/added-later/"] {
		t.Errorf("the route mounted with Handle is not among the daemon's routes")
	}
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// requestsOf are the requests the walk sends for a route: its method (GET
// and POST when it names none, GET alone for an open or public route,
// whose POSTs are the face's own business: a login with a wrong token is
// a 401 of the login page), to a path it matches.
func requestsOf(rt guard.Route) []guardRequest {
	methods := []string{"GET", "POST"}
	if rt.Access == guard.AccessOpen || rt.Access == guard.AccessPublic {
		methods = methods[:1]
	}
	p := rt.Pattern
	if m, rest, ok := strings.Cut(p, " "); ok {
		methods, p = []string{m}, rest
	}
	p = strings.ReplaceAll(p, "{$}", "")
	p = pathParam.ReplaceAllString(p, "x")
	if strings.HasSuffix(p, "/") && p != "/" {
		p += "x"
	}
	var out []guardRequest
	for _, m := range methods {
		out = append(out, guardRequest{rt.Pattern, m, p})
	}
	return out
}

// guardClient answers redirects itself (a refusal of the web UI is a 303
// to its login page), and bounds each request.
var guardClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       30 * time.Second,
}

// guardDo sends a request with the headers given (and the CSRF header a
// page's script sends, and a JSON body on a POST, so that a face's own
// checks do not answer for the guard) and returns its status and whether
// the guard refused it: 401, 403, or the web UI's 303 to /login. It reads
// no more than the headers: a stream (SSE, events) stays open otherwise.
func guardDo(t *testing.T, hc *http.Client, base, method, path string, hdr ...string) (int, bool) {
	t.Helper()
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Switchboard-CSRF", "1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	refused := resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden ||
		resp.StatusCode == http.StatusSeeOther && resp.Header.Get("Location") == "/login"
	return resp.StatusCode, refused
}

// serveGuarded runs a daemon in mode m with serve's faces (mountFaces),
// no MCP server and a local socket, until the test ends; more mounts what
// the test adds. It returns the URL to reach it at (127.0.0.1, whatever
// it listens on) and its socket.
func serveGuarded(t *testing.T, m guardMode, more func(*daemon.Daemon)) (string, string, *daemon.Daemon) {
	t.Helper()
	return serveConfig(t, m.listen, &config.Config{Gateway: m.gw, Endpoints: guardEndpoints}, more)
}

// serveConfig serves the daemon of cfg, with the faces serve mounts, on
// listen and a local socket, once it is ready.
func serveConfig(t *testing.T, listen string, cfg *config.Config, more func(*daemon.Daemon)) (string, string, *daemon.Daemon) {
	t.Helper()
	cfg.State.Database = filepath.Join(t.TempDir(), "s.db")
	ln, err := daemon.Listen(listen, cfg.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sb") // a socket's path is bounded to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "switchboard", "t.sock")
	ready := make(chan struct{}, 1)
	d, err := daemon.New(t.Context(), ln, &daemon.Options{Config: cfg, Socket: sock, OnReady: func([]host.ServerStatus) { ready <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	mountFaces(d, nil)
	if more != nil {
		more(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		guardClient.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the daemon was never ready")
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	base := fmt.Sprintf("http://127.0.0.1:%s", port)
	// Ready may come before Run serves (there is no server to wait for);
	// once a probe is answered, every route is registered.
	if status, _ := guardDo(t, guardClient, base, "GET", "/healthz"); status != http.StatusOK {
		t.Fatalf("GET /healthz: %d", status)
	}
	if d.Socket() != sock {
		t.Fatalf("the daemon serves no socket (Socket() = %q)", d.Socket())
	}
	return base, sock, d
}
