package gateway_test

// Named endpoints (issue 26): several MCP servers published from one
// gateway over one host, each with its own tools, names, instructions and
// list_changed.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/transport"
)

// namedEndpoints are three named endpoints beside the default one, over
// servers a and b (stdio fixtures) and dyn (in process):
//
//   - one: a's tools by {server}_{tool} globs, less slow;
//   - two: b's tools whose published names begin mcp_b_e, and a's add
//     renamed to plus, with an override; its own instructions;
//   - three: every tool of b and dyn.
func namedEndpoints() []gateway.Endpoint {
	yes := true
	ep := func(name string) gateway.Endpoint {
		return gateway.Endpoint{Name: name, Path: "/e/" + name + "/mcp", SSE: "/e/" + name + "/sse", Message: "/e/" + name + "/message", WebSocket: "/e/" + name + "/ws"}
	}
	one, two, three := ep("one"), ep("two"), ep("three")
	one.Servers, one.Tools = []string{"a"}, []string{"a_*", "!a_slow"}
	two.Servers, two.Tools = []string{"a", "b"}, []string{"mcp_b_e*", "a_add"}
	two.Rename = map[string]string{"plus": "mcp_a_add"}
	two.Override = map[string]config.ToolOverride{"plus": {Description: "Adds two numbers.", Title: "Plus", ReadOnlyHint: &yes}}
	two.Instructions = "Endpoint two's instructions."
	three.Servers = []string{"b", "dyn"}
	return []gateway.Endpoint{{}, one, two, three}
}

// wantTools are the names each endpoint lists.
var wantTools = map[string][]string{
	"one":   {"mcp_a_add", "mcp_a_ask_briefly", "mcp_a_ask_detached", "mcp_a_content", "mcp_a_echo", "mcp_a_elicit", "mcp_a_env", "mcp_a_fail", "mcp_a_progress", "mcp_a_roots", "mcp_a_sample"},
	"two":   {"mcp_b_echo", "mcp_b_elicit", "mcp_b_env", "plus"},
	"three": {"mcp_b_add", "mcp_b_ask_briefly", "mcp_b_ask_detached", "mcp_b_content", "mcp_b_echo", "mcp_b_elicit", "mcp_b_env", "mcp_b_fail", "mcp_b_progress", "mcp_b_roots", "mcp_b_sample", "mcp_b_slow", "mcp_dyn_one"},
}

// dynServer is an in-process server whose tools and prompts the test
// changes: add adds a tool and a prompt of that name.
func dynServer() (*mcp.Server, func(name string)) {
	up := mcp.NewServer(&mcp.Implementation{Name: "dyn", Version: "1"}, nil)
	type in struct {
		X string `json:"x"`
	}
	add := func(name string) {
		mcp.AddTool(up, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
		})
		up.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	}
	add("one")
	return up, add
}

func startNamed(t *testing.T) (*gateway.Gateway, string, func(string)) {
	t.Helper()
	before := runtime.NumGoroutine()
	dyn, addDyn := dynServer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "a"), fixture(t, "b")},
		&host.Options{InProcess: []host.InProcessServer{{ID: "dyn", Server: dyn}}},
		&gateway.Options{Endpoints: namedEndpoints()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		ts.Close()
		wait.Goroutines(t, before)
	})
	return g, ts.URL, addDyn
}

// namedTransports are the ways a client reaches endpoint name over HTTP.
func namedTransports(base, name string) map[string]func() (mcp.Transport, string) {
	prefix := base + "/e/" + name
	return map[string]func() (mcp.Transport, string){
		"streamable 2025-11-25": func() (mcp.Transport, string) {
			return &mcp.StreamableClientTransport{Endpoint: prefix + "/mcp"}, "2025-11-25"
		},
		"streamable 2026-07-28": func() (mcp.Transport, string) {
			return &mcp.StreamableClientTransport{Endpoint: prefix + "/mcp"}, "2026-07-28"
		},
		"sse": func() (mcp.Transport, string) { return &mcp.SSEClientTransport{Endpoint: prefix + "/sse"}, "" },
		"websocket": func() (mcp.Transport, string) {
			return &transport.WebSocket{URL: "ws" + strings.TrimPrefix(prefix, "http") + "/ws"}, ""
		},
	}
}

