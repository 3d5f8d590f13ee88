package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/internal/testkit/toolfixture"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
)

// toolFixture is server id of the 500-tool fixture, served by a
// testserver child process (-tools-file).
func toolFixture(t testing.TB, id string) config.Server {
	return fixture(t, id, "-tools-file", toolfixture.File(id))
}

// allToolFixtures are the fixture's ten servers.
func allToolFixtures(t testing.TB) []config.Server {
	var out []config.Server
	for _, s := range toolfixture.Servers() {
		out = append(out, toolFixture(t, s.ID))
	}
	return out
}

// modeEndpoint is a named endpoint in mode.
func modeEndpoint(name, mode string) gateway.Endpoint {
	e := namedEndpoint(name, nil)
	e.Mode = mode
	return e
}

// connectVersion connects a go-sdk client to the Streamable HTTP endpoint
// at path, speaking version.
func connectVersion(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// searchNames are the names search_tools answers for query.
func searchNames(t *testing.T, cs *mcp.ClientSession, query string, limit int) []string {
	t.Helper()
	res := call(t, cs, gateway.SearchToolName, map[string]any{"query": query, "limit": limit})
	if res.IsError {
		t.Fatalf("search_tools %q: %s", query, textOf(res))
	}
	if strings.HasPrefix(textOf(res), "No tool matches") {
		return nil
	}
	var out struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(textOf(res)), &out); err != nil {
		t.Fatalf("search_tools %q answered %q: %v", query, textOf(res), err)
	}
	var names []string
	for _, tl := range out.Tools {
		if tl.Description == "" || len(tl.InputSchema) == 0 {
			t.Errorf("search_tools %q: %s comes without its description or input schema", query, tl.Name)
		}
		names = append(names, tl.Name)
	}
	return names
}

// TestSearchMode: over the 500-tool fixture (ten child processes), an
// endpoint in search mode lists exactly search_tools and call_tool, in
// both protocol generations (2026-07-28 stateless); search_tools finds
// the tools by what they do, and call_tool calls one as a direct call
// does: its arguments validated against its schema, an unknown name a
// tool error pointing at search_tools. An endpoint in code mode lists
// search_tools and run_code, which says code mode is not in this build
// (no CodeRunner). The default endpoint, in mode all, lists the 500.
func TestSearchMode(t *testing.T) {
	// What the outermost middleware (telemetry's place) sees of calls.
	var mu sync.Mutex
	var seen []string
	record := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok {
				mu.Lock()
				seen = append(seen, r.Params.Name)
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	}
	_, base := serveWith(t, allToolFixtures(t), nil, &gateway.Options{Middleware: []mcp.Middleware{record}, Endpoints: []gateway.Endpoint{
		{}, modeEndpoint("s", config.ModeSearch), modeEndpoint("c", config.ModeCode)}}, nil)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			all := connectVersion(t, base+"/mcp", v)
			n := 0
			for _, err := range all.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n < 500 {
				t.Errorf("/mcp (mode all) lists %d tools, want the fixture's 500", n)
			}

			cs := connectVersion(t, base+"/e/s/mcp", v)
			if got, want := toolNames(t, cs), []string{gateway.CallToolName, gateway.SearchToolName}; !slices.Equal(got, want) {
				t.Fatalf("search endpoint lists %q, want %q", got, want)
			}
			got := searchNames(t, cs, "merge the PR with squash", 5)
			if !slices.Contains(got, "mcp_github_merge_pull_request") {
				t.Errorf("search_tools(merge the PR with squash) = %q, want mcp_github_merge_pull_request among them", got)
			}
			if len(got) > 5 {
				t.Errorf("search_tools with limit 5 answered %d tools", len(got))
			}

			mu.Lock()
			seen = nil
			mu.Unlock()
			res := call(t, cs, gateway.CallToolName, map[string]any{"name": "mcp_github_merge_pull_request",
				"arguments": map[string]any{"owner": "acme", "repo": "web", "pull_number": 7, "merge_method": "squash"}})
			mu.Lock()
			if want := []string{"mcp_github_merge_pull_request"}; !slices.Equal(seen, want) {
				t.Errorf("the middleware saw calls %q, want %q: call_tool must be labelled by the tool it calls", seen, want)
			}
			mu.Unlock()
			if res.IsError || !strings.HasPrefix(textOf(res), "called merge_pull_request {") || !strings.Contains(textOf(res), `"pull_number":7`) {
				t.Errorf("call_tool merge_pull_request = %q (isError %v), want the upstream's answer", textOf(res), res.IsError)
			}
			// The same validation as a direct call: pull_number is required.
			res = call(t, cs, gateway.CallToolName, map[string]any{"name": "mcp_github_merge_pull_request",
				"arguments": map[string]any{"owner": "acme", "repo": "web"}})
			direct := call(t, all, "mcp_github_merge_pull_request", map[string]any{"owner": "acme", "repo": "web"})
			if !res.IsError || textOf(res) != textOf(direct) {
				t.Errorf("call_tool without a required argument = %q (isError %v), want the direct call's %q", textOf(res), res.IsError, textOf(direct))
			}
			res = call(t, cs, gateway.CallToolName, map[string]any{"name": "mcp_github_no_such_tool"})
			if !res.IsError || !strings.Contains(textOf(res), "mcp_github_no_such_tool") || !strings.Contains(textOf(res), gateway.SearchToolName) {
				t.Errorf("call_tool of an unknown tool = %q (isError %v), want a tool error naming it and search_tools", textOf(res), res.IsError)
			}
			for _, bad := range []map[string]any{{"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "limit": 51}} {
				if res := call(t, cs, gateway.SearchToolName, bad); !res.IsError {
					t.Errorf("search_tools %v = %q, want a tool error", bad, textOf(res))
				}
			}

			code := connectVersion(t, base+"/e/c/mcp", v)
			if got, want := toolNames(t, code), []string{gateway.RunCodeName, gateway.SearchToolName}; !slices.Equal(got, want) {
				t.Fatalf("code endpoint lists %q, want %q", got, want)
			}
			res = call(t, code, gateway.RunCodeName, map[string]any{"code": "return 1"})
			if !res.IsError || !strings.Contains(textOf(res), "code mode is not available in this build") {
				t.Errorf("run_code without a CodeRunner = %q (isError %v)", textOf(res), res.IsError)
			}
			if got := searchNames(t, code, "read a local text file", 3); !slices.Contains(got, "mcp_filesystem_read_file") {
				t.Errorf("code endpoint's search_tools(read a local text file) = %q", got)
			}
		})
	}
}

