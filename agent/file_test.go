package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/decode"
)

func TestParseMarkdown(t *testing.T) {
	a, err := Parse("agents/calc.md", []byte(`---
description: Adds numbers
model: openai:gpt-4.1-mini
temperature: 0.2
max_steps: 5
mcp_servers:
  - ref: everything
    tools_allowlist: [get-sum]
  - memory
  - id: local
    command: node
    args: [server.js]
    timeout: 5s
tools: [mcp_everything_get-sum]
builtins: [read_file, http_request]
http_allow: [api.example.com]
---
You add numbers.
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	temp := 0.2
	want := &Agent{
		ID: "calc", Description: "Adds numbers", Model: "openai:gpt-4.1-mini", Temperature: &temp, MaxSteps: 5,
		Servers: []ServerEntry{
			{Ref: "everything", ToolsAllowlist: []string{"get-sum"}, Pos: config.Position{File: "agents/calc.md", Line: 7, Field: "mcp_servers[0]"}},
			{Ref: "memory", Pos: config.Position{File: "agents/calc.md", Line: 9, Field: "mcp_servers[1]"}},
			{Server: config.Server{ID: "local", Transport: config.TransportStdio, Command: "node", Args: []string{"server.js"},
				Timeout: 5e9, ConnectTimeout: config.DefaultConnectTimeout,
				Source: config.Position{File: "agents/calc.md", Line: 10, Field: "mcp_servers[2]"}},
				Pos: config.Position{File: "agents/calc.md", Line: 10, Field: "mcp_servers[2]"}},
		},
		Tools:     []string{"mcp_everything_get-sum"},
		Builtins:  []string{"read_file", "http_request"},
		HTTPAllow: []string{"api.example.com"},
		System:    "You add numbers.",
		File:      "agents/calc.md",
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestParseYAMLNoServers(t *testing.T) {
	a, err := Parse("x/helper.yaml", []byte("model: ollama:llama3.2\nsystem: Be brief.\n"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if a.ID != "helper" || a.Servers != nil || a.System != "Be brief." || a.MaxSteps != DefaultMaxSteps {
		t.Errorf("Parse = %+v", a)
	}
	a, err = Parse("x/none.yaml", []byte("mcp_servers: []\n"))
	if err != nil || a.Servers == nil || len(a.Servers) != 0 {
		t.Errorf("Parse(mcp_servers: []) = %+v, %v; want an empty, non-nil list", a, err)
	}
}

// TestParseProblems pins the problems of broken agent files: every one is
// reported, each with file, line and field.
func TestParseProblems(t *testing.T) {
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"types and unknown fields", "a.md", `---
model: gpt-4
max_steps: "ten"
temprature: 0.5
tools: mcp_x_y
allow_sampling: yes please
---
body`, []string{
			`a.md:2: model: want provider:model, such as openai:gpt-4.1-mini or ollama:llama3.2, not "gpt-4"`,
			`a.md:3: max_steps: must be a whole number, not a string`,
			`a.md:4: temprature: unknown field "temprature"; did you mean temperature?`,
			`a.md:5: tools: must be none, inherit or a list of tool names, not "mcp_x_y"`,
			`a.md:6: allow_sampling: must be true or false, not a string`,
		}},
		{"ambiguous servers", "b.yaml", `mcp_servers:
  - ref: everything
    command: npx
  - id: inline
    command: node
    url: https://x.example.com/mcp
  - 42
  - ref: everything
mcp_discovery: 1
`, []string{
			`b.yaml:3: mcp_servers[0].command: not allowed beside ref (only tools_allowlist is); an entry is either ref: ID or an inline server`,
			`b.yaml:6: mcp_servers[1].url: only for network transports (http, sse, websocket), not stdio`,
			`b.yaml:7: mcp_servers[2]: must be a server id or a mapping (ref: ID, or an inline server), not an integer`,
			`b.yaml:9: mcp_discovery: must be true or false, not an integer`,
		}},
		{"servers not a list", "c.yaml", "mcp_servers:\n  everything: {}\n", []string{
			`c.yaml:1: mcp_servers: must be a list of servers, not a mapping (start each entry with -)`,
		}},
		{"no front matter", "d.md", "just text", []string{
			`d.md:1: a Markdown agent needs YAML front matter: a first line ---, the fields, then a line ---`,
		}},
		{"duplicate key and syntax", "e.yaml", "model: a:b\nmodel: c:d\n", []string{
			`e.yaml:2: invalid YAML: mapping key "model" already defined at [1:1]`,
		}},
		{"http_request without hosts", "f.yaml", "builtins: [http_request, shell]\n", []string{
			`f.yaml:1: builtins[1]: unknown built-in tool "shell" (want one of mcp_call, http_request, read_file, list_directory)`,
			`f.yaml:1: builtins: http_request needs http_allow: the hosts it may reach`,
		}},
		// An inline server may not set a variable that makes its program
		// load other code unless it allows it (issue 11 §5).
		{"inline server with NODE_OPTIONS", "h.yaml", `mcp_servers:
  - id: calc
    command: npx
    args: [-y, calc-server]
    env:
      NODE_OPTIONS: --require /tmp/x.js
  - id: allowed
    command: node
    env: {NODE_OPTIONS: --max-old-space-size=4096}
    allow_env: [NODE_OPTIONS]
`, []string{
			`h.yaml:6: mcp_servers[0].env.NODE_OPTIONS: NODE_OPTIONS gives node options such as --require and --import, which run the code they name, so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env: [NODE_OPTIONS]`,
		}},
		{"tool modes", "i.yaml", `tool_mode: fancy
search_above: 5000
code_budget: {cpu_time: 2h, wall: 1s, max_calls: 0}
`, []string{
			`i.yaml:1: tool_mode: unknown tool mode "fancy": use auto, all, search, code`,
			`i.yaml:2: search_above: must be at most 1000, not 5000 (write tool_mode: all to give the model every tool)`,
			`i.yaml:3: code_budget.cpu_time: must be at most 5m, not 2h`,
			`i.yaml:3: code_budget.max_calls: must be a positive whole number, not 0`,
			`i.yaml:3: code_budget.wall: unknown field "wall"`,
		}},
		{"code budget not a mapping", "j.yaml", "tool_mode: 3\nsearch_above: 0\ncode_budget: 2s\n", []string{
			`j.yaml:1: tool_mode: must be a string, not an integer`,
			`j.yaml:2: search_above: must be a positive whole number, not 0`,
			`j.yaml:3: code_budget: must be a mapping (cpu_time, wall_time, max_calls), not a string`,
		}},
		{"bad yaml", "g.md", "---\nmodel: [a\n---\n", []string{"g.md:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.file, []byte(tc.src))
			var got []string
			for _, p := range config.Problems(err) {
				got = append(got, p.Error())
			}
			if tc.name == "bad yaml" {
				if len(got) != 1 || !strings.HasPrefix(got[0], "g.md:2: invalid YAML") {
					t.Errorf("Parse = %q, want one invalid YAML problem on line 2", got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) problems (-want +got):\n%s", tc.file, diff)
			}
		})
	}
}

// TestParseOneVocabulary: an agent file's inline servers are read with the
// same declarations as [[mcp_servers]] tables, and their problems are in
// YAML's words like the agent's own fields (they said "a boolean", "an
// array", "a table" and "unknown key" in the same file that said "true or
// false", "a list" and "unknown field").
func TestParseOneVocabulary(t *testing.T) {
	_, err := Parse("v.yaml", []byte(`mcp_servers:
  - id: calc
    command: node
    optional: yes
    args: --verbose
    env: FOO=1
    timout: 5s
allow_sampling: yes
tools: mcp_x
builtins: [http_request]
http_allow: [1]
`))
	var got []string
	for _, p := range config.Problems(err) {
		got = append(got, p.Error())
	}
	want := []string{
		`v.yaml:4: mcp_servers[0].optional: must be true or false, not a string`,
		`v.yaml:5: mcp_servers[0].args: must be a list of strings, not a string`,
		`v.yaml:6: mcp_servers[0].env: must be a mapping of strings, not a string`,
		`v.yaml:7: mcp_servers[0].timout: unknown field "timout"; did you mean timeout?`,
		`v.yaml:8: allow_sampling: must be true or false, not a string`,
		`v.yaml:9: tools: must be none, inherit or a list of tool names, not "mcp_x"`,
		// Not also "http_request needs http_allow": it is there, wrongly typed.
		`v.yaml:11: http_allow[0]: must be a string, not an integer`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse problems (-want +got):\n%s", diff)
	}
}

// TestEveryAgentFieldDeclared: every field of Agent can be written in a
// file.
func TestEveryAgentFieldDeclared(t *testing.T) {
	// CodeBudget is code_budget, a mapping read by readCodeBudget.
	if u := decode.Undeclared(agentFields, "File", "CodeBudget"); len(u) > 0 {
		t.Errorf("Agent fields without a key: %v", u)
	}
}

// TestParseTransportNames: an inline server's transport takes every name
// a configuration does, each read as its canonical value (issue 24 §7:
// ws and streamable-http were refused in agent files).
func TestParseTransportNames(t *testing.T) {
	a, err := Parse("t.yaml", []byte(`mcp_servers:
  - id: sock
    transport: ws
    url: wss://ws.example.com/mcp
  - id: api
    transport: streamable-http
    url: https://api.example.com/mcp
  - id: api2
    transport: streamableHttp
    url: https://api2.example.com/mcp
  - id: tcp
    transport: tcp
    command: x
`))
	var got []string
	for _, p := range config.Problems(err) {
		got = append(got, p.Error())
	}
	if want := []string{`t.yaml:12: mcp_servers[3].transport: unknown transport "tcp" (want stdio, http (or streamable-http, streamableHttp), sse, websocket (or ws))`}; !slices.Equal(got, want) {
		t.Fatalf("Parse problems: %q\nwant %q", got, want)
	}
	if a != nil {
		t.Fatalf("Parse returned an agent with a problem")
	}
	a, err = Parse("t.yaml", []byte(`mcp_servers:
  - id: sock
    transport: ws
    url: wss://ws.example.com/mcp
  - id: api
    transport: streamable-http
    url: https://api.example.com/mcp
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := []config.Transport{a.Servers[0].Server.Transport, a.Servers[1].Server.Transport}; !slices.Equal(got, []config.Transport{config.TransportWebSocket, config.TransportHTTP}) {
		t.Errorf("transports = %q, want websocket and http", got)
	}
}

// TestParseNoneInherit: an agent file's mcp_servers and tools take the
// words a workflow's take: none (no server, no tool) and inherit (as when
// absent: the configuration's servers, every tool).
func TestParseNoneInherit(t *testing.T) {
	for _, tc := range []struct {
		src          string
		servers, all bool // Servers nil (inherit), Tools nil (every tool)
	}{
		{"mcp_servers: none\ntools: none\n", false, false},
		{"mcp_servers: inherit\ntools: inherit\n", true, true},
		{"mcp_servers: []\ntools: []\n", false, false},
	} {
		a, err := Parse("k.yaml", []byte(tc.src))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		if (a.Servers == nil) != tc.servers || len(a.Servers) != 0 || (a.Tools == nil) != tc.all || len(a.Tools) != 0 {
			t.Errorf("Parse(%q): servers %#v tools %#v", tc.src, a.Servers, a.Tools)
		}
	}
	if _, err := Parse("k.yaml", []byte("tools: all\n")); err == nil || !strings.Contains(err.Error(), `tools: must be none, inherit or a list of tool names, not "all"`) {
		t.Errorf("tools: all = %v", err)
	}
}