// listJSON is a session's tools/list, sorted by name, as JSON.
func listJSON(t *testing.T, cs *mcp.ClientSession) ([]string, string) {
	t.Helper()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools = append(tools, tool)
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return names, string(b)
}

// fixtureChildren counts the live children of this process that run the
// fixture server.
func fixtureChildren(t *testing.T) int {
	comm := filepath.Base(interop.Build(t, fixturePkg))
	if len(comm) > 15 {
		comm = comm[:15] // the kernel's comm is 15 bytes at most
	}
	n := 0
	for _, desc := range interop.Children(os.Getpid()) {
		if strings.Contains(desc, "("+comm+")") {
			n++
		}
	}
	return n
}

// TestNamedEndpoints: three endpoints over two shared stdio servers run
// two child processes; each endpoint lists its configured set, the same
// bytes over Streamable HTTP in both protocol generations, SSE and
// WebSocket, and as the default endpoint publishes each tool it has not
// renamed or overridden; a renamed tool is offered under its new name
// only, with its override; a call outside the set is an unknown tool on
// every transport; each endpoint has its own serverInfo and instructions.
func TestNamedEndpoints(t *testing.T) {
	_, base, _ := startNamed(t)
	ctx := context.Background()
	if runtime.GOOS == "linux" {
		if n := fixtureChildren(t); n != 2 {
			t.Errorf("%d fixture processes for four endpoints over two stdio servers, want 2", n)
		}
	}

	// The default endpoint's tools, by name, as JSON: a named endpoint
	// publishes the same bytes for a tool it neither renames nor overrides.
	def := connect(t, base, clientOpts{})
	defNames, _ := listJSON(t, def)
	defTools := map[string]string{}
	for tool, err := range def.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tool)
		defTools[tool.Name] = string(b)
	}
	if !slices.Contains(defNames, "mcp_a_add") || !slices.Contains(defNames, "mcp_dyn_one") || slices.Contains(defNames, "plus") {
		t.Errorf("the default endpoint lists %v: want every tool under its own name", defNames)
	}

	for _, name := range []string{"one", "two", "three"} {
		var first string
		for tname, mk := range namedTransports(base, name) {
			t.Run(name+"/"+tname, func(t *testing.T) {
				tr, version := mk()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer cs.Close()
				if version == "2025-11-25" {
					init := cs.InitializeResult()
					if init.ServerInfo.Name != "switchboard/"+name {
						t.Errorf("serverInfo.name = %q, want switchboard/%s", init.ServerInfo.Name, name)
					}
					if got, want := init.Instructions, map[string]string{"two": "Endpoint two's instructions."}[name]; got != want {
						t.Errorf("instructions = %q, want %q", got, want)
					}
				}
				names, js := listJSON(t, cs)
				if !slices.Equal(names, wantTools[name]) {
					t.Fatalf("tools/list = %v\nwant %v", names, wantTools[name])
				}
				if first == "" {
					first = js
				} else if js != first {
					t.Errorf("tools/list differs between transports:\n%s\n%s", js, first)
				}
				var tools []*mcp.Tool
				json.Unmarshal([]byte(js), &tools)
				for _, tool := range tools {
					b, _ := json.Marshal(tool)
					if tool.Name == "plus" {
						if tool.Description != "Adds two numbers." || tool.Title != "Plus" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
							t.Errorf("plus as listed: %s; want the override's title, description and readOnlyHint", b)
						}
						continue
					}
					if string(b) != defTools[tool.Name] {
						t.Errorf("%s differs from the default endpoint's:\n%s\n%s", tool.Name, b, defTools[tool.Name])
					}
				}
				// Outside the set: another server's tool, a tool the
				// globs leave out, a renamed tool's own name.
				for _, outside := range []string{"mcp_a_slow", "mcp_dyn_one", "mcp_a_add", "mcp_b_add", "plus"} {
					if slices.Contains(wantTools[name], outside) {
						continue
					}
					r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: outside, Arguments: map[string]any{"a": 1, "b": 2}})
					if err == nil {
						t.Errorf("calling %s on endpoint %s: %v, want an unknown tool", outside, name, textOf(r))
					} else if !strings.Contains(err.Error(), "unknown tool") {
						t.Errorf("calling %s on endpoint %s: %v, want an unknown tool", outside, name, err)
					}
				}
				if name == "two" {
					r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "plus", Arguments: map[string]any{"a": 2, "b": 3}})
					if err != nil || r.IsError || !strings.Contains(textOf(r), "5") {
						t.Errorf("plus(2, 3) = %v, %v; want a's add called", r, err)
					}
				}
			})
		}
	}
}

