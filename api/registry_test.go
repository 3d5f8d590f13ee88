package api_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/registry/registrytest"
)

// startRegistryAPI starts the API reading the fake registry that serves
// the recorded fixture.
func startRegistryAPI(t *testing.T) *apiT {
	t.Helper()
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
	return startAPIOpts(t, nil, &api.Options{Registries: []registry.Named{{Name: "fixture", Client: c}}})
}

func TestRegistrySearch(t *testing.T) {
	a := startRegistryAPI(t)
	code, _, body := a.do("GET", "/api/v1/registry/search?q=airtable", "")
	var got struct {
		Servers []struct{ Registry, Name, Version, Status string }
		Errors  []any
	}
	if code != 200 || json.Unmarshal(body, &got) != nil || len(got.Servers) != 1 || got.Servers[0].Version != "1.7.3" || got.Servers[0].Registry != "fixture" {
		t.Fatalf("search airtable: %d %s", code, body)
	}
	code, h, body := a.do("GET", "/api/v1/registry/search?registry=nope", "")
	a.wantProblem("unknown registry", 404, "registry", code, h, body)

	code, _, body = a.do("GET", "/api/v1/registry/entry?name=io.modelcontextprotocol.anonymous/hybrid-mcp&kind=remote", "")
	var e struct {
		Variables []struct {
			Key      string
			Secret   bool
			Required bool
		}
		Refused string
	}
	if code != 200 || json.Unmarshal(body, &e) != nil || len(e.Variables) != 2 || e.Variables[0].Key != "X-API-Key" || !e.Variables[0].Secret {
		t.Fatalf("entry hybrid-mcp: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/registry/entry?name=io.github.example/quay-sample-mcp", "")
	if code != 200 || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Refused, "deleted") {
		t.Errorf("entry of a deleted server: %d %s, want refused saying deleted", code, body)
	}
	code, h, body = a.do("GET", "/api/v1/registry/entry?name=io.github.nobody/none", "")
	a.wantProblem("unknown entry", 404, "registry.name", code, h, body)
}

func TestRegistryAdd(t *testing.T) {
	a := startRegistryAPI(t)
	// A secret given in clear is refused: the API stores no secret.
	code, h, body := a.do("POST", "/api/v1/servers", `{"id":"hy","registry":{"name":"io.modelcontextprotocol.anonymous/hybrid-mcp","kind":"remote","values":{"X-API-Key":"`+canary+`"}}}`)
	a.wantProblem("secret in clear", 422, "registry.values.X-API-Key", code, h, body)
	// Deprecated: refused, saying why.
	code, h, body = a.do("POST", "/api/v1/servers", `{"id":"kn","registry":{"name":"io.github.joelverhagen/knapcode-samplemcpserver","version":"0.4.0-beta"}}`)
	a.wantProblem("deprecated", 422, "registry.name", code, h, body)
	if !strings.Contains(string(body), "deprecated") {
		t.Errorf("deprecated: %s, want the reason", body)
	}
	// No id: refused before the registry is asked.
	code, h, body = a.do("POST", "/api/v1/servers", `{"registry":{"name":"io.modelcontextprotocol.anonymous/mcp-fs"}}`)
	a.wantProblem("no id", 422, "id", code, h, body)
	// Other keys beside registry: refused.
	code, h, body = a.do("POST", "/api/v1/servers", `{"id":"x","timeout":"5s","registry":{"name":"io.modelcontextprotocol.anonymous/mcp-fs"}}`)
	a.wantProblem("other keys", 422, "timeout", code, h, body)
	// Added: the remote's entry, with the secret as a placeholder and
	// where it came from.
	code, _, body = a.do("POST", "/api/v1/servers", `{"id":"hy","registry":{"name":"io.modelcontextprotocol.anonymous/hybrid-mcp","kind":"remote","values":{"X-API-Key":"{{secrets.hy_key}}"}}}`)
	if code != 201 {
		t.Fatalf("add from registry: %d %s", code, body)
	}
	var s struct {
		Origin string
		Config map[string]any
	}
	json.Unmarshal(body, &s)
	if s.Origin != "runtime" || s.Config["url"] != "https://mcp.anonymous.modelcontextprotocol.io/http" {
		t.Errorf("added: %s", body)
	}
	if h, _ := s.Config["headers"].(map[string]any); h["X-API-Key"] != "{{secrets.hy_key}}" {
		t.Errorf("headers: %v", s.Config["headers"])
	}
	if r, _ := s.Config["registry"].(map[string]any); r["name"] != "io.modelcontextprotocol.anonymous/hybrid-mcp" || r["version"] != "1.5.0" {
		t.Errorf("registry: %v", s.Config["registry"])
	}
}
