package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/store"
)

// bearer sends its token on every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// toolsAt lists the tools an MCP client is offered at url, sending token
// when it is not "".
func toolsAt(t *testing.T, url, token string) []string {
	t.Helper()
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer(token)}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing the tools at %s: %v", url, err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// statusAt is the status of an MCP initialize request posted to url.
func statusAt(t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestEndpointsAPI: /api/v1/endpoints lists the configured endpoint
// read-only (409 read_only on PUT and DELETE, 409 exists on a POST of its
// name); an endpoint added is served at once (a real MCP client lists its
// tools at its path), replaced under If-Match (412 when stale) and served
// anew, and deleted: its path answers 404 at once. Entries are checked as
// [[endpoints]] tables of a file are, each problem naming its field; a
// token written out is refused, and a token's value (the canary, resolved
// from its placeholder) is in no answer.
func TestEndpointsAPI(t *testing.T) {
	a := startAPIWith(t, func(o *daemon.Options) {
		o.Config.Endpoints = []config.Endpoint{{Name: "conf", Path: "/conf/mcp", Servers: []string{"a"}, Tools: []string{"mcp_a_add"}}}
	})
	code, _, body := a.do("GET", "/api/v1/endpoints", "")
	if code != 200 || !strings.Contains(string(body), `"name":"conf","origin":"config"`) || !strings.Contains(string(body), `"path":"/conf/mcp"`) {
		t.Fatalf("GET endpoints: %d %s", code, body)
	}
	code, h, body := a.do("PUT", "/api/v1/endpoints/conf", `{"tools":["*"]}`)
	a.wantProblem("PUT a configured endpoint", 409, "", code, h, body)
	if !strings.Contains(string(body), "read_only") {
		t.Errorf("PUT a configured endpoint: %s, want read_only", body)
	}
	code, h, body = a.do("DELETE", "/api/v1/endpoints/conf", "")
	a.wantProblem("DELETE a configured endpoint", 409, "", code, h, body)

	// Added: served at once, its token resolved but never shown.
	code, h, body = a.do("POST", "/api/v1/endpoints", `{"name":"code","path":"/code/mcp","servers":["a"],"tools":["mcp_a_echo"],"auth_token":"{{env.SB_API_CANARY}}"}`)
	if code != 201 || h.Get("ETag") != `"1"` || h.Get("Location") != "/api/v1/endpoints/code" ||
		!strings.Contains(string(body), `"auth_token":"{{env.SB_API_CANARY}}"`) || !strings.Contains(string(body), `"state":"served"`) {
		t.Fatalf("POST endpoints: %d %v %s", code, h, body)
	}
	if got := toolsAt(t, a.url+"/code/mcp", canary); !slices.Equal(got, []string{"mcp_a_echo"}) {
		t.Errorf("tools at /code/mcp = %v, want [mcp_a_echo]", got)
	}
	if got := statusAt(t, a.url+"/code/mcp"); got != 401 {
		t.Errorf("POST /code/mcp without its token: %d, want 401", got)
	}

	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"no name", `{"servers":["a"]}`, 422, "name"},
		{"bad name", `{"name":"Bad Name"}`, 422, "name"},
		{"unknown server", `{"name":"x","servers":["nope"]}`, 422, "servers[0]"},
		{"a configured endpoint's path", `{"name":"x","path":"/conf/mcp"}`, 422, "path"},
		{"a stored endpoint's path", `{"name":"x","path":"/code/mcp"}`, 422, "path"},
		{"the API's path", `{"name":"x","path":"/api/v1/x"}`, 422, "path"},
		{"a bad glob", `{"name":"x","tools":["["]}`, 422, "tools[0]"},
		{"unknown field", `{"name":"x","bogus":1}`, 422, "bogus"},
		{"a literal token", `{"name":"x","auth_token":"sk-0123456789abcdefghijklmnopqrstuvwxyz"}`, 422, "auth_token"},
		{"a token that does not resolve", `{"name":"x","auth_token":"{{env.SB_API_NO_SUCH_VARIABLE}}"}`, 422, "auth_token"},
		{"another endpoint's token", `{"name":"x","auth_token":"{{env.SB_API_CANARY}}"}`, 422, "auth_token"},
		{"a configured endpoint's name", `{"name":"conf"}`, 409, "name"},
		{"a stored endpoint's name", `{"name":"code"}`, 409, "name"},
	} {
		code, h, body := a.do("POST", "/api/v1/endpoints", tc.body)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
	}
	if code, _, body := a.do("GET", "/api/v1/endpoints/x", ""); code != 404 || !strings.Contains(string(body), "unknown_endpoint") {
		t.Errorf("a refused endpoint exists: %d %s", code, body)
	}

	// Replaced under If-Match, served anew.
	code, h, body = a.do("PUT", "/api/v1/endpoints/code", `{"path":"/code/mcp","servers":["a"],"tools":["mcp_a_add"]}`, "If-Match", `"7"`)
	a.wantProblem("PUT at a stale version", 412, "If-Match", code, h, body)
	code, h, body = a.do("PUT", "/api/v1/endpoints/code", `{"name":"other"}`, "If-Match", `"1"`)
	a.wantProblem("PUT another name", 422, "name", code, h, body)
	code, h, body = a.do("PUT", "/api/v1/endpoints/code", `{"path":"/code/mcp","servers":["a"],"tools":["mcp_a_add"]}`, "If-Match", `"1"`)
	if code != 200 || h.Get("ETag") != `"2"` {
		t.Fatalf("PUT endpoints/code: %d %v %s", code, h, body)
	}
	if got := toolsAt(t, a.url+"/code/mcp", canary); !slices.Equal(got, []string{"mcp_a_add"}) {
		t.Errorf("tools at /code/mcp after the PUT = %v, want [mcp_a_add]", got)
	}
	var pg struct {
		Items []struct {
			Name, Origin string
			Version      int64
		}
	}
	_, _, body = a.do("GET", "/api/v1/endpoints", "")
	if err := json.Unmarshal(body, &pg); err != nil || len(pg.Items) != 2 || pg.Items[1].Name != "code" || pg.Items[1].Origin != "runtime" || pg.Items[1].Version != 2 {
		t.Errorf("GET endpoints: %s", body)
	}

	// Deleted: gone at once.
	code, h, body = a.do("DELETE", "/api/v1/endpoints/code", "", "If-Match", `"1"`)
	a.wantProblem("DELETE at a stale version", 412, "If-Match", code, h, body)
	if code, _, body := a.do("DELETE", "/api/v1/endpoints/code", "", "If-Match", `"2"`); code != 204 {
		t.Fatalf("DELETE endpoints/code: %d %s", code, body)
	}
	if got := statusAt(t, a.url+"/code/mcp"); got != 404 {
		t.Errorf("POST /code/mcp after the DELETE: %d, want 404", got)
	}
	if code, _, _ := a.do("GET", "/api/v1/endpoints/code", ""); code != 404 {
		t.Errorf("GET endpoints/code after the DELETE: %d, want 404", code)
	}
	if got := toolsAt(t, a.url+"/conf/mcp", ""); !slices.Equal(got, []string{"mcp_a_add"}) {
		t.Errorf("tools at the configured /conf/mcp = %v, want [mcp_a_add]", got)
	}
}

