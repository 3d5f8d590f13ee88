package ui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/registry/registrytest"
	"github.com/switchboardmcp/switchboard/ui"
)

// TestRegistryPage: search the fake registry serving the recorded
// fixture, open an entry's add form, be refused a secret typed in, and
// add it with a placeholder: a run-time server, pinned.
func TestRegistryPage(t *testing.T) {
	recs, err := registrytest.Load(filepath.Join("..", "registry", "testdata", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	// airtable's older version, deprecated (the fixture's deprecated
	// entry is a NuGet package, which Switchboard does not run).
	for i, r := range recs {
		if strings.Contains(string(r.Server), `"version": "1.7.2"`) && strings.Contains(string(r.Server), "airtable-mcp-server") {
			recs[i].Meta["io.modelcontextprotocol.registry/official"] = json.RawMessage(`{"status":"deprecated","statusMessage":"Superseded by 1.7.3.","publishedAt":"2025-09-01T00:00:00Z","isLatest":false}`)
		}
	}
	reg := registrytest.New(recs)
	t.Cleanup(reg.Close)
	c, err := registry.New(reg.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := serveUI(t, nil, &ui.Options{Registries: []registry.Named{{Name: "fixture", Client: c}}})

	code, _, body := s.do("GET", "/registry?q=airtable", nil)
	if code != 200 || !strings.Contains(body, `data-entry="io.github.domdomegg/airtable-mcp-server"`) || !strings.Contains(body, "<td>1.7.3</td>") {
		t.Fatalf("search: %d\n%s", code, body)
	}
	code, _, body = s.do("GET", "/registry?q=verbose", nil)
	if code != 200 || !strings.Contains(body, ">invalid</span>") {
		t.Errorf("search verbose: %d, want the entry shown invalid\n%s", code, body)
	}
	code, _, body = s.do("GET", "/registry/add?registry=fixture&name=io.github.example/quay-sample-mcp", nil)
	if code != 200 || !strings.Contains(body, `id="registry-unlisted"`) || !strings.Contains(body, "deleted") || !strings.Contains(body, `id="r-force"`) {
		t.Errorf("add form of a deleted entry: %d, want why, and the force box\n%s", code, body)
	}
	// A deprecated version: the registry's reason, and the force box; not
	// added without it, added with it.
	deprecated := url.Values{"registry": {"fixture"}, "name": {"io.github.domdomegg/airtable-mcp-server"}, "version": {"1.7.2"}, "id": {"old-airtable"},
		"v:AIRTABLE_API_KEY": {"{{secrets.airtable_key}}"}}
	code, _, body = s.do("GET", "/registry/add?"+deprecated.Encode(), nil)
	if code != 200 || !strings.Contains(body, "The registry marks this version deprecated: Superseded by 1.7.3.") ||
		!strings.Contains(body, `id="r-force"`) || strings.Contains(body, `id="registry-refused"`) {
		t.Errorf("add form of a deprecated version: %d, want the reason and the force box\n%s", code, body)
	}
	code, _, body = s.do("POST", "/registry/add", deprecated, ui.CSRFHeader, "1")
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "Superseded by 1.7.3") || !strings.Contains(body, "Add it all the same (force)") {
		t.Errorf("a deprecated version added without force: %d, want 422 saying why\n%s", code, body)
	}
	if _, err := s.d.GetServer(t.Context(), "old-airtable"); err == nil {
		t.Errorf("a deprecated version was added without force")
	}
	deprecated.Set("force", "1")
	if code, h, body := s.do("POST", "/registry/add", deprecated, ui.CSRFHeader, "1"); code != http.StatusSeeOther || h.Get("Location") != "/servers/old-airtable" {
		t.Errorf("a deprecated version added with force: %d %v\n%s", code, h, body)
	}
	code, _, body = s.do("GET", "/registry/add?registry=fixture&name=io.github.domdomegg/airtable-mcp-server", nil)
	if code != 200 || !strings.Contains(body, `name="v:AIRTABLE_API_KEY"`) || !strings.Contains(body, "switchboard secrets set airtable-mcp-server_airtable_api_key") &&
		!strings.Contains(body, "switchboard secrets set airtable_mcp_server_airtable_api_key") {
		t.Fatalf("add form: %d\n%s", code, body)
	}
	csrf := []string{ui.CSRFHeader, "1"}
	form := url.Values{"registry": {"fixture"}, "name": {"io.github.domdomegg/airtable-mcp-server"}, "version": {"1.7.3"}, "id": {"airtable"},
		"v:AIRTABLE_API_KEY": {canary}}
	code, _, body = s.do("POST", "/registry/add", form, csrf...)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "secret: store it in the secret store") {
		t.Errorf("a secret typed in: %d, want 422 saying why\n%s", code, body)
	}
	form.Set("v:AIRTABLE_API_KEY", "{{secrets.airtable_key}}")
	code, h, body := s.do("POST", "/registry/add", form, csrf...)
	if code != http.StatusSeeOther || h.Get("Location") != "/servers/airtable" {
		t.Fatalf("add: %d %v\n%s", code, h, body)
	}
	m, err := s.d.GetServer(t.Context(), "airtable")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(m.Config)
	for _, want := range []string{`"airtable-mcp-server@1.7.3"`, `"{{secrets.airtable_key}}"`, `"version":"1.7.3"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("the server added: %s, want %s in it", cfg, want)
		}
	}
}
