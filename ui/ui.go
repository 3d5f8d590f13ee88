// Package ui is Switchboard's web UI (issue 16 §2): server-rendered pages
// served by `switchboard serve` at /, beside /mcp and the REST API. Pages
// are Go html/template (contextual escaping: no HTML is built from
// strings); htmx, vendored in static/ and embedded with go:embed, swaps
// fragments in place. There is no Node in the build and no request leaves
// the page's origin: every script, stylesheet and image is served from
// /static/, and a Content-Security-Policy of default-src 'self' (images
// and audio also from data: URLs, which tool results carry) says so to
// the browser.
//
// Pages:
//   - /servers: every server with its live state and tool count (a poll
//     of /servers/live each second answers only what changed, as htmx
//     out-of-band swaps, so a focused button is never replaced), add a
//     server, and per server restart, refresh its tools, enable, disable,
//     delete; /servers/{id}: its status, its incidents (restarts,
//     failures, circuit-breaker openings, tool-list changes, held
//     definitions) and recent stderr (host.History; a poll of
//     /servers/{id}/history redraws them, and the state, while open),
//     its pinned tool definitions, tools, resources and prompts, and the
//     edit form of a run-time server.
//   - /endpoints: the named endpoints (issue 26) with their paths,
//     origin, state (and why one is not served), servers, tool patterns
//     and auth kind (never a token), and add one; /endpoints/{name}: the
//     tools it offers, and the edit form and delete of one added at run
//     time (servers and tools by checkboxes, with a search, and the tools
//     it would offer shown before saving).
//   - /tools: search (the BM25 ranking of agent discovery); /tools/{name}:
//     its schema and a "try it" form generated from its input schema,
//     with each validation error next to its field and the result
//     rendered (text, JSON, images, audio, resource links and embedded
//     resources), the equivalent `switchboard call` command line, and
//     this browser's last calls of the tool, each to run again or load
//     into the form (history.go: in memory, per browser, bounded); a
//     question the tool asks during the call is a form on the page
//     (ask.go), its answer sent back to the call.
//   - /tools/changes: the tool definitions held for approval (a pinned
//     definition that changed, a new one under pin = "approve", one the
//     scanner held), each with why, since when and its diff, and an
//     Approve button that trusts the definition shown (its digest): one
//     that changed again since the page was drawn is refused. ?server=
//     shows one server's; the Tools page links here, and a server's page
//     when it has held tools.
//   - /usage: calls, errors and latency per server and tool, runs and
//     tokens per agent and workflow, over the last hour or day; and over
//     time, charts of calls and errors and of latency p50/p95, of every
//     server or one (?server=, ?tool=).
//   - /registry: search the MCP registries serve reads; /registry/add:
//     an entry's values as fields (a secret one as a placeholder only)
//     and Add, which adds it pinned as a run-time server (issue 30).
//
// Charts (chart.go, templates/charts.html) are inline SVG laid out in Go
// and drawn by the templates: usage over time, a run's steps on a time
// axis (/runs/{id}), a sparkline per server (/servers). The stylesheet
// follows the system's light or dark preference, and the charts with it.
//
// Security: the UI is the owner's. The daemon mounts its pages with
// Daemon.Handle, behind the listener's one guard (Host, Origin, and the
// [gateway] auth_token or the session cookie a login sets; an OAuth
// access token never opens them); see Mount. A browser without a session
// is sent to /login (303). A request that changes state (any method but
// GET and HEAD) must carry the header "Switchboard-CSRF: 1" and not come
// from another site, by the guard's one cross-origin check
// (guard/crossorigin.go): htmx sends the header on every request
// (hx-headers on <body>); the login form alone may be a plain same-origin
// form post (TakesForm). Every page passes through the host's redactor
// before it is written.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/registry"
)

//go:embed static
var staticFS embed.FS

//go:embed templates/*.html
var templateFS embed.FS