// TestNamedEndpointsListChanged: a tool and a prompt added upstream are
// published with their own names; tools/list_changed and
// prompts/list_changed go to the sessions of the endpoints whose view
// changed (the default one and three, which publish dyn), none to one and
// two, and no other tool's name changes anywhere.
func TestNamedEndpointsListChanged(t *testing.T) {
	g, base, addDyn := startNamed(t)
	ctx := context.Background()
	counts, prompts := map[string]*atomic.Int32{}, map[string]*atomic.Int32{}
	sessions := map[string]*mcp.ClientSession{}
	before := map[string][]string{}
	for _, name := range []string{"", "one", "two", "three"} {
		n, p := new(atomic.Int32), new(atomic.Int32)
		counts[name], prompts[name] = n, p
		url := base + "/mcp"
		if name != "" {
			url = base + "/e/" + name + "/mcp"
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { n.Add(1) },
			PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { p.Add(1) },
		}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions[name] = cs
		before[name], _ = listJSON(t, cs)
	}

	addDyn("two")
	for _, name := range []string{"", "three"} {
		wait.For(t, "list_changed on endpoint "+name, func() ([2]int32, bool) {
			n, p := counts[name].Load(), prompts[name].Load()
			return [2]int32{n, p}, n > 0 && p > 0
		})
		names, _ := listJSON(t, sessions[name])
		want := append(slices.Clone(before[name]), "mcp_dyn_two")
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("endpoint %q after a tool was added upstream: %v\nwant %v", name, names, want)
		}
	}
	// One and two: no notification, nothing changed. A round trip on
	// each after the others were told: the SDK sends list_changed to every
	// session of a server at once.
	for _, name := range []string{"one", "two"} {
		names, _ := listJSON(t, sessions[name])
		if !slices.Equal(names, before[name]) {
			t.Errorf("endpoint %s changed: %v, was %v", name, names, before[name])
		}
		if n := counts[name].Load(); n != 0 {
			t.Errorf("endpoint %s got %d tools/list_changed, its view unchanged", name, n)
		}
		if n := prompts[name].Load(); n != 0 {
			t.Errorf("endpoint %s got %d prompts/list_changed, its view unchanged", name, n)
		}
	}

	// A server added at run time joins the default endpoint, which
	// publishes every server, under its own names; the named endpoints,
	// which name their servers, hear nothing and keep their names.
	for _, name := range []string{"", "three"} {
		before[name], _ = listJSON(t, sessions[name])
	}
	three := counts["three"].Load()
	if err := g.Host().AddServer(fixture(t, "c")); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the default endpoint to list c's tools", func() ([]string, bool) {
		names, _ := listJSON(t, sessions[""])
		return names, slices.Contains(names, "mcp_c_echo")
	})
	names, _ := listJSON(t, sessions[""])
	for _, n := range before[""] {
		if !slices.Contains(names, n) {
			t.Errorf("the default endpoint no longer lists %s after server c joined", n)
		}
	}
	for _, name := range []string{"one", "two", "three"} {
		names, _ := listJSON(t, sessions[name])
		if !slices.Equal(names, before[name]) {
			t.Errorf("endpoint %s changed when server c joined: %v, was %v", name, names, before[name])
		}
	}
	if n := counts["one"].Load() + counts["two"].Load() + counts["three"].Load() - three; n != 0 {
		t.Errorf("%d tools/list_changed to endpoints one, two, three when server c joined, which none publishes", n)
	}
}

