package ui_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/ui"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// canary is a secret's value: no page may contain it.
const canary = "canary-ui-secret-41d7e2"

// served is a daemon with the UI on loopback until the test ends.
type served struct {
	t   testing.TB
	url string
	d   *daemon.Daemon
	bin string // the fixture server's binary
}

// serve runs a daemon over the fixture servers given (id → flags) with
// the UI mounted, and waits until it is ready.
func serve(t testing.TB, servers map[string][]string) *served {
	t.Helper()
	bin := interop.Build(t, fixturePkg)
	var list []config.Server
	for id, flags := range servers {
		list = append(list, config.Server{ID: id, Transport: config.TransportStdio, Command: bin, Args: flags})
	}
	return serveServers(t, list...)
}

// serveServers is serve with the servers' configuration given; each gets
// the canary in its environment.
func serveServers(t testing.TB, servers ...config.Server) *served {
	t.Helper()
	return serveWith(t, nil, servers...)
}

// serveWith is serveServers with more options: opts changes the
// daemon's (its Config holds the servers and the state database).
func serveWith(t testing.TB, opts func(*daemon.Options), servers ...config.Server) *served {
	t.Helper()
	return serveUI(t, opts, nil, servers...)
}

// serveUI is serveWith with the UI's options.
func serveUI(t testing.TB, opts func(*daemon.Options), uiOpts *ui.Options, servers ...config.Server) *served {
	t.Helper()
	t.Setenv("SB_UI_CANARY", canary)
	bin := interop.Build(t, fixturePkg)
	cfg := &config.Config{Servers: servers}
	for i := range cfg.Servers {
		cfg.Servers[i].Env = map[string]string{"CANARY": "{{env.SB_UI_CANARY}}"}
	}
	cfg.State.Database = filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(context.Background(), cfg.State.Database, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ln, err := daemon.Listen("127.0.0.1:0", cfg.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{}, 1)
	o := &daemon.Options{Config: cfg, Store: st, OnReady: func([]host.ServerStatus) { ready <- struct{}{} }}
	if opts != nil {
		opts(o)
	}
	d, err := daemon.New(t.Context(), ln, o)
	if err != nil {
		t.Fatal(err)
	}
	ui.New(d, uiOpts).Mount(d)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the daemon was never ready")
	}
	return &served{t: t, url: "http://" + ln.Addr().String(), d: d, bin: bin}
}