// CSRFHeader must be on every request that changes state, with value "1"
// (the guard's cross-origin check; htmx sends it on every request).
const CSRFHeader = guard.CSRFHeader

// ContentSecurityPolicy is sent with every answer: nothing but this origin
// (data: images and audio, as tool results carry them inline), no plugins,
// no framing, forms posting only here.
const ContentSecurityPolicy = "default-src 'self'; img-src 'self' data:; media-src 'self' data:; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options configures [New]. Nil means defaults.
type Options struct {
	Logger *slog.Logger
	// Registries are the MCP registries the /registry page searches and
	// adds from; ContainerRuntime is "docker" or "podman" for an entry
	// that is an OCI image ("": refused).
	Registries       []registry.Named
	ContainerRuntime string
}

// UI serves the web UI of a daemon.
type UI struct {
	d   *daemon.Daemon
	log *slog.Logger
	mux *http.ServeMux
	// pages are each page's templates, parsed on first use.
	pages map[string]func() *template.Template
	limit loginLimiter // failed logins per client address
	tries history      // the try-it calls of each browser (history.go)
	asks  asks         // the question a try waits on, of each browser (ask.go)

	registries       []registry.Named
	containerRuntime string
}

// Paths are the patterns of the UI's pages, each mounted by [UI.Mount]
// for the owner alone. The gateway keeps /mcp, /sse, /message and /ws, the
// REST API /api/v1/.
var Paths = []string{"/{$}", "/servers", "/servers/", "/endpoints", "/endpoints/", "/tools", "/tools/", "/runs", "/runs/", "/tasks", "/tasks/", "/workflows/", "/agents", "/agents/", "/usage", "/registry", "/registry/"}

// OpenPaths are the patterns [UI.Mount] mounts for anyone (past the Host
// and Origin checks), each with why it needs no credential.
var OpenPaths = map[string]string{
	"/login":   "the login page: it takes the token typed, and a browser without a session is sent there",
	"/logout":  "a browser whose cookie is void (the daemon restarted) can still clear it; the CSRF header keeps other sites from it",
	"/static/": "the stylesheet and script the login page loads: files built into the binary, the same for everyone",
}

// pageNames are the UI's pages, each templates/NAME.html with the layout,
// parts and charts.
var pageNames = []string{"servers", "server", "endpoints", "endpoint", "tools", "tool", "changes", "runs", "run", "tasks", "task", "workflow", "agents", "agent-run", "login", "usage", "registry"}

// parsePage parses page p's templates, for d.
func parsePage(d *daemon.Daemon, p string) (*template.Template, error) {
	return template.New("").Funcs(funcs).Funcs(template.FuncMap{"tokenRequired": d.TokenRequired}).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/charts.html", "templates/"+p+".html")
}

// New returns the UI of d; mount it with [UI.Mount] before d.Run.
func New(d *daemon.Daemon, opts *Options) *UI {
	u := &UI{d: d, mux: http.NewServeMux(), pages: map[string]func() *template.Template{}}
	if opts != nil {
		u.registries, u.containerRuntime = opts.Registries, opts.ContainerRuntime
	}
	if opts != nil && opts.Logger != nil {
		u.log = opts.Logger
	} else {
		u.log = slog.New(slog.DiscardHandler)
	}
	// Each page's templates are parsed when it is first rendered, not
	// here: parsing all of them took 5 MB of allocations and kept 4 MB
	// live at every serve's start, UI used or not (docs/performance.md,
	// "Size and start-up"). TestPagesParse parses every page, so a
	// template that does not parse still fails the tests.
	for _, p := range pageNames {
		u.pages[p] = sync.OnceValue(func() *template.Template { return template.Must(parsePage(d, p)) })
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	u.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	u.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/servers", http.StatusSeeOther)
	})
	u.serverRoutes()
	u.endpointRoutes()
	u.toolRoutes()
	u.changeRoutes()
	u.runRoutes()
	u.taskRoutes()
	u.agentRoutes()
	u.loginRoutes()
	u.usageRoutes()
	u.registryRoutes()
	return u
}