// TestNamedEndpointWarnsUnused: a rename whose tool the endpoint does not
// offer, and an override of a name it does not publish, are warned of once
// the servers have listed their tools (they cannot be checked before),
// naming the endpoint and the field; what they name does not appear.
func TestNamedEndpointWarnsUnused(t *testing.T) {
	var logs interop.LogBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "a")}, nil, &gateway.Options{Logger: logger, Endpoints: []gateway.Endpoint{{}, {
		Name: "w", Path: "/e/w/mcp", Tools: []string{"a_echo"},
		Rename:   map[string]string{"ghost": "mcp_a_nope", "adder": "mcp_a_add", "say": "mcp_a_echo"},
		Override: map[string]config.ToolOverride{"missing": {Description: "x"}, "say": {Description: "Says."}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{
		`msg="endpoint: rename names no tool the endpoint offers" endpoint=w field=rename.adder tool=mcp_a_add`,
		`msg="endpoint: rename names no tool the endpoint offers" endpoint=w field=rename.ghost tool=mcp_a_nope`,
		`msg="endpoint: override names no tool the endpoint offers" endpoint=w field=override.missing`,
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("the log has %d of %s, want 1:\n%s", strings.Count(out, want), want, out)
		}
	}
	if strings.Contains(out, "rename.say") || strings.Contains(out, "override.say") {
		t.Errorf("warned of a rename and override in use:\n%s", out)
	}
}

// TestSetEndpoints: the endpoint list replaced at run time. An endpoint
// left as it was keeps its sessions; a changed one ends its sessions and
// serves its new view to the next; a removed one's paths answer 404; a new
// one is served at paths the guard did not have, its tools published
// before its first client; a path another route has is refused, changing
// nothing; no goroutine is left behind.
func TestSetEndpoints(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dyn, _ := dynServer()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "a"), fixture(t, "b")},
		&host.Options{InProcess: []host.InProcessServer{{ID: "dyn", Server: dyn}}},
		&gateway.Options{Endpoints: namedEndpoints()})
	if err != nil {
		t.Fatal(err)
	}
	gd, err := guard.New(ctx, &guard.Options{Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	gd.Handle("/taken/mcp", guard.AccessOwner, "", http.NotFoundHandler())
	g.Mount(gd, nil)
	ts := httptest.NewServer(gd)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		ts.Close()
		wait.Goroutines(t, before)
	})
	base := ts.URL
	open := func(name string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/e/" + name + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("endpoint %s: connect: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	one, two := open("one"), open("two")

	eps := namedEndpoints()
	eps[2].Tools = []string{"b_echo"} // two changed
	eps[2].Rename, eps[2].Override = nil, nil
	four := gateway.Endpoint{Name: "four", Path: "/e/four/mcp", SSE: "/e/four/sse", Message: "/e/four/message", WebSocket: "/e/four/ws", Servers: []string{"dyn"}}
	taken := gateway.Endpoint{Name: "five", Path: "/taken/mcp"}
	if err := g.SetEndpoints(ctx, append(slices.Clone(eps[:3]), four, taken)); err == nil || !strings.Contains(err.Error(), "/taken/mcp") {
		t.Fatalf("SetEndpoints with a path another route has: %v, want an error naming it", err)
	}
	if names, _ := listJSON(t, two); !slices.Equal(names, wantTools["two"]) {
		t.Errorf("after a refused SetEndpoints, endpoint two lists %v", names)
	}

	if err := g.SetEndpoints(ctx, append(slices.Clone(eps[:3]), four)); err != nil {
		t.Fatal(err)
	}
	if names, _ := listJSON(t, one); !slices.Equal(names, wantTools["one"]) {
		t.Errorf("endpoint one, unchanged, lists %v on its session", names)
	}
	if _, err := two.ListTools(ctx, nil); err == nil {
		t.Errorf("the session of endpoint two, changed, still answers")
	}
	if names, _ := listJSON(t, open("two")); !slices.Equal(names, []string{"mcp_b_echo"}) {
		t.Errorf("endpoint two, changed, lists %v to a new session, want [mcp_b_echo]", names)
	}
	if names, _ := listJSON(t, open("four")); !slices.Equal(names, []string{"mcp_dyn_one"}) {
		t.Errorf("endpoint four, new, lists %v, want [mcp_dyn_one]", names)
	}
	ws, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &transport.WebSocket{URL: "ws" + strings.TrimPrefix(base, "http") + "/e/four/ws"}, nil)
	if err != nil {
		t.Fatalf("endpoint four over WebSocket: %v", err)
	}
	ws.Close()
	resp, err := http.Post(base+"/e/three/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /e/three/mcp, three removed: %s, want 404", resp.Status)
	}
}