// TestEndpointsClient: api.Client adds, lists, replaces (If-Match) and
// deletes endpoints; a stale version, an unknown endpoint and a
// configured one's deletion are the daemon's errors, matching its
// sentinels.
func TestEndpointsClient(t *testing.T) {
	a := startAPIWith(t, func(o *daemon.Options) {
		o.Config.Endpoints = []config.Endpoint{{Name: "conf", Servers: []string{"a"}}}
	})
	ctx := context.Background()
	c := api.NewClient(a.url, a.client)
	defer c.Close()
	e, err := c.AddEndpoint(ctx, config.Endpoint{Name: "code", Servers: []string{"a"}, Tools: []string{"mcp_a_echo"}})
	if err != nil || e.Version != 1 || e.Path != "/e/code/mcp" || e.State != "served" {
		t.Fatalf("AddEndpoint = %+v, %v", e, err)
	}
	if got := toolsAt(t, a.url+e.Path, ""); !slices.Equal(got, []string{"mcp_a_echo"}) {
		t.Errorf("tools at %s = %v, want [mcp_a_echo]", e.Path, got)
	}
	if _, err := c.UpdateEndpoint(ctx, config.Endpoint{Name: "code", Servers: []string{"a"}}, 7); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UpdateEndpoint at a stale version: %v, want ErrConflict", err)
	}
	if e, err = c.UpdateEndpoint(ctx, config.Endpoint{Name: "code", Servers: []string{"a"}, Tools: []string{"mcp_a_add"}}, 1); err != nil || e.Version != 2 {
		t.Fatalf("UpdateEndpoint = %+v, %v", e, err)
	}
	if all, err := c.Endpoints(ctx); err != nil || len(all) != 2 || all[0].Name != "conf" || all[0].Origin != "config" || all[1].Version != 2 {
		t.Errorf("Endpoints = %+v, %v", all, err)
	}
	if err := c.DeleteEndpoint(ctx, "conf", 0); !errors.Is(err, daemon.ErrReadOnly) {
		t.Errorf("DeleteEndpoint(conf): %v, want ErrReadOnly", err)
	}
	if err := c.DeleteEndpoint(ctx, "code", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Endpoint(ctx, "code"); !errors.Is(err, daemon.ErrUnknownEndpoint) {
		t.Errorf("Endpoint(code) after its deletion: %v, want ErrUnknownEndpoint", err)
	}
}
