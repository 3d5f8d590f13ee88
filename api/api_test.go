package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// canary is a secret's value: no answer may contain it.
const canary = "canary-secret-value-7f3a9c"

type apiT struct {
	t      testing.TB
	url    string
	d      *daemon.Daemon
	client *http.Client // records every exchange, validated against the OpenAPI document
	all    [][]byte     // every body seen, for the canary check
}

func startAPI(t *testing.T) *apiT { return startAPIWith(t, nil) }

// startAPIWith is startAPI with more options: opts changes the daemon's
// (its Config holds the server "a" and the state database).
func startAPIWith(t testing.TB, opts func(*daemon.Options)) *apiT {
	t.Helper()
	return startAPIOpts(t, opts, nil)
}

// startAPIOpts is startAPIWith with the API's options.
func startAPIOpts(t testing.TB, opts func(*daemon.Options), apiOpts *api.Options) *apiT {
	t.Helper()
	t.Setenv("SB_API_CANARY", canary)
	bin := interop.Build(t, fixturePkg)
	db := filepath.Join(t.TempDir(), "s.db")
	cfg := &config.Config{Servers: []config.Server{{ID: "a", Transport: config.TransportStdio, Command: bin,
		Env: map[string]string{"CANARY": "{{env.SB_API_CANARY}}"}}}}
	cfg.State.Database = db
	st, err := store.Open(context.Background(), db, nil)
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
	d.HandleAdmin(api.Prefix, api.New(d, apiOpts))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	a := &apiT{t: t, url: "http://" + ln.Addr().String(), d: d, client: recordAPI(t)}
	t.Cleanup(func() {
		cancel()
		<-done
		for _, b := range a.all {
			if bytes.Contains(b, []byte(canary)) {
				t.Errorf("an answer holds the secret's value: %s", b)
			}
		}
	})
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("never ready")
	}
	return a
}

// do sends a request (with the CSRF header unless csrf is false) and
// returns the status, headers and body.
func (a *apiT) do(method, path, body string, hdr ...string) (int, http.Header, []byte) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if method != "GET" {
		req.Header.Set(api.CSRFHeader, "1")
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a.all = append(a.all, b)
	return resp.StatusCode, resp.Header, b
}

type problemDoc struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Errors []struct {
		Field string `json:"field"`
	} `json:"errors"`
}

func (a *apiT) wantProblem(name string, status int, field string, code int, h http.Header, body []byte) {
	a.t.Helper()
	var p problemDoc
	if code != status || h.Get("Content-Type") != "application/problem+json" || json.Unmarshal(body, &p) != nil || p.Status != status {
		a.t.Errorf("%s: %d %s %s, want a %d problem", name, code, h.Get("Content-Type"), body, status)
		return
	}
	if field != "" && (len(p.Errors) == 0 || p.Errors[0].Field != field) {
		a.t.Errorf("%s: %s, want the field %q named", name, body, field)
	}
}

