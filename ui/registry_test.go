package ui_test

import (
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
	if code != 200 || !strings.Contains(body, `id="registry-refused"`) || !strings.Contains(body, "deleted") {
		t.Errorf("add form of a deleted entry: %d, want the refusal\n%s", code, body)
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