// TestSearchModeTokens: tools/list of an endpoint in search mode is at
// least 90 % smaller, in tokens, than that of an endpoint in mode all over
// the 500-tool fixture. Tokens are counted by js-tiktoken (OpenAI's BPE,
// o200k_base, run offline under Node), over the listed tools as JSON.
func TestSearchModeTokens(t *testing.T) {
	// Both endpoints offer the fixture's tools alone (not the
	// testserver's own).
	var fixtureTools []string
	for _, s := range toolfixture.Servers() {
		for _, tl := range s.Tools {
			fixtureTools = append(fixtureTools, s.ID+"_"+tl.Name)
		}
	}
	all, search := modeEndpoint("a", config.ModeAll), modeEndpoint("s", config.ModeSearch)
	all.Tools, search.Tools = fixtureTools, fixtureTools
	_, base := serveWith(t, allToolFixtures(t), nil, &gateway.Options{Endpoints: []gateway.Endpoint{{}, all, search}}, nil)
	var counts []int
	list := func(url string) []byte {
		cs := connectVersion(t, url, "2025-11-25")
		var tools []*mcp.Tool
		for tl, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tl)
		}
		b, err := json.Marshal(tools)
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, len(tools))
		return b
	}
	allJSON, searchJSON := list(base+"/e/a/mcp"), list(base+"/e/s/mcp")
	if counts[0] != len(fixtureTools) {
		t.Fatalf("the endpoint in mode all lists %d tools, want the fixture's %d", counts[0], len(fixtureTools))
	}
	allTokens, searchTokens := interop.CountTokens(t, allJSON), interop.CountTokens(t, searchJSON)
	saved := 1 - float64(searchTokens)/float64(allTokens)
	t.Logf("tools/list: mode all %d tools, %d tokens (%d bytes); mode search %d tools, %d tokens (%d bytes): %.1f %% fewer tokens (js-tiktoken %s, o200k_base)",
		counts[0], allTokens, len(allJSON), counts[1], searchTokens, len(searchJSON), 100*saved, interop.JSTiktokenVersion)
	if saved < 0.9 {
		t.Errorf("search mode saves %.1f %% of tools/list's tokens, want at least 90 %%", 100*saved)
	}
}

