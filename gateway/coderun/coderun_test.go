package coderun_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/gateway/coderun"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/internal/testkit/toolfixture"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// serve starts a gateway over two fixture servers (real child processes)
// with a code-mode endpoint at /e/code/mcp offering fx's add and echo
// (not fx's env, nor any of gx's), the runner given, and returns its
// base URL.
func serve(t testing.TB, runner gateway.CodeRunner) string {
	t.Helper()
	bin := interop.Build(t, fixturePkg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{
		{ID: "fx", Transport: config.TransportStdio, Command: bin},
		{ID: "gx", Transport: config.TransportStdio, Command: bin},
	}, nil, &gateway.Options{
		Endpoints:  []gateway.Endpoint{{}, {Name: "code", Path: "/e/code/mcp", Mode: config.ModeCode, Servers: []string{"fx"}, Tools: []string{"fx_add", "fx_echo"}}},
		CodeRunner: runner,
		Code:       gateway.CodeBudget{CPUTime: 300 * time.Millisecond, WallTime: 5 * time.Second, Memory: 64 << 20, Output: 64 << 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	return ts.URL
}

func connect(t testing.TB, url, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (%s): %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestCodeMode: a code-mode endpoint lists run_code (this runner's) and
// search_tools, whose answers say how a program calls each tool; a
// program chains three calls through the gateway, in both protocol
// generations; a tool the endpoint does not offer is not there for a
// program; a program that loops or throws is a tool error naming why.
func TestCodeMode(t *testing.T) {
	base := serve(t, coderun.New())
	ctx := context.Background()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, base+"/e/code/mcp", version)
			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(lt.Tools) != 2 || lt.Tools[0].Name != gateway.RunCodeName || !strings.Contains(lt.Tools[0].Description, "Write the body of an async JavaScript function") {
				t.Fatalf("tools/list = %+v; want this runner's run_code, then search_tools", lt.Tools)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": "add two numbers"}})
			if err != nil || res.IsError || !strings.Contains(textOf(res), `"function":"tools.fx.add","declaration":"tools.fx.add(args: { a: number; b: number }): Promise<ToolResult>"`) {
				t.Fatalf("search_tools: %v %s; want fx's add with its code name", err, textOf(res))
			}

			run := func(code string) (*mcp.CallToolResult, map[string]any) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.RunCodeName, Arguments: map[string]any{"code": code}})
				if err != nil {
					t.Fatalf("run_code: %v", err)
				}
				var out map[string]any
				json.Unmarshal([]byte(textOf(res)), &out)
				return res, out
			}
			res, out := run(`const s = await tools.fx.add({a: 2, b: 3});
				const [t] = await Promise.all([tools.fx.add({a: s.sum, b: 10})]);
				const e = await tools.fx.echo({text: "total " + t.sum});
				console.log("chained");
				return e;`)
			if res.IsError || out["value"] != "total 15" || out["console"] != "chained\n" || out["calls"] != float64(3) {
				t.Errorf("the three-call chain: %s; want value \"total 15\", its console line, 3 calls", textOf(res))
			}
			for _, c := range []struct{ code, want string }{
				{`return await tools.fx.env({name: "HOME"})`, "there is no tool tools.fx.env"},
				{`return await tools.gx.add({a: 1, b: 1})`, "tools.gx"},
				{`while (true) {}`, "CPU time budget of 300ms spent"},
				{`throw new Error("no luck")`, "no luck"},
				{`return await tools.fx.add({a: "two"})`, "tools.fx.add"},
			} {
				if res, _ := run(c.code); !res.IsError || !strings.Contains(textOf(res), c.want) {
					t.Errorf("run_code(%s) = %s; want a tool error with %q", c.code, textOf(res), c.want)
				}
			}
		})
	}
}