// noRedirects answers a redirect itself, for the test to see.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// do sends a request and returns the answer's status, headers and body;
// the body must not hold the canary.
func (s *served) do(method, path string, form url.Values, hdr ...string) (int, http.Header, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(b), canary) {
		s.t.Errorf("%s %s: the answer holds the secret's value", method, path)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestEmbeddedHTMX: the htmx the binary serves is the one static/README.md
// names, byte for byte.
func TestEmbeddedHTMX(t *testing.T) {
	readme, err := os.ReadFile("static/README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`sha256 ([0-9a-f]{64})`).FindStringSubmatch(string(readme))
	if want == nil {
		t.Fatal("static/README.md names no sha256")
	}
	s := serve(t, map[string][]string{"a": nil})
	status, hdr, body := s.do("GET", "/static/htmx.min.js", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /static/htmx.min.js: %d", status)
	}
	sum := sha256.Sum256([]byte(body))
	if got := hex.EncodeToString(sum[:]); got != want[1] {
		t.Errorf("the embedded htmx.min.js has sha256 %s, static/README.md says %s", got, want[1])
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("Content-Type %q", ct)
	}
}

// attrRef finds every attribute that makes the browser fetch or go
// somewhere. html/template always writes attribute values in double
// quotes.
var attrRef = regexp.MustCompile(`\s(src|href|action|hx-get|hx-post|poster|srcset|formaction)="([^"]*)"`)

// TestPagesAreLocal: every page carries the Content-Security-Policy,
// and every reference in it is to this origin (or a fragment, or a data:
// image a tool returned): the page works on a machine with no internet.
func TestPagesAreLocal(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	pages := []string{"/servers", "/servers/a", "/tools", "/tools?q=echo", "/tools/changes", "/tools/mcp_a_echo", "/tools/mcp_a_content", "/runs", "/agents", "/login"}
	for _, p := range pages {
		status, hdr, body := s.do("GET", p, nil)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d %s", p, status, body)
			continue
		}
		if got := hdr.Get("Content-Security-Policy"); got != ui.ContentSecurityPolicy || !strings.HasPrefix(got, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", p, got)
		}
		refs := attrRef.FindAllStringSubmatch(body, -1)
		if len(refs) < 3 {
			t.Errorf("GET %s: only %d references found; is the page whole?\n%s", p, len(refs), body)
		}
		for _, m := range refs {
			if !local(m[2]) {
				t.Errorf("GET %s: %s=%q is not on this origin", p, m[1], m[2])
			}
		}
		for _, want := range []string{`<script src="/static/htmx.min.js">`, `<link rel="stylesheet" href="/static/style.css">`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: no %s", p, want)
			}
		}
	}
	// The content tool's result: its image is inline, a data: URL.
	status, _, body := s.do("POST", "/tools/mcp_a_content/call", url.Values{}, ui.CSRFHeader, "1")
	if status != http.StatusOK || !strings.Contains(body, `src="data:image/png;base64,`) {
		t.Errorf("calling content: %d\n%s", status, body)
	}
	for _, m := range attrRef.FindAllStringSubmatch(body, -1) {
		if !local(m[2]) && !strings.HasPrefix(m[2], "data:image/png;base64,") && !strings.HasPrefix(m[2], "data:audio/wav;base64,") {
			t.Errorf("the result's %s=%q is not on this origin", m[1], m[2])
		}
	}
	// Nothing refers to another origin in the stylesheet either.
	_, _, css := s.do("GET", "/static/style.css", nil)
	if strings.Contains(css, "url(") || strings.Contains(css, "@import") {
		t.Errorf("style.css fetches something: %s", css)
	}
}

func local(ref string) bool {
	u, err := url.Parse(ref)
	if err != nil {
		return false
	}
	return u.Scheme == "" && u.Host == "" && !strings.HasPrefix(ref, "//")
}

// TestCSRF: a request that changes state without the CSRF header, or
// marked cross-site, is refused and changes nothing.
func TestCSRF(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	form := url.Values{"id": {"x"}, "command": {s.bin}}
	for _, hdr := range [][]string{nil, {ui.CSRFHeader, "0"}, {ui.CSRFHeader, "1", "Sec-Fetch-Site", "cross-site"}} {
		status, _, body := s.do("POST", "/servers", form, hdr...)
		if status != http.StatusForbidden {
			t.Errorf("POST /servers with %q: %d, want 403\n%s", hdr, status, body)
		}
	}
	if _, err := s.d.GetServer(context.Background(), "x"); err == nil {
		t.Error("a refused request added the server")
	}
	status, _, body := s.do("POST", "/servers", form, ui.CSRFHeader, "1", "Sec-Fetch-Site", "same-origin")
	if status != http.StatusOK {
		t.Fatalf("POST /servers with the header: %d\n%s", status, body)
	}
	if _, err := s.d.GetServer(context.Background(), "x"); err != nil {
		t.Errorf("the server was not added: %v", err)
	}
}

