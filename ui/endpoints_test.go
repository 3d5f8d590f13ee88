package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/ui"
	"github.com/switchboardmcp/switchboard/workflow"
)

// serveEndpoints serves fixture servers a and b with a configured
// endpoint "conf" (a's echo and add, echo renamed) whose token is the
// canary, in file f.toml.
func serveEndpoints(t *testing.T) *served {
	t.Helper()
	bin := buildFixture(t)
	return serveWith(t, func(o *daemon.Options) {
		o.Config.Endpoints = []config.Endpoint{{
			Name: "conf", Servers: []string{"a"}, Tools: []string{"a_echo", "a_add"},
			Rename: map[string]string{"say": "mcp_a_echo"}, AuthToken: "{{env.SB_UI_CANARY}}",
			Source: config.Position{File: "f.toml", Line: 3},
		}}
	},
		config.Server{ID: "a", Transport: config.TransportStdio, Command: bin},
		config.Server{ID: "b", Transport: config.TransportStdio, Command: bin},
	)
}

// TestEndpointsList: the Endpoints page lists each endpoint's name,
// paths, origin, state (and why a stored one is not served), servers,
// tool patterns and auth kind, never its token; the menu links it.
func TestEndpointsList(t *testing.T) {
	s := serveEndpoints(t)
	ctx := context.Background()
	if _, err := s.d.AddEndpoint(ctx, "added", json.RawMessage(`{"servers":["b"],"tools":["b_echo"]}`)); err != nil {
		t.Fatal(err)
	}
	// A stored endpoint naming a server deleted afterwards fails.
	entry, _ := json.Marshal(map[string]any{"command": s.bin})
	if _, err := s.d.AddServer(ctx, "gone", entry); err != nil {
		t.Fatal(err)
	}
	if _, err := s.d.AddEndpoint(ctx, "broken", json.RawMessage(`{"servers":["gone"]}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.d.DeleteServer(ctx, "gone", 0); err != nil {
		t.Fatal(err)
	}
	status, _, body := s.do("GET", "/endpoints", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /endpoints: %d\n%s", status, body)
	}
	for _, want := range []string{
		`<a href="/endpoints" aria-current="page">Endpoints</a>`, // the menu
		`<a href="/endpoints/conf">conf</a>`, `<code>/e/conf/mcp</code>`, `<code>/e/conf/ws</code>`,
		`config file <span class="muted">(f.toml:3)</span>`, `<code>a_echo</code>, <code>a_add</code>`, `its own token`,
		`<a href="/endpoints/added">added</a>`, `<code>b_echo</code>`, `the gateway&#39;s`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the endpoints page has no %s", want)
		}
	}
	if !regexp.MustCompile(`(?s)data-endpoint="added".*?state-ready">served<`).MatchString(body) {
		t.Errorf("added is not shown served\n%s", body)
	}
	if !regexp.MustCompile(`(?s)data-endpoint="broken".*?state-failed">failed</span><span class="error block">[^<]*gone`).MatchString(body) {
		t.Errorf("broken is not shown failed naming the server gone\n%s", body)
	}
}

// TestEndpointPageTools: an endpoint's page lists the tools its clients
// are offered, by the names they see (a rename shown with what it calls),
// the same list a client of /e/NAME/mcp gets; a configured one is
// read-only, naming its file, and cannot be changed by a post.
func TestEndpointPageTools(t *testing.T) {
	s := serveEndpoints(t)
	status, _, body := s.do("GET", "/endpoints/conf", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /endpoints/conf: %d\n%s", status, body)
	}
	got := regexp.MustCompile(`data-tool="([^"]+)"`).FindAllStringSubmatch(body, -1)
	var names []string
	for _, m := range got {
		names = append(names, m[1])
	}
	if strings.Join(names, " ") != "mcp_a_add say" || !strings.Contains(body, "(calls mcp_a_echo)") {
		t.Errorf("conf offers %q, want [mcp_a_add say], say calling mcp_a_echo\n%s", names, body)
	}
	// The same as a client of the endpoint lists.
	listed := listTools(t, s, "/e/conf/mcp", canary)
	if strings.Join(listed, " ") != strings.Join(names, " ") {
		t.Errorf("a client of /e/conf/mcp lists %q, the page %q", listed, names)
	}
	if !strings.Contains(body, "Declared in a configuration file (f.toml:3): it is read-only here") || strings.Contains(body, `id="endpoint-form"`) {
		t.Errorf("conf's page offers to edit it, or does not name its file\n%s", body)
	}
	status, _, body = s.do("POST", "/endpoints/conf", url.Values{"server": {"a"}}, ui.CSRFHeader, "1")
	if status != http.StatusConflict || !strings.Contains(body, "read-only") || !strings.Contains(body, "f.toml:3") {
		t.Errorf("a post editing conf: %d, want 409 read-only naming f.toml:3\n%s", status, body)
	}
	if status, _, body := s.do("POST", "/endpoints/conf/delete", url.Values{}, ui.CSRFHeader, "1"); status != http.StatusConflict || !strings.Contains(body, "f.toml:3") {
		t.Errorf("a post deleting conf: %d, want 409 naming f.toml:3\n%s", status, body)
	}
	if status, _, body := s.do("GET", "/endpoints/nope", nil); status != http.StatusNotFound {
		t.Errorf("GET /endpoints/nope: %d\n%s", status, body)
	}
}