// TestSetEndpointsTokens: an endpoint's own token follows SetEndpoints on
// every path of the endpoint: a changed token opens it from then on and
// the old one does not; once the endpoint is gone its token is nobody's
// (401, not another endpoint's 403). The listener has an owner's token,
// so that /mcp asks for a credential.
func TestSetEndpointsTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ep := func(tok string) gateway.Endpoint {
		return gateway.Endpoint{Name: "a", Path: "/e/a/mcp", SSE: "/e/a/sse", Message: "/e/a/message", WebSocket: "/e/a/ws", AuthToken: tok}
	}
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx")}, nil,
		&gateway.Options{Endpoints: []gateway.Endpoint{gateway.DefaultEndpoint, ep("tok-one")}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true, AuthToken: "owner"}}))
	defer ts.Close()
	// status is what an initialize at path with token gets.
	status := func(path, token string) int {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	check := func(when string, want map[[2]string]int) {
		t.Helper()
		for k, w := range want {
			if got := status(k[0], k[1]); got != w {
				t.Errorf("%s: %s with %s: %d, want %d", when, k[0], k[1], got, w)
			}
		}
	}
	before := runtime.NumGoroutine() // the endpoint a's included
	check("at first", map[[2]string]int{
		{"/e/a/mcp", "tok-one"}: 200, {"/e/a/mcp", "tok-two"}: 401, {"/mcp", "tok-one"}: 403, {"/e/a/mcp", "owner"}: 200,
	})
	if err := g.SetEndpoints(ctx, []gateway.Endpoint{gateway.DefaultEndpoint, ep("tok-two")}); err != nil {
		t.Fatal(err)
	}
	check("token changed", map[[2]string]int{
		{"/e/a/mcp", "tok-two"}: 200, {"/e/a/mcp", "tok-one"}: 401, {"/mcp", "tok-two"}: 403, {"/mcp", "tok-one"}: 401,
	})
	if err := g.SetEndpoints(ctx, []gateway.Endpoint{gateway.DefaultEndpoint}); err != nil {
		t.Fatal(err)
	}
	check("endpoint removed", map[[2]string]int{
		{"/e/a/mcp", "tok-two"}: 401, {"/mcp", "tok-two"}: 401, {"/e/a/mcp", "owner"}: 404,
	})
	// What the endpoints that were replaced or removed ran has ended:
	// changing endpoints leaves nothing behind (their WebSocket handler's
	// watch on the gateway's end included).
	http.DefaultClient.CloseIdleConnections()
	ts.CloseClientConnections()
	wait.Goroutines(t, before-1)
}