// TestSearchModePolicy: an OAuth token whose policy grants github alone
// neither finds (search_tools) nor calls (call_tool) slack's tools on an
// endpoint in search mode, over both generations; the owner's token finds
// and calls both.
func TestSearchModePolicy(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const owner = "owner-token-5e2a"
	s := modeEndpoint("s", config.ModeSearch)
	s.Policy = []config.AuthPolicy{{Scope: "tools:github", Servers: []string{"github"}}}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{toolFixture(t, "github"), toolFixture(t, "slack")}, nil,
		&gateway.Options{Endpoints: []gateway.Endpoint{{}, s}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	ts.Config.Handler = g.Handler(&gateway.HTTPOptions{Guard: guard.Options{
		Loopback: true, AuthToken: owner,
		OAuth: &guard.OAuthOptions{Issuer: as.Issuer, Resource: base + "/mcp", Scopes: []string{"mcp"}},
	}})
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	now := time.Now()
	bob, err := as.Mint(jwt.MapClaims{"iss": as.Issuer, "aud": base + "/e/s/mcp", "sub": "bob", "scope": "mcp tools:github",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	slackArgs := map[string]any{"name": "mcp_slack_post_message", "arguments": map[string]any{"channel": "C1", "text": "hi"}}
	for _, v := range versions {
		for _, who := range []struct {
			name, tok string
			slack     bool
		}{{"owner", owner, true}, {"github-only token", bob, false}} {
			t.Run(v+"/"+who.name, func(t *testing.T) {
				c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
				cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/e/s/mcp", HTTPClient: bearerClient(who.tok)},
					&mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				var found []string
				for _, q := range []string{"send a message to a slack channel", "post message", "slack", "create an issue"} {
					found = append(found, searchNames(t, cs, q, gateway.MaxSearchLimit)...)
				}
				sawSlack := slices.ContainsFunc(found, func(n string) bool { return strings.HasPrefix(n, "mcp_slack_") })
				if sawSlack != who.slack {
					t.Errorf("search_tools found slack's tools: %v, want %v (found %q)", sawSlack, who.slack, found)
				}
				if !slices.Contains(found, "mcp_github_create_issue") {
					t.Errorf("search_tools did not find mcp_github_create_issue: %q", found)
				}
				res := call(t, cs, gateway.CallToolName, slackArgs)
				called := !res.IsError && strings.HasPrefix(textOf(res), "called post_message")
				if called != who.slack {
					t.Errorf("call_tool mcp_slack_post_message = %q (isError %v), want called %v", textOf(res), res.IsError, who.slack)
				}
				if !who.slack && !strings.Contains(textOf(res), fmt.Sprintf("unknown tool %q", "mcp_slack_post_message")) {
					t.Errorf("a denied call_tool answered %q, want the unknown tool error a direct call gets", textOf(res))
				}
			})
		}
	}
}

// TestSearchModeFresh: search_tools answers from the catalog as it is —
// a server added at run time is found at once — while the endpoint's
// clients get no tools/list_changed: its two tools did not change. A
// client of an endpoint in mode all, told of the change, is the witness
// that the change was published. Both generations (2026-07-28: through
// subscriptions/listen).
func TestSearchModeFresh(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) { testSearchModeFresh(t, v) })
	}
}