func TestServersAndTools(t *testing.T) {
	a := startAPI(t)
	bin := interop.Build(t, fixturePkg)
	entry := func(id string, extra string) string {
		b, _ := json.Marshal(bin)
		return `{"id":"` + id + `","command":` + string(b) + extra + `}`
	}

	code, _, body := a.do("GET", "/api/v1/servers", "")
	if code != 200 || !strings.Contains(string(body), `"id":"a"`) || !strings.Contains(string(body), `"origin":"config"`) {
		t.Fatalf("GET servers: %d %s", code, body)
	}

	// Add; bad input changes nothing.
	code, h, body := a.do("POST", "/api/v1/servers", entry("b", `,"args":["-tool-name","bee"]`))
	if code != 201 || h.Get("ETag") != `"1"` {
		t.Fatalf("POST servers: %d %v %s", code, h, body)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"unknown field", entry("c", `,"bogus":1`), 422, "bogus"},
		{"private URL", `{"id":"c","url":"http://10.1.2.3/mcp"}`, 422, "url"},
		{"url on a stdio server", entry("c", `,"url":"https://example.com/mcp"`), 422, "url"},
		{"literal secret", entry("c", `,"env":{"GITHUB_TOKEN":"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}`), 422, "env.GITHUB_TOKEN"},
		{"no id", `{"command":"x"}`, 422, "id"},
		{"config id", entry("a", ""), 409, "id"},
		{"10 MB body", `{"id":"c","description":"` + strings.Repeat("x", 10<<20) + `"}`, 413, ""},
	} {
		code, h, body := a.do("POST", "/api/v1/servers", tc.body)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
	}
	if code, _, body := a.do("GET", "/api/v1/servers/c", ""); code != 404 {
		t.Errorf("a refused server exists: %d %s", code, body)
	}
	code, h, body = a.do("POST", "/api/v1/servers", entry("c", ""), api.CSRFHeader, "")
	a.wantProblem("no CSRF header", 403, "", code, h, body)

	// Its tool comes; search and filter find it.
	wait.For(t, "b's tool in the list", func() (string, bool) {
		_, _, body = a.do("GET", "/api/v1/tools?server=b", "")
		return string(body), strings.Contains(string(body), "mcp_b_bee")
	})
	if !strings.Contains(string(body), "mcp_b_bee") || strings.Contains(string(body), "mcp_a_") {
		t.Fatalf("GET tools?server=b: %s", body)
	}
	code, _, body = a.do("GET", "/api/v1/tools?q=echo&limit=1", "")
	var pg struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
		Next string `json:"next_cursor"`
	}
	if json.Unmarshal(body, &pg) != nil || code != 200 || len(pg.Items) != 1 || !strings.HasSuffix(pg.Items[0].Name, "_echo") || pg.Next == "" {
		t.Errorf("GET tools?q=echo&limit=1: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/tools?q=echo&limit=1&cursor="+pg.Next, "")
	if code != 200 || !strings.Contains(string(body), "_echo") {
		t.Errorf("the second page: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/tools/mcp_a_echo", "")
	if code != 200 || !strings.Contains(string(body), `"inputSchema"`) {
		t.Errorf("GET a tool: %d %s", code, body)
	}

	// Call: validated; the result in full.
	code, _, body = a.do("POST", "/api/v1/tools/mcp_a_add/call", `{"arguments":{"a":2,"b":3}}`)
	if code != 200 || !strings.Contains(string(body), `"structuredContent":{"sum":5}`) {
		t.Errorf("call add: %d %s", code, body)
	}
	code, h, body = a.do("POST", "/api/v1/tools/mcp_a_add/call", `{"arguments":{"a":"two"}}`)
	a.wantProblem("bad arguments", 422, "arguments", code, h, body)
	code, h, body = a.do("POST", "/api/v1/tools/mcp_a_add/call", `{"args":{}}`)
	a.wantProblem("unknown call field", 400, "args", code, h, body)
	// The canary: a tool that prints its environment variable.
	_, _, cb := a.do("POST", "/api/v1/tools/mcp_a_env/call", `{"arguments":{"name":"CANARY"}}`)
	if !strings.Contains(string(cb), `"set":true`) {
		t.Errorf("the env tool did not see the secret, so the canary proves nothing: %s", cb)
	}

	// Update with If-Match; a stale one changes nothing.
	code, h, body = a.do("PUT", "/api/v1/servers/b", entry("b", `,"args":["-tool-name","wasp"]`), "If-Match", `"9"`)
	a.wantProblem("stale ETag", 412, "If-Match", code, h, body)
	code, h, body = a.do("PUT", "/api/v1/servers/b", entry("b", `,"args":["-tool-name","wasp"]`), "If-Match", `"1"`)
	if code != 200 || h.Get("ETag") != `"2"` {
		t.Errorf("PUT with If-Match: %d %v %s", code, h, body)
	}
	code, h, body = a.do("DELETE", "/api/v1/servers/a", "")
	a.wantProblem("delete a config server", 409, "", code, h, body)
	for _, act := range []string{"disable", "enable", "restart"} {
		if code, _, body := a.do("POST", "/api/v1/servers/b/"+act, ""); code >= 300 {
			t.Errorf("%s: %d %s", act, code, body)
		}
	}
	if code, _, body := a.do("DELETE", "/api/v1/servers/b", "", "If-Match", `"4"`); code != 204 {
		t.Errorf("DELETE b: %d %s", code, body)
	}
	code, h, body = a.do("GET", "/api/v1/servers/b", "")
	a.wantProblem("deleted", 404, "", code, h, body)
}

// TestStrictBodies: a body that repeats a member name, or holds bytes
// that are not UTF-8, is refused with a 400 naming the field, and changes
// nothing. Before, the last of two "command" members was the one stored
// (one validated and written by a check that kept the first would have
// run another), an "arguments" given twice called the tool with the last,
// and a byte that is not UTF-8 was stored as U+FFFD.
func TestStrictBodies(t *testing.T) {
	a := startAPI(t)
	b, _ := json.Marshal(interop.Build(t, fixturePkg))
	bin := string(b)
	for _, tc := range []struct {
		name, method, path, body, field string
	}{
		{"command twice", "POST", "/api/v1/servers", `{"id":"d","command":"/nonexistent/checked","command":` + bin + `}`, "command"},
		{"command twice, once escaped", "POST", "/api/v1/servers", `{"id":"d","command":"/nonexistent/checked","comm\u0061nd":` + bin + `}`, "command"},
		{"an env key twice", "POST", "/api/v1/servers", `{"id":"d","command":` + bin + `,"env":{"MODE":"safe","MODE":"unsafe"}}`, "env.MODE"},
		{"not UTF-8", "POST", "/api/v1/servers", `{"id":"d","command":` + bin + ",\"description\":\"bad \xff byte\"}", "description"},
		{"PUT", "PUT", "/api/v1/servers/d", `{"id":"d","id":"e","command":` + bin + `}`, "id"},
		{"arguments twice", "POST", "/api/v1/tools/mcp_a_add/call", `{"arguments":{"a":2,"b":3},"arguments":{"a":40,"b":2}}`, "arguments"},
		{"an argument twice", "POST", "/api/v1/tools/mcp_a_echo/call", `{"arguments":{"text":"checked","text":"smuggled"}}`, "arguments.text"},
	} {
		code, h, body := a.do(tc.method, tc.path, tc.body)
		a.wantProblem(tc.name, http.StatusBadRequest, tc.field, code, h, body)
	}
	if code, _, body := a.do("GET", "/api/v1/servers/d", ""); code != 404 {
		t.Errorf("a refused server exists: %d %s", code, body)
	}
}

// TestEvents: the SSE stream says when a server is added and comes up.
func TestEvents(t *testing.T) {
	a := startAPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.url+"/api/v1/events", nil)
	resp, err := a.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	if code, _, body := a.do("POST", "/api/v1/servers", `{"id":"e","command":`+string(bin)+`}`); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), `"server":"e","state":"ready"`) {
		n, err := resp.Body.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("the stream ended before e was ready: %v\n%s", err, seen.String())
		}
	}
	if strings.Contains(seen.String(), canary) {
		t.Errorf("the events hold the secret's value")
	}
}

