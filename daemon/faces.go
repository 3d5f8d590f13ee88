package daemon

// The faces on the daemon's listener and their one guard. Run registers
// every route on one guard.Guard — the gateway's endpoints, the health
// probes, /metrics, and the faces mounted with Handle, HandleAdmin and
// HandleOpen — each with what it asks of a request (guard.Access). The
// guard is the listener's handler: no route can be served around it, a
// route mounted without a word is the owner's alone, and a request that
// matches no route is checked as the owner's too. The routes that need no
// credential say why (Routes lists them with their reasons):
//
//   - /healthz and /readyz: a load balancer has no token, and may send
//     any Host; the answer is "ok" or "not ready", nothing more.
//   - the OAuth protected resource metadata (with [gateway.auth]): a
//     client reads it to learn where to get a token.
//   - the web UI's login page, its log-out, and the static files its page
//     loads (a stylesheet and htmx, built into the binary), past the Host
//     and Origin checks.
//
// The local socket (Options.Socket) serves the same guard, every route on
// it; a request that comes there is the owner's, by the socket's file
// permissions (socket.go).

import (
	"context"
	"net/http"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
)

// face is a handler mounted with Handle, HandleAdmin or HandleOpen.
type face struct {
	pattern string
	access  guard.Access
	reason  string
	h       http.Handler
}

// Handle mounts a face for the owner alone (guard.AccessOwner): the
// [gateway] auth_token as a bearer token or as the session cookie of a
// login (Login), or anyone on a loopback listener with no credential
// configured; never an OAuth access token. The web UI's pages are such a
// face. Call it before Run: Run registers it on the listener's guard,
// behind the Host and cross-origin checks too.
func (d *Daemon) Handle(pattern string, h http.Handler) {
	d.addFace(face{pattern, guard.AccessOwner, "", h})
}

// HandleAdmin mounts a management face as Handle does, and lets an OAuth
// access token with [gateway.auth] admin_scope use it too
// (guard.AccessAdmin): the REST API. Such a caller may see only what its
// grant covers: the face asks Grant and shows and does nothing else.
func (d *Daemon) HandleAdmin(pattern string, h http.Handler) {
	d.addFace(face{pattern, guard.AccessAdmin, "", h})
}

// HandleOpen mounts h for anyone, past the Host and cross-origin checks alone
// (guard.AccessOpen): a login page, which takes the token typed and
// checks it with Login, and the files it loads. reason says why it needs
// no credential; Routes lists it.
func (d *Daemon) HandleOpen(pattern, reason string, h http.Handler) {
	d.addFace(face{pattern, guard.AccessOpen, reason, h})
}

func (d *Daemon) addFace(f face) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faces = append(d.faces, f)
}

// probeReason is why the health probes need no credential.
const probeReason = "a load balancer's probe: it has no token and may send any Host; the answer is ok or not ready, nothing more"

// mount registers every route of the listener on gd: the gateway's
// endpoints, the probes, /metrics and the faces.
func (d *Daemon) mount(gd *guard.Guard, g *gateway.Gateway, token string) {
	g.Mount(gd, d.httpOptions())
	health := d.healthHandler()
	gd.Handle("GET /healthz", guard.AccessPublic, probeReason, health)
	gd.Handle("GET /readyz", guard.AccessPublic, probeReason, health)
	// Every server's series, whole: a scraper is an administrator.
	gd.Handle("/metrics", guard.AccessAdmin, "", d.tel.Handler())
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.faces {
		gd.Handle(f.pattern, f.access, f.reason, f.h)
	}
	d.authToken = token
	d.guard = gd
}

// httpOptions shape the gateway's endpoints from [gateway].
func (d *Daemon) httpOptions() *gateway.HTTPOptions {
	gw := d.opts.Config.Gateway
	return &gateway.HTTPOptions{SessionTimeout: gw.SessionTimeout, MaxSessions: gw.MaxSessions,
		MaxClientSessions: gw.MaxClientSessions, JSONResponse: gw.JSONResponse}
}

// Routes lists every route of the daemon's listener with what it asks of
// a request, by pattern; nil until Run has registered them (before it
// serves).
func (d *Daemon) Routes() []guard.Route {
	d.mu.Lock()
	gd := d.guard
	d.mu.Unlock()
	if gd == nil {
		return nil
	}
	return gd.Routes()
}

// Grant is what a caller may see of the servers, tools, resources and
// prompts (gateway.Grant).
type Grant = gateway.Grant

// Refusal is the guard's answer to a request it does not serve; a face
// with a method Refuse(http.ResponseWriter, *http.Request, Refusal)
// renders the refusals of its routes (guard.Refuser).
type Refusal = guard.Refusal

// CSRFHeader must be on every request that changes state on a face's
// route, with value "1" (the guard's cross-origin check).
const CSRFHeader = guard.CSRFHeader

// Grant is what the caller of a request may see, ctx being the request's:
// its OAuth access token's grant under [[gateway.auth.policy]], or
// everything for the owner (auth_token, the local socket, a loopback
// listener without credentials). The same Grant limits the token on
// /mcp.
func (d *Daemon) Grant(ctx context.Context) Grant {
	var policy []config.AuthPolicy
	if a := d.opts.Config.Gateway.Auth; a != nil {
		policy = a.Policy
	}
	return gateway.GrantOf(ctx, policy)
}

// Login checks token against [gateway] auth_token (in constant time) and
// returns the value of the session cookie (guard.SessionCookie) that
// stands for it on the faces mounted with Handle and HandleAdmin. It is
// false when token is not the auth token, and when none is set (nothing
// to log in to).
func (d *Daemon) Login(token string) (string, bool) {
	d.mu.Lock()
	want := d.authToken
	d.mu.Unlock()
	if want == "" || !guard.TokenEqual(token, want) {
		return "", false
	}
	return guard.SessionValue(want), true
}

// TokenRequired reports whether the faces need [gateway] auth_token (or
// the session cookie a login sets): a page then offers to log out.
func (d *Daemon) TokenRequired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.authToken != ""
}