func testSearchModeFresh(t *testing.T, version string) {
	g, base := serveWith(t, []config.Server{toolFixture(t, "github")}, nil, &gateway.Options{Endpoints: []gateway.Endpoint{
		{}, modeEndpoint("s", config.ModeSearch)}}, nil)
	ctx := context.Background()
	var allChanged, searchChanged atomic.Int32
	connect := func(path string, n *atomic.Int32) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { n.Add(1) },
		}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + path}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	all, search := connect("/mcp", &allChanged), connect("/e/s/mcp", &searchChanged)
	toolNames(t, all)
	before := toolNames(t, search)
	if got := searchNames(t, search, "set the topic of a slack channel", 5); slices.Contains(got, "mcp_slack_set_channel_topic") {
		t.Fatalf("found slack's tool before slack was added: %q", got)
	}
	if err := g.Host().AddServer(toolFixture(t, "slack")); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "tools/list_changed on the endpoint in mode all", func() (int32, bool) {
		n := allChanged.Load()
		return n, n > 0
	})
	wait.For(t, "search_tools to find slack's tool", func() ([]string, bool) {
		got := searchNames(t, search, "set the topic of a slack channel", 5)
		return got, slices.Contains(got, "mcp_slack_set_channel_topic")
	})
	if after := toolNames(t, search); !slices.Equal(after, before) {
		t.Errorf("the search endpoint's tools/list changed: %q, was %q", after, before)
	}
	if n := searchChanged.Load(); n != 0 {
		t.Errorf("the search endpoint's client got %d tools/list_changed; its two tools did not change", n)
	}
}

// TestSearchModeAsks: call_tool of a tool whose server asks during the
// call (elicitation) works as the direct call does in both generations:
// 2025-11-25, the question forwarded to the client on the call's stream;
// 2026-07-28 over Streamable HTTP, statelessly, with an upstream of
// either generation (its own input-required result, or the gateway's
// bridge), the client's retry of call_tool carrying its answers back.
func TestSearchModeAsks(t *testing.T) {
	_, base := serveWith(t, []config.Server{fixture(t, "fx"), fixture(t, "old", "-protocol-version", "2025-11-25")}, nil,
		&gateway.Options{Endpoints: []gateway.Endpoint{{}, modeEndpoint("s", config.ModeSearch)}}, nil)
	for _, v := range versions {
		for _, tool := range []string{"mcp_fx_elicit", "mcp_old_elicit"} {
			t.Run(v+"/"+tool, func(t *testing.T) {
				var elicited atomic.Int32
				c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						elicited.Add(1)
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Searching Sam"}}, nil
					},
				})
				cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/e/s/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res := call(t, cs, gateway.CallToolName, map[string]any{"name": tool, "arguments": map[string]any{}})
				if res.IsError || !strings.Contains(textOf(res), "Searching Sam") || elicited.Load() != 1 {
					t.Errorf("call_tool %s = %q (isError %v), elicited %d times; want the answer given, once", tool, textOf(res), res.IsError, elicited.Load())
				}
			})
		}
	}
}

// scriptRunner is a CodeRunner for testing the hook, not a sandbox: its
// "program" is JSON naming one tool to call with its arguments.
type scriptRunner struct {
	mu     sync.Mutex
	tools  int
	budget gateway.CodeBudget
}

func (r *scriptRunner) RunCodeTool() *mcp.Tool {
	return &mcp.Tool{Name: "ignored", Description: "Runs a script runner's JSON.", InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}}}`)}
}

func (r *scriptRunner) RunCode(ctx context.Context, req gateway.CodeRequest) (*mcp.CallToolResult, error) {
	r.mu.Lock()
	r.tools, r.budget = len(req.Tools), req.Budget
	r.mu.Unlock()
	var p struct {
		Call string          `json:"call"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal([]byte(req.Code), &p); err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
	}
	res, err := req.Call(ctx, p.Call, p.Args)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// TestCodeRunnerHook: an endpoint in code mode with Options.CodeRunner