// Mount mounts the UI on d: its pages at [Paths] for the owner
// (d.Handle), its login page, log-out and static files at [OpenPaths] for
// anyone (d.HandleOpen), behind the Host and cross-origin checks alone.
func (u *UI) Mount(d *daemon.Daemon) {
	for _, p := range Paths {
		d.Handle(p, u)
	}
	for _, p := range slices.Sorted(maps.Keys(OpenPaths)) {
		d.HandleOpen(p, OpenPaths[p], u)
	}
}

func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with a form it posts (the Fetch standard), which the
	// guard's Origin check cannot tell from a sandboxed page of another
	// site, and refuses; under same-origin it sends this origin, and
	// nothing (no Referer) to any other.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	u.mux.ServeHTTP(w, r)
}

// TakesForm: the login form alone may be a plain form post without the
// CSRF header, which the guard takes when the browser marks it
// Sec-Fetch-Site: same-origin (guard.FormTaker): it must work before any
// script has loaded.
func (u *UI) TakesForm(r *http.Request) bool { return r.URL.Path == "/login" }

// Refuse renders the guard's refusals (guard.Refuser): a browser
// without a session is sent to the login page (a 303, or HX-Redirect for
// htmx, whose request would follow a 303 itself and swap the login page
// into the page it came from); anything else is plain text.
func (u *UI) Refuse(w http.ResponseWriter, r *http.Request, rf guard.Refusal) {
	if rf.Status == http.StatusUnauthorized && (r.Method == http.MethodGet || r.Method == http.MethodHead || r.Header.Get("HX-Request") == "true") {
		w.Header().Del("WWW-Authenticate")
		w.Header().Set("Cache-Control", "no-store")
		redirect(w, r, "/login")
		return
	}
	http.Error(w, rf.Msg, rf.Status)
}

// chrome is what every page's layout needs.
type chrome struct {
	Title string
	Nav   string // the menu entry to mark current
}

// render writes template name of page, redacted: no secret the host
// resolved reaches the browser, whatever put it in data.
func (u *UI) render(w http.ResponseWriter, status int, page, name string, data any) {
	var buf bytes.Buffer
	if err := u.pages[page]().ExecuteTemplate(&buf, name, data); err != nil {
		u.log.Error("ui: rendering", "page", page, "template", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	out := buf.String()
	if h := u.d.Host(); h != nil {
		out = h.Redactor().Redact(out)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(out))
}

// flash answers a message alone, as an out-of-band swap of #flash.
func (u *UI) flash(w http.ResponseWriter, status int, msg string, isErr bool) {
	u.render(w, status, "servers", "flash", flashData{Msg: msg, Err: isErr, OOB: true})
}

type flashData struct {
	Msg string
	Err bool
	OOB bool
}

// redirect sends the browser to path: htmx follows HX-Redirect (a 303
// would be followed by its XMLHttpRequest and swapped into the page), a
// plain form post the 303.
func redirect(w http.ResponseWriter, r *http.Request, path string) {
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", path)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// hostOr answers 503 when the daemon has no host.
func (u *UI) hostOr(w http.ResponseWriter) *host.Host {
	h := u.d.Host()
	if h == nil {
		http.Error(w, "the daemon is not running", http.StatusServiceUnavailable)
	}
	return h
}

var funcs = template.FuncMap{
	"editOf": func(id string, version int64, f form) editData { return editData{ID: id, Version: version, Form: f} },
	"indent": indent,
	"millis": millis,
	"last":   func(ts []chartTick) int { return len(ts) - 1 },
	"stamp":  stamp,
}

// hashOf is a short digest of what a page shows, for its poll to say
// whether anything changed.
func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%q\n", p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