// BenchmarkRunCodeOverhead: a tools/call of echo on the default endpoint
// and a run_code whose program makes that one call, through the same
// gateway over HTTP, in turns; "extra-ms/op" is what run_code adds.
func BenchmarkRunCodeOverhead(b *testing.B) {
	base := serve(b, coderun.New())
	ctx := context.Background()
	direct, code := connect(b, base+"/mcp", "2025-11-25"), connect(b, base+"/e/code/mcp", "2025-11-25")
	var dt, ct time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			b.Fatal(err)
		}
		dt += time.Since(start)
		start = time.Now()
		res, err := code.CallTool(ctx, &mcp.CallToolParams{Name: gateway.RunCodeName, Arguments: map[string]any{"code": `return await tools.fx.echo({text: "x"})`}})
		if err != nil || res.IsError {
			b.Fatal(err, textOf(res))
		}
		ct += time.Since(start)
	}
	b.ReportMetric(float64(dt.Microseconds())/float64(b.N)/1000, "direct-ms/op")
	b.ReportMetric(float64(ct.Microseconds())/float64(b.N)/1000, "run_code-ms/op")
	b.ReportMetric(float64((ct-dt).Microseconds())/float64(b.N)/1000, "extra-ms/op")
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestCodeModePolicy: a program's tools are what the caller's OAuth policy
// lets it see: the owner's program posts to slack, while a program run
// with a token limited to github's tools finds no tools.slack (and its
// github calls work); both protocol generations.
func TestCodeModePolicy(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const owner = "owner-token-3f1c"
	bin := interop.Build(t, fixturePkg)
	fx := func(id string) config.Server {
		return config.Server{ID: id, Transport: config.TransportStdio, Command: bin, Args: []string{"-tools-file", toolfixture.File(id)}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fx("github"), fx("slack")}, nil, &gateway.Options{
		Endpoints: []gateway.Endpoint{{}, {Name: "c", Path: "/e/c/mcp", Mode: config.ModeCode,
			Policy: []config.AuthPolicy{{Scope: "tools:github", Servers: []string{"github"}}}}},
		CodeRunner: coderun.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	ts.Config.Handler = g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true, AuthToken: owner,
		OAuth: &guard.OAuthOptions{Issuer: as.Issuer, Resource: base + "/mcp", Scopes: []string{"mcp"}}}})
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	now := time.Now()
	bob, err := as.Mint(jwt.MapClaims{"iss": as.Issuer, "aud": base + "/e/c/mcp", "sub": "bob", "scope": "mcp tools:github",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	const post = `return await tools.slack.post_message({channel: "C1", text: "hi"})`
	const issue = `return await tools.github.get_issue({owner: "o", repo: "r", issue_number: 1})`
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, who := range []struct {
			name, tok string
			slack     bool
		}{{"owner", owner, true}, {"github-only token", bob, false}} {
			t.Run(version+"/"+who.name, func(t *testing.T) {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: base + "/e/c/mcp", HTTPClient: &http.Client{Transport: bearer{who.tok}}},
					&mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				run := func(code string) *mcp.CallToolResult {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.RunCodeName, Arguments: map[string]any{"code": code}})
					if err != nil {
						t.Fatalf("run_code: %v", err)
					}
					return res
				}
				if res := run(issue); res.IsError || !strings.Contains(textOf(res), "called get_issue") {
					t.Errorf("a program calling github's get_issue: %s", textOf(res))
				}
				res := run(post)
				if posted := !res.IsError && strings.Contains(textOf(res), "called post_message"); posted != who.slack {
					t.Errorf("a program posting to slack: %s (isError %v); want it posted: %v", textOf(res), res.IsError, who.slack)
				}
				if !who.slack && !strings.Contains(textOf(res), "tools.slack") {
					t.Errorf("a denied program's error %q does not name tools.slack", textOf(res))
				}
			})
		}
	}
}

// TestToolsCollide: two tools whose names make one identifier do not take
// code mode away from the others: the first is kept, and a program runs.
func TestToolsCollide(t *testing.T) {
	offered := []gateway.OfferedTool{
		{Tool: &mcp.Tool{Name: "mcp_gh_get-issue", InputSchema: map[string]any{"type": "object"}}, Server: "gh"},
		{Tool: &mcp.Tool{Name: "mcp_gh_get_issue", InputSchema: map[string]any{"type": "object"}}, Server: "gh"},
		{Tool: &mcp.Tool{Name: "mcp_gh_list", InputSchema: map[string]any{"type": "object"}}, Server: "gh"},
	}
	tools := coderun.Tools(offered)
	if len(tools) != 2 || tools[0].Name != "mcp_gh_get-issue" || tools[1].Name != "mcp_gh_list" {
		t.Fatalf("Tools = %+v; want get-issue and list", tools)
	}
	res, err := coderun.New().RunCode(context.Background(), gateway.CodeRequest{
		Code: `return await tools.gh.list({})`, Tools: offered,
		Call: func(ctx context.Context, name string, _ json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + name}}}, nil
		},
	})
	if err != nil || res.IsError || !strings.Contains(textOf(res), "called mcp_gh_list") {
		t.Errorf("a program over the colliding tools: %v %s", err, textOf(res))
	}
}