// lists the runner's run_code definition (named run_code); the runner gets
// the endpoint's tools and Options.Code, and its calls take call_tool's
// path (the outermost middleware sees the tool called).
func TestCodeRunnerHook(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok {
				mu.Lock()
				seen = append(seen, r.Params.Name)
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	}
	runner := &scriptRunner{}
	budget := gateway.CodeBudget{CPUTime: time.Second, WallTime: 2 * time.Second, Memory: 1 << 20, Output: 1 << 10}
	_, base := serveWith(t, []config.Server{toolFixture(t, "github")}, nil, &gateway.Options{Middleware: []mcp.Middleware{record},
		CodeRunner: runner, Code: budget, Endpoints: []gateway.Endpoint{{}, modeEndpoint("c", config.ModeCode)}}, nil)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connectVersion(t, base+"/e/c/mcp", v)
			lt, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(lt.Tools) != 2 || lt.Tools[0].Name != gateway.RunCodeName || lt.Tools[0].Description != "Runs a script runner's JSON." {
				t.Fatalf("tools/list = %+v, want the runner's run_code and search_tools", lt.Tools)
			}
			mu.Lock()
			seen = nil
			mu.Unlock()
			res := call(t, cs, gateway.RunCodeName, map[string]any{"code": `{"call":"mcp_github_get_issue","args":{"owner":"a","repo":"b","issue_number":3}}`})
			if res.IsError || !strings.HasPrefix(textOf(res), "called get_issue {") {
				t.Errorf("run_code = %q (isError %v), want get_issue's answer", textOf(res), res.IsError)
			}
			mu.Lock()
			if want := []string{gateway.RunCodeName, "mcp_github_get_issue"}; !slices.Equal(seen, want) {
				t.Errorf("the middleware saw calls %q, want %q", seen, want)
			}
			mu.Unlock()
			runner.mu.Lock()
			if runner.tools < 50 || runner.budget != budget {
				t.Errorf("the runner got %d tools and budget %+v, want github's 50 and more, and %+v", runner.tools, runner.budget, budget)
			}
			runner.mu.Unlock()
		})
	}
}

// meaningEmbedder stands in for an embedding model (which cannot run
// here): a text's vector counts the words of a few concepts, so that
// "reimburse" is near "refund" although they share no word.
type meaningEmbedder struct{ calls, tools atomic.Int32 }

func (e *meaningEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	if len(texts) > 1 {
		e.tools.Add(int32(len(texts))) // a query is one text; the tools come in a batch
	}
	concepts := [][]string{{"reimburse", "refund"}, {"file", "disk"}, {"issue", "bug"}}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(concepts)+1)
		v[len(concepts)] = 0.01 // no zero vector
		for c, words := range concepts {
			for _, w := range words {
				v[c] += float32(strings.Count(strings.ToLower(t), w))
			}
		}
		out[i] = v
	}
	return out, nil
}

// TestSearchModeEmbeddings: with Options.Embeddings, search_tools finds a
// tool by meaning once its vectors are computed (on a goroutine: lexical
// until then), and they are kept in the state store, by definition: a
// second gateway over the same store asks the embedder for queries only.
func TestSearchModeEmbeddings(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for round := range 2 {
		e := &meaningEmbedder{}
		_, base := serveWith(t, []config.Server{toolFixture(t, "stripe")}, nil, &gateway.Options{
			Embeddings: &gateway.Embeddings{Embedder: e, Model: "test:meaning", Cache: st},
			Endpoints:  []gateway.Endpoint{{}, modeEndpoint("s", config.ModeSearch)}}, nil)
		cs := connectVersion(t, base+"/e/s/mcp", "2026-07-28")
		// "reimburse" is no word of any stripe tool: lexically, nothing.
		wait.For(t, "search_tools to find create_refund by meaning", func() ([]string, bool) {
			got := searchNames(t, cs, "reimburse", 3)
			return got, slices.Contains(got, "mcp_stripe_create_refund")
		})
		switch got := e.tools.Load(); {
		case round == 0 && got < 50:
			t.Errorf("the first gateway embedded %d tools, want stripe's 50", got)
		case round == 1 && got != 0:
			t.Errorf("the second gateway embedded %d tools, want none: their vectors are in the store", got)
		}
	}
}

// TestModeAllCallTool: on an endpoint in mode all, an upstream tool named
// call_tool or search_tools is listed and called as it is.
func TestModeAllCallTool(t *testing.T) {
	_, base := serveWith(t, []config.Server{fixture(t, "fx", "-tool-name", "call_tool", "-tool-name", "search_tools")},
		&host.Options{ToolNameFormat: "{tool}"}, nil, nil)
	cs := connectVersion(t, base+"/mcp", "2025-11-25")
	names := toolNames(t, cs)
	for _, n := range []string{"call_tool", "search_tools"} {
		if !slices.Contains(names, n) {
			t.Errorf("tools/list = %q, want %s among them", names, n)
		}
		if res := call(t, cs, n, map[string]any{}); res.IsError || textOf(res) != "called "+n {
			t.Errorf("%s = %q (isError %v), want the upstream's answer", n, textOf(res), res.IsError)
		}
	}
}