// TestResourcesAndPrompts: the lists (all, or one server's), a read and a
// prompt, as the server gave them; bad requests are problems; a server
// that echoes its secret has it redacted (the canary, in startAPI).
func TestResourcesAndPrompts(t *testing.T) {
	a := startAPI(t)
	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	if code, _, body := a.do("POST", "/api/v1/servers", `{"id":"leaky","command":`+string(bin)+
		`,"args":["-leak","CANARY"],"env":{"CANARY":"{{env.SB_API_CANARY}}"}}`); code != 201 {
		t.Fatalf("POST leaky: %d %s", code, body)
	}
	a.waitTool("mcp_leaky_leak")

	code, _, body := a.do("GET", "/api/v1/resources?server=a", "")
	if code != 200 || !strings.Contains(string(body), `"uri":"test://static/1"`) || strings.Contains(string(body), `"server":"leaky"`) {
		t.Errorf("GET resources?server=a: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/resources?limit=1", "")
	var pg struct {
		Items []json.RawMessage `json:"items"`
		Next  string            `json:"next_cursor"`
	}
	if code != 200 || json.Unmarshal(body, &pg) != nil || len(pg.Items) != 1 || pg.Next == "" {
		t.Errorf("GET resources?limit=1: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/resources/templates?server=a", "")
	if code != 200 || !strings.Contains(string(body), `"uriTemplate":"test://item/{id}"`) {
		t.Errorf("GET resources/templates: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/prompts?server=a", "")
	if code != 200 || !strings.Contains(string(body), `"name":"greet"`) {
		t.Errorf("GET prompts: %d %s", code, body)
	}
	code, h, body := a.do("GET", "/api/v1/prompts?server=nosuch", "")
	a.wantProblem("unknown server", 404, "", code, h, body)

	code, _, body = a.do("POST", "/api/v1/resources/read", `{"server":"a","uri":"test://static/1"}`)
	if code != 200 || !strings.Contains(string(body), `"contents":[{"uri":"test://static/1"`) {
		t.Errorf("read test://static/1: %d %s", code, body)
	}
	code, _, body = a.do("POST", "/api/v1/prompts/get", `{"server":"a","name":"greet","arguments":{"name":"Ada"}}`)
	if code != 200 || !strings.Contains(string(body), "Ada") || !strings.Contains(string(body), `"messages":[`) {
		t.Errorf("get prompt greet: %d %s", code, body)
	}
	// What a careless server echoes of its secret is redacted.
	for _, req := range [][2]string{
		{"/api/v1/resources/read", `{"server":"leaky","uri":"test://leak"}`},
		{"/api/v1/prompts/get", `{"server":"leaky","name":"leak"}`},
	} {
		if code, _, body := a.do("POST", req[0], req[1]); code != 200 {
			t.Errorf("POST %s %s: %d %s", req[0], req[1], code, body)
		}
	}
	if _, _, body := a.do("GET", "/api/v1/resources?server=leaky", ""); !strings.Contains(string(body), "test://leak") {
		t.Errorf("GET resources?server=leaky: %s", body)
	}

	for _, tc := range []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"read: unknown field", "/api/v1/resources/read", `{"server":"a","uri":"test://static/1","x":1}`, 400, "x"},
		{"read: no uri", "/api/v1/resources/read", `{"server":"a"}`, 422, "uri"},
		{"read: unknown server", "/api/v1/resources/read", `{"server":"nosuch","uri":"test://static/1"}`, 404, ""},
		{"prompt: no name", "/api/v1/prompts/get", `{"server":"a"}`, 422, "name"},
		{"prompt: not JSON", "/api/v1/prompts/get", `{"server":`, 400, ""},
		{"prompt: unknown prompt", "/api/v1/prompts/get", `{"server":"a","name":"nosuch"}`, 422, ""},
		{"read: unknown resource", "/api/v1/resources/read", `{"server":"a","uri":"test://nosuch"}`, 404, ""},
	} {
		code, h, body := a.do("POST", tc.path, tc.body)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
	}
}

// waitTool polls the tools until name is there: a server added comes up
// in the background, and the list says when (bounded).
func (a *apiT) waitTool(name string) {
	a.t.Helper()
	wait.For(a.t, "tool "+name, func() (string, bool) {
		code, _, body := a.do("GET", "/api/v1/tools/"+name, "")
		return fmt.Sprint(code, " ", string(body)), code == 200
	})
}

// TestPatchServer: a JSON merge patch changes the fields it names (null
// removes one) and keeps the others; a stale If-Match, an invalid result,
// a new id and a config-file server are refused with nothing changed.
func TestPatchServer(t *testing.T) {
	a := startAPI(t)
	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	if code, _, body := a.do("POST", "/api/v1/servers", `{"id":"p","command":`+string(bin)+`,"args":["-tool-name","bee"],"description":"first","timeout":"30s"}`); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	patch := func(body string, hdr ...string) (int, http.Header, []byte) {
		return a.do("PATCH", "/api/v1/servers/p", body, append([]string{"Content-Type", "application/merge-patch+json"}, hdr...)...)
	}
	code, h, body := patch(`{"description":"second","timeout":null}`, "If-Match", `"1"`)
	var got struct {
		Config map[string]any `json:"config"`
	}
	if code != 200 || h.Get("ETag") != `"2"` || json.Unmarshal(body, &got) != nil {
		t.Fatalf("PATCH: %d %v %s", code, h, body)
	}
	if got.Config["description"] != "second" || got.Config["timeout"] != nil || got.Config["args"] == nil {
		t.Errorf("PATCH: config %v, want description second, no timeout, args kept", got.Config)
	}
	for _, tc := range []struct {
		name, body, ifMatch string
		status              int
		field               string
	}{
		{"stale", `{"description":"third"}`, `"1"`, 412, "If-Match"},
		{"invalid result", `{"url":"http://10.0.0.1/mcp"}`, `"2"`, 422, "url"},
		{"unknown field", `{"bogus":1}`, `"2"`, 422, "bogus"},
		{"new id", `{"id":"q"}`, `"2"`, 422, "id"},
		{"not an object", `["x"]`, `"2"`, 400, ""},
	} {
		code, h, body := patch(tc.body, "If-Match", tc.ifMatch)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
	}
	if code, h, _ := a.do("GET", "/api/v1/servers/p", ""); code != 200 || h.Get("ETag") != `"2"` {
		t.Errorf("after refused patches: %d ETag %s, want \"2\"", code, h.Get("ETag"))
	}
	code, h, body = a.do("PATCH", "/api/v1/servers/a", `{"description":"x"}`)
	a.wantProblem("a config-file server", 409, "", code, h, body)
}

// TestContentType: a body must be said to be JSON (application/json;
// PATCH takes application/merge-patch+json too): a form, text or no
// Content-Type is a 415 problem naming the header, and nothing changes.
// A request without a body needs none.
func TestContentType(t *testing.T) {
	a := startAPI(t)
	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	entry := func(id string) string { return `{"id":"` + id + `","command":` + string(bin) + `}` }
	if code, _, body := a.do("POST", "/api/v1/servers", entry("p"), "Content-Type", "application/json; charset=utf-8"); code != 201 {
		t.Fatalf("POST with a charset: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, method, path, body, ct string
	}{
		{"POST without Content-Type", "POST", "/api/v1/servers", entry("q"), ""},
		{"POST as text", "POST", "/api/v1/servers", entry("q"), "text/plain"},
		{"POST as a form", "POST", "/api/v1/servers", "id=q&command=x", "application/x-www-form-urlencoded"},
		{"POST a bad media type", "POST", "/api/v1/servers", entry("q"), "application/json;;"},
		{"PUT as text", "PUT", "/api/v1/servers/p", entry("p")[:len(entry("p"))-1] + `,"description":"x"}`, "text/plain"},
		{"PATCH as text", "PATCH", "/api/v1/servers/p", `{"description":"x"}`, "text/plain"},
		{"PATCH as a JSON patch", "PATCH", "/api/v1/servers/p", `[{"op":"add","path":"/description","value":"x"}]`, "application/json-patch+json"},
		{"call as a form", "POST", "/api/v1/tools/mcp_a_echo/call", `{"arguments":{"text":"x"}}`, "multipart/form-data; boundary=x"},
	} {
		code, h, body := a.do(tc.method, tc.path, tc.body, "Content-Type", tc.ct)
		a.wantProblem(tc.name, 415, "Content-Type", code, h, body)
		if tc.method == "PATCH" && !strings.Contains(h.Get("Accept-Patch"), "application/merge-patch+json") {
			t.Errorf("%s: Accept-Patch %q, want application/merge-patch+json", tc.name, h.Get("Accept-Patch"))
		}
	}
	// With its length known (the recorder sends every body chunked).
	req, _ := http.NewRequest("POST", a.url+"/api/v1/servers", strings.NewReader(entry("q")))
	req.Header.Set(api.CSRFHeader, "1")
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.wantProblem("POST as text, length known", 415, "Content-Type", resp.StatusCode, resp.Header, b)
	if code, _, body := a.do("GET", "/api/v1/servers/q", ""); code != 404 {
		t.Errorf("a server sent as a form or text was added: %d %s", code, body)
	}
	if code, h, body := a.do("GET", "/api/v1/servers/p", ""); code != 200 || h.Get("ETag") != `"1"` || strings.Contains(string(body), `"description"`) {
		t.Errorf("after refused changes: %d ETag %s %s, want version 1 unchanged", code, h.Get("ETag"), body)
	}
	if code, _, body := a.do("PATCH", "/api/v1/servers/p", `{"description":"y"}`); code != 200 {
		t.Errorf("PATCH as application/json: %d %s", code, body)
	}
	if code, _, body := a.do("POST", "/api/v1/servers/p/restart", "", "Content-Type", ""); code != 202 {
		t.Errorf("POST restart without a body or Content-Type: %d %s", code, body)
	}
}

// TestToken: with [gateway] auth_token, a request without the token, or
// with another, is a 401 problem document naming Authorization (and
// WWW-Authenticate), and changes nothing; a foreign Origin is a 403 one
// naming Origin; with the token the request is served.
func TestToken(t *testing.T) {
	const token = "api-token-3f9b2c7d1e"
	t.Setenv("SB_API_TOKEN", token)
	a := startAPIWith(t, func(o *daemon.Options) { o.Config.Gateway.AuthToken = "{{env.SB_API_TOKEN}}" })
	bearer := []string{"Authorization", "Bearer " + token}
	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	add := `{"id":"b","command":` + string(bin) + `}`
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		field                    string
	}{
		{"GET without the token", "GET", "/api/v1/servers", "", nil, 401, "Authorization"},
		{"POST without the token", "POST", "/api/v1/servers", add, nil, 401, "Authorization"},
		{"POST with another token", "POST", "/api/v1/servers", add, []string{"Authorization", "Bearer not-" + token}, 401, "Authorization"},
		{"DELETE without the token", "DELETE", "/api/v1/servers/a", "", nil, 401, "Authorization"},
		{"a foreign Origin", "POST", "/api/v1/servers", add, append([]string{"Origin", "https://evil.example"}, bearer...), 403, "Origin"},
	} {
		code, h, body := a.do(tc.method, tc.path, tc.body, tc.hdr...)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
		if tc.status == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q, want Bearer", tc.name, h.Get("WWW-Authenticate"))
		}
	}
	if code, _, body := a.do("GET", "/api/v1/servers/b", "", bearer...); code != 404 {
		t.Errorf("a server added without the token exists: %d %s", code, body)
	}
	if code, _, body := a.do("GET", "/api/v1/servers/a", "", bearer...); code != 200 {
		t.Errorf("GET with the token: %d %s", code, body)
	}
}