// TestFormErrorsByField: the add form's and the try-it form's problems
// are shown next to their fields, and nothing is added or called.
func TestFormErrorsByField(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	csrf := []string{ui.CSRFHeader, "1"}
	// A private URL: the URL floor, next to the url field.
	status, _, body := s.do("POST", "/servers", url.Values{"id": {"p"}, "url": {"http://10.1.2.3/mcp"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="f-url-err" class="error">[^<]+`).MatchString(body) {
		t.Errorf("a private URL: %d\n%s", status, body)
	}
	// A credential written out, next to env.
	status, _, body = s.do("POST", "/servers", url.Values{"id": {"q"}, "command": {s.bin}, "env": {"API_KEY=sk-live-0123456789abcdef0123456789"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="f-env-err" class="error">env.API_KEY: [^<]*credential`).MatchString(body) {
		t.Errorf("a literal credential: %d\n%s", status, body)
	}
	for _, id := range []string{"p", "q"} {
		if _, err := s.d.GetServer(context.Background(), id); err == nil {
			t.Errorf("server %s was added", id)
		}
	}
	// add {a, b number}: a field that is not a number, one missing.
	fields := fieldIDs(t, s, "/tools/mcp_a_add")
	status, _, body = s.do("POST", "/tools/mcp_a_add/call", url.Values{fields["a"]: {"seven"}}, csrf...)
	if status != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `id="`+fields["a"]+`-err" class="error">not a number`) ||
		!strings.Contains(body, `id="`+fields["b"]+`-err" class="error">required`) {
		t.Errorf("add with a bad a and no b: %d\n%s", status, body)
	}
	// A number beyond a float: the host's validator refuses it at /a,
	// shown next to a.
	status, _, body = s.do("POST", "/tools/mcp_a_add/call", url.Values{fields["a"]: {"1e400"}, fields["b"]: {"1"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="`+fields["a"]+`-err" class="error">[^<]+`).MatchString(body) {
		t.Errorf("add with a = 1e400: %d\n%s", status, body)
	}
	status, _, body = s.do("POST", "/tools/mcp_a_add/call", url.Values{fields["a"]: {"2"}, fields["b"]: {"40"}}, csrf...)
	if status != http.StatusOK || !strings.Contains(body, "42") {
		t.Errorf("add 2 40: %d\n%s", status, body)
	}
}

// fieldIDs returns the try-it form's input id of each argument, by its
// label.
func fieldIDs(t *testing.T, s *served, page string) map[string]string {
	t.Helper()
	_, _, body := s.do("GET", page, nil)
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`<label for="(arg-\d+)">([^ <]+)`).FindAllStringSubmatch(body, -1) {
		out[m[2]] = m[1]
	}
	if len(out) == 0 {
		t.Fatalf("%s has no argument fields:\n%s", page, body)
	}
	return out
}

// TestServerPage: a server's page lists its resources (one read in place)
// and prompts; a run-time server's edit form saves the version it was
// made from, and a save over a change made meanwhile is refused, saying
// so, and changes nothing (the API's If-Match).
func TestServerPage(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	csrf := []string{ui.CSRFHeader, "1"}
	status, _, body := s.do("GET", "/servers/a", nil)
	if status != http.StatusOK || !strings.Contains(body, "test://static/1") || !strings.Contains(body, "greet") {
		t.Errorf("GET /servers/a: %d, want its resource test://static/1 and prompt greet\n%s", status, body)
	}
	status, _, body = s.do("GET", "/servers/a/resource?uri="+url.QueryEscape("test://static/1"), nil)
	if status != http.StatusOK || !strings.Contains(body, "static resource 1") {
		t.Errorf("reading test://static/1: %d\n%s", status, body)
	}

	entry, _ := json.Marshal(map[string]any{"command": s.bin, "description": "first"})
	if _, err := s.d.AddServer(context.Background(), "b", entry); err != nil {
		t.Fatal(err)
	}
	status, _, body = s.do("GET", "/servers/b", nil)
	if status != http.StatusOK || !strings.Contains(body, `name="version" value="1"`) {
		t.Fatalf("GET /servers/b: %d, want the edit form of version 1\n%s", status, body)
	}
	edit := func(version, description string) (int, string) {
		status, _, body := s.do("POST", "/servers/b", url.Values{"command": {s.bin}, "description": {description}, "version": {version}}, csrf...)
		return status, body
	}
	status, body = edit("1", "second")
	if status != http.StatusOK || !strings.Contains(body, "Saved") || !strings.Contains(body, `name="version" value="2"`) {
		t.Fatalf("saving version 1: %d, want saved and the form at version 2\n%s", status, body)
	}
	status, body = edit("1", "stale")
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "changed since this form was opened") {
		t.Errorf("saving over a change: %d, want 422 saying it changed\n%s", status, body)
	}
	m, err := s.d.GetServer(context.Background(), "b")
	if err != nil || m.Version != 2 || !strings.Contains(string(m.Config), `"second"`) {
		t.Errorf("after a stale save: version %d %s (%v), want version 2, description second", m.Version, m.Config, err)
	}
}

// TestServerButtonsCarryVersion: the Disable, Enable and Remove buttons
// send the version of the row they were shown on; pressed after a change
// saved meanwhile (here through the daemon, as the API or another replica
// would), they are refused with 412, saying so, change nothing, and give
// back the table as it is now.
func TestServerButtonsCarryVersion(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	csrf := []string{ui.CSRFHeader, "1"}
	ctx := context.Background()
	entry, _ := json.Marshal(map[string]any{"command": s.bin})
	if _, err := s.d.AddServer(ctx, "b", entry); err != nil {
		t.Fatal(err)
	}
	_, _, page := s.do("GET", "/servers", nil)
	for _, button := range []string{`hx-post="/servers/b/disable" hx-vals='{"version": "1"}'`} {
		if !strings.Contains(page, button) {
			t.Fatalf("the servers page has no %s\n%s", button, page)
		}
	}
	_, _, confirm := s.do("GET", "/servers/b/remove?confirm=1", nil)
	if !strings.Contains(confirm, `hx-post="/servers/b/delete" hx-vals='{"version": "1"}'`) {
		t.Fatalf("the remove confirmation carries no version\n%s", confirm)
	}

	// Changed meanwhile: version 2.
	if _, err := s.d.SetServerEnabled(ctx, "b", true, 0); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"disable", "delete"} {
		status, _, body := s.do("POST", "/servers/b/"+op, url.Values{"version": {"1"}}, csrf...)
		if status != http.StatusPreconditionFailed || !strings.Contains(body, "b was changed since this page showed it") || !strings.Contains(body, `"version": "2"`) {
			t.Errorf("%s at a stale version: %d, want 412 saying so with the table at version 2\n%s", op, status, body)
		}
	}
	m, err := s.d.GetServer(ctx, "b")
	if err != nil || !m.Enabled || m.Version != 2 {
		t.Fatalf("after the stale presses: %+v, %v; want b enabled, at version 2", m, err)
	}
	// At the version shown: done.
	if status, _, body := s.do("POST", "/servers/b/disable", url.Values{"version": {"2"}}, csrf...); status != http.StatusOK || !strings.Contains(body, "Disabled b.") {
		t.Errorf("disable at the version shown: %d\n%s", status, body)
	}
	if status, _, body := s.do("POST", "/servers/b/delete", url.Values{"version": {"3"}}, csrf...); status != http.StatusOK || !strings.Contains(body, "Deleted b.") {
		t.Errorf("delete at the version shown: %d\n%s", status, body)
	}
}

// TestServerFindings: a server's page lists what the description scanner
// found in its tools, and in the prompts and resources the page lists (the
// name, its kind, rule, field, the text escaped, the action), from the
// first view; a server with none shows no such section.
func TestServerFindings(t *testing.T) {
	bin := interop.Build(t, fixturePkg)
	s := serveServers(t, config.Server{ID: "p", Transport: config.TransportStdio, Command: bin, Args: []string{"-poisoned", "-poisoned-declared"}},
		config.Server{ID: "c", Transport: config.TransportStdio, Command: bin})
	status, _, body := s.do("GET", "/servers/p", nil)
	if status != http.StatusOK || !strings.Contains(body, `id="server-findings"`) {
		t.Fatalf("p's page lists no findings: %d\n%s", status, body)
	}
	for _, want := range []struct{ kind, name string }{{"tool", "fact_of_the_day"}, {"prompt", "daily_quote"}, {"resource", "test://poisoned/notes"}} {
		row := `<tr data-finding="` + want.kind + `/` + regexp.QuoteMeta(want.name) + `/[a-z-]+"><th scope="row">` + regexp.QuoteMeta(want.name) +
			`</th><td>` + want.kind + `</td><td>[a-z-]+</td><td><code>[^<]+</code></td><td><code>[^<]*</code></td><td>warn</td></tr>`
		if !regexp.MustCompile(row).MatchString(body) {
			t.Errorf("p's page does not list %s %s's findings:\n%s", want.kind, want.name, body)
		}
	}
	if _, _, clean := s.do("GET", "/servers/c", nil); strings.Contains(clean, `id="server-findings"`) {
		t.Errorf("c's page lists findings it does not have")
	}
}