// TestEndpointAddEditDelete: the form previews the tools an endpoint
// would offer without saving; adds one; problems are shown beside their
// field and nothing is saved; the edit form saves the version it was
// made from and a save over a change made meanwhile is refused, saying
// so; delete asks first and carries the version.
func TestEndpointAddEditDelete(t *testing.T) {
	s := serveEndpoints(t)
	ctx := context.Background()
	csrf := []string{ui.CSRFHeader, "1"}

	// Preview: b checked, its echo and add checked, searched for "echo".
	status, _, body := s.do("POST", "/endpoints/form", url.Values{"name": {"x"}, "server": {"b"}, "tool": {"mcp_b_echo", "mcp_b_add"}, "search": {"echo"}}, csrf...)
	preview := regexp.MustCompile(`(?s)id="endpoint-preview">(.*?)</ul>`).FindStringSubmatch(body)
	if status != http.StatusOK || preview == nil || preview[1] != "<li>mcp_b_add</li><li>mcp_b_echo</li>" {
		t.Fatalf("preview: %d %q\n%s", status, preview, body)
	}
	if !strings.Contains(body, `<li hidden><label><input type="checkbox" name="tool" value="mcp_b_add" checked>`) ||
		!strings.Contains(body, `<li><label><input type="checkbox" name="tool" value="mcp_b_echo" checked>`) {
		t.Errorf("the search does not hide add and show echo, both kept checked\n%s", body)
	}
	if _, err := s.d.GetEndpoint(ctx, "x"); err == nil {
		t.Fatal("the preview saved x")
	}

	// Errors by field: no name, no server; a taken name; a bad name.
	status, _, body = s.do("POST", "/endpoints", url.Values{}, csrf...)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `id="e-name-err" class="error">required`) || !strings.Contains(body, `id="e-servers-err" class="error">check at least one server`) {
		t.Errorf("an empty add: %d\n%s", status, body)
	}
	status, _, body = s.do("POST", "/endpoints", url.Values{"name": {"conf"}, "server": {"b"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="e-name-err" class="error">taken: [^<]*f.toml:3`).MatchString(body) {
		t.Errorf("adding conf again: %d\n%s", status, body)
	}
	status, _, body = s.do("POST", "/endpoints", url.Values{"name": {"Bad Name"}, "server": {"b"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="e-name-err" class="error">[^<]+`).MatchString(body) {
		t.Errorf("adding a bad name: %d\n%s", status, body)
	}

	// Add x: b's echo alone.
	status, hdr, body := s.do("POST", "/endpoints", url.Values{"name": {"x"}, "server": {"b"}, "tool": {"mcp_b_echo"}}, append(csrf, "HX-Request", "true")...)
	if status != http.StatusNoContent || hdr.Get("HX-Redirect") != "/endpoints/x" {
		t.Fatalf("adding x: %d %v\n%s", status, hdr, body)
	}
	m, err := s.d.GetEndpoint(ctx, "x")
	if err != nil || m.Version != 1 || m.Err != nil {
		t.Fatalf("x: %+v %v", m, err)
	}
	if got := listTools(t, s, "/e/x/mcp", ""); strings.Join(got, " ") != "mcp_b_echo" {
		t.Errorf("a client of x lists %q", got)
	}
	// A mode chosen in the form: the endpoint lists search_tools and
	// call_tool, and the pages say its mode.
	if status, _, body := s.do("POST", "/endpoints", url.Values{"name": {"sx"}, "server": {"b"}, "mode": {"search"}}, csrf...); status != http.StatusSeeOther {
		t.Fatalf("adding sx in search mode: %d\n%s", status, body)
	}
	if got := listTools(t, s, "/e/sx/mcp", ""); strings.Join(got, " ") != "call_tool search_tools" {
		t.Errorf("a client of sx (search mode) lists %q", got)
	}
	if _, _, list := s.do("GET", "/endpoints", nil); !regexp.MustCompile(`(?s)data-endpoint="sx">.*?<td>search</td>`).MatchString(list) {
		t.Errorf("the endpoints page does not say sx's mode\n%s", list)
	}
	if _, _, sx := s.do("GET", "/endpoints/sx", nil); !strings.Contains(sx, `id="endpoint-mode">search: clients list search_tools and call_tool`) ||
		!strings.Contains(sx, `<option value="search" selected>`) {
		t.Errorf("sx's page does not say its mode, or its form does not have it chosen\n%s", sx)
	}
	_, _, page := s.do("GET", "/endpoints/x", nil)
	if !strings.Contains(page, `name="version" value="1"`) || !strings.Contains(page, `value="mcp_b_echo" checked`) || !strings.Contains(page, `data-tool="mcp_b_echo"`) {
		t.Fatalf("x's page has no edit form of version 1 with echo checked\n%s", page)
	}

	// Edit at version 1: a and b's add; then a stale save.
	status, hdr, body = s.do("POST", "/endpoints/x", url.Values{"version": {"1"}, "server": {"a", "b"}, "tool": {"mcp_b_add", "mcp_a_echo"}}, csrf...)
	if status != http.StatusSeeOther || hdr.Get("Location") != "/endpoints/x" {
		t.Fatalf("editing x: %d %v\n%s", status, hdr, body)
	}
	if got := listTools(t, s, "/e/x/mcp", ""); strings.Join(got, " ") != "mcp_a_echo mcp_b_add" {
		t.Errorf("after the edit a client of x lists %q", got)
	}
	status, _, body = s.do("POST", "/endpoints/x", url.Values{"version": {"1"}, "server": {"b"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "x was changed since this form was opened (it is at version 2 now)") {
		t.Errorf("a stale save: %d\n%s", status, body)
	}
	if m, _ := s.d.GetEndpoint(ctx, "x"); m.Version != 2 {
		t.Errorf("the stale save changed x: version %d", m.Version)
	}

	// A stored endpoint with patterns: the form shows the tools they
	// choose checked, and keeps the patterns unless told not to; then a
	// save writes the tools checked by name in their place.
	if _, err := s.d.UpdateEndpoint(ctx, "x", json.RawMessage(`{"servers":["b"],"tools":["b_*","!b_add"]}`), 2); err != nil {
		t.Fatal(err)
	}
	_, _, page = s.do("GET", "/endpoints/x", nil)
	if !strings.Contains(page, `id="e-patterns">Its tool patterns <code>b_*</code>, <code>!b_add</code>`) ||
		!strings.Contains(page, `name="keep_patterns" value="1" checked`) ||
		!strings.Contains(page, `value="mcp_b_echo" checked disabled`) || strings.Contains(page, `value="mcp_b_add" checked`) {
		t.Errorf("x's form with patterns\n%s", page)
	}
	status, _, body = s.do("POST", "/endpoints/x", url.Values{"version": {"3"}, "server": {"b"}, "keep_patterns": {"1"}}, csrf...)
	m, _ = s.d.GetEndpoint(ctx, "x")
	if status != http.StatusSeeOther || m.Version != 4 || !strings.Contains(string(m.Config), `"tools":["b_*","!b_add"]`) {
		t.Errorf("saving x with its patterns kept: %d, version %d, %s\n%s", status, m.Version, m.Config, body)
	}
	_, _, form := s.do("POST", "/endpoints/form", url.Values{"edit": {"x"}, "version": {"4"}, "server": {"b"}, "tool": {"mcp_b_echo"}}, csrf...)
	if strings.Contains(form, `name="keep_patterns" value="1" checked`) || strings.Contains(form, `disabled`) || !strings.Contains(form, `<li>mcp_b_echo</li>`) {
		t.Errorf("the form with keep_patterns unchecked: the tools should be chosen by name\n%s", form)
	}
	status, _, body = s.do("POST", "/endpoints/x", url.Values{"version": {"4"}, "server": {"b"}, "tool": {"mcp_b_echo"}}, csrf...)
	if m, _ := s.d.GetEndpoint(ctx, "x"); status != http.StatusSeeOther || !strings.Contains(string(m.Config), `"tools":["mcp_b_echo"]`) {
		t.Errorf("saving x by name: %d, %s\n%s", status, m.Config, body)
	}

	// One publishing every server: all checked, and the form says a save
	// names them.
	if _, err := s.d.AddEndpoint(ctx, "every", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	_, _, page = s.do("GET", "/endpoints/every", nil)
	if !strings.Contains(page, `id="e-all-servers"`) || !strings.Contains(page, `name="server" value="a" checked`) || !strings.Contains(page, `name="server" value="b" checked`) {
		t.Errorf("every's form\n%s", page)
	}

	// Delete: asks first, with the version; a stale one is refused.
	_, _, confirm := s.do("GET", "/endpoints/x/remove?confirm=1", nil)
	if !strings.Contains(confirm, `hx-post="/endpoints/x/delete" hx-vals='{"version": "5"}'`) || !strings.Contains(confirm, "Delete x?") {
		t.Fatalf("the delete confirmation\n%s", confirm)
	}
	if status, _, body := s.do("POST", "/endpoints/x/delete", url.Values{"version": {"4"}}, csrf...); status != http.StatusPreconditionFailed || !strings.Contains(body, "x was changed since this page showed it") {
		t.Errorf("a stale delete: %d\n%s", status, body)
	}
	if status, hdr, body := s.do("POST", "/endpoints/x/delete", url.Values{"version": {"5"}}, append(csrf, "HX-Request", "true")...); status != http.StatusNoContent || hdr.Get("HX-Redirect") != "/endpoints" {
		t.Errorf("deleting x: %d %v\n%s", status, hdr, body)
	}
	if _, err := s.d.GetEndpoint(ctx, "x"); err == nil {
		t.Error("x was not deleted")
	}
}

// listTools lists the tools a real MCP client of the endpoint at path
// gets, sorted; token, if any, is sent as the bearer token.
func listTools(t *testing.T, s *served, path, token string) []string {
	t.Helper()
	hc := &http.Client{Transport: bearer{token}}
	c := mcp.NewClient(&mcp.Implementation{Name: "ui-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + path, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", path, err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("listing the tools of %s: %v", path, err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestEndpointToolsWithWorkflows: an endpoint's page lists what its
// clients get where workflows are published: the tools a hide_tools
// workflow calls left out, a workflow's tool offered where the endpoint
// names it (workflows) and not elsewhere.
func TestEndpointToolsWithWorkflows(t *testing.T) {
	wf, err := workflow.Parse("gated.yaml", []byte("hide_tools: true\n"+gated))
	if err != nil {
		t.Fatal(err)
	}
	s := serveWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.Gateway.Workflows = []string{"gated"}
		o.Config.Endpoints = []config.Endpoint{
			{Name: "with", Servers: []string{"a"}, Tools: []string{"a_e*"}, Workflows: []string{"gated"}},
			{Name: "without", Servers: []string{"a"}},
		}
	}, config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	for _, name := range []string{"with", "without"} {
		_, _, body := s.do("GET", "/endpoints/"+name, nil)
		var shown []string
		for _, m := range regexp.MustCompile(`data-tool="([^"]+)"`).FindAllStringSubmatch(body, -1) {
			shown = append(shown, m[1])
		}
		listed := listTools(t, s, "/e/"+name+"/mcp", "")
		if strings.Join(shown, " ") != strings.Join(listed, " ") || len(listed) == 0 {
			t.Errorf("%s's page shows %q, a client lists %q", name, shown, listed)
		}
		if slices.Contains(shown, "mcp_a_echo") || slices.Contains(shown, "workflow_gated") != (name == "with") {
			t.Errorf("%s's page shows %q: want no mcp_a_echo (hidden by gated), workflow_gated on with alone", name, shown)
		}
	}
}

// TestEndpointsPagesAreTheOwners: an endpoint's own token opens its MCP
// paths, never the endpoints pages (the owner's, through the guard): 403
// for it, the page for the owner's token.
func TestEndpointsPagesAreTheOwners(t *testing.T) {
	const owner = "ui-endpoints-owner-token-5b1e"
	t.Setenv("SB_UI_OWNER", owner)
	s := serveWith(t, func(o *daemon.Options) {
		o.Config.Gateway.AuthToken = "{{env.SB_UI_OWNER}}"
		o.Config.Endpoints = []config.Endpoint{{Name: "conf", Servers: []string{"a"}, AuthToken: "{{env.SB_UI_CANARY}}"}}
	}, config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	for _, p := range []string{"/endpoints", "/endpoints/conf"} {
		if status, _, body := s.do("GET", p, nil, "Authorization", "Bearer "+canary); status != http.StatusForbidden {
			t.Errorf("GET %s with conf's token: %d, want 403\n%s", p, status, body)
		}
		if status, _, body := s.do("GET", p, nil, "Authorization", "Bearer "+owner); status != http.StatusOK {
			t.Errorf("GET %s with the owner's token: %d, want 200\n%s", p, status, body)
		}
	}
	if got := listTools(t, s, "/e/conf/mcp", canary); len(got) == 0 {
		t.Error("conf's token lists no tools at /e/conf/mcp")
	}
}
