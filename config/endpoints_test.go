package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const endpointServers = `[[mcp_servers]]
id = "github"
command = "x"

[[mcp_servers]]
id = "filesystem"
command = "y"

[gateway]
workflows = ["review"]
`

// TestEndpoints: [[endpoints]] decodes into Config.Endpoints, every key,
// with its declaration's place; a later file's endpoint of the same name
// replaces the earlier one whole, in its place.
func TestEndpoints(t *testing.T) {
	root := t.TempDir()
	user := writeFile(t, root, "user/switchboard/config.toml", endpointServers+`
[[endpoints]]
name = "code"
path = "/code/mcp"
servers = ["github", "filesystem"]
tools = ["github_*", "!github_delete_*", "filesystem_read_*"]
instructions = "Tools for reading and changing this repository."
workflows = ["review"]
auth_token = "{{secrets.code_token}}"
scopes = ["code"]

[endpoints.rename]
read = "mcp_filesystem_read_text_file"

[endpoints.override.read]
description = "Read a file of the repository"
title = "Read"
read_only_hint = true
open_world_hint = false

[[endpoints]]
name = "support"
servers = ["github"]
`)
	work := writeFile(t, root, "work/switchboard.toml", `[[endpoints]]
name = "code"
tools = ["*"]

[[endpoints]]
name = "data"
`)
	c, err := Load(&LoadOptions{Dir: root + "/work", UserConfigDir: root + "/user/switchboard", Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	yes, no := true, false
	want := []Endpoint{
		{Name: "code", Tools: []string{"*"}, Source: Position{File: work, Line: 1, Field: "endpoints[0]"}},
		{Name: "support", Servers: []string{"github"}, Source: Position{File: user, Line: 31, Field: "endpoints[1]"}},
		{Name: "data", Source: Position{File: work, Line: 5, Field: "endpoints[1]"}},
	}
	if diff := cmp.Diff(want, c.Endpoints); diff != "" {
		t.Errorf("Endpoints (-want +got):\n%s", diff)
	}

	// The user's file alone: every key.
	c, err = LoadFile(user)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	code := Endpoint{
		Name: "code", Path: "/code/mcp", Servers: []string{"github", "filesystem"},
		Tools:        []string{"github_*", "!github_delete_*", "filesystem_read_*"},
		Instructions: "Tools for reading and changing this repository.",
		Workflows:    []string{"review"}, AuthToken: "{{secrets.code_token}}", Scopes: []string{"code"},
		Rename:   map[string]string{"read": "mcp_filesystem_read_text_file"},
		Override: map[string]ToolOverride{"read": {Title: "Read", Description: "Read a file of the repository", ReadOnlyHint: &yes, OpenWorldHint: &no}},
		Source:   Position{File: user, Line: 12, Field: "endpoints[0]"},
	}
	got, ok := c.Endpoint("code")
	if diff := cmp.Diff(code, got); !ok || diff != "" {
		t.Errorf("Endpoint(code) (-want +got):\n%s", diff)
	}
	mcp, sse, msg, ws := got.Paths()
	if mcp != "/code/mcp" || sse != "/code/sse" || msg != "/code/message" || ws != "/code/ws" {
		t.Errorf("Paths() of path /code/mcp = %s %s %s %s", mcp, sse, msg, ws)
	}
	mcp, sse, msg, ws = Endpoint{Name: "data"}.Paths()
	if mcp != "/e/data/mcp" || sse != "/e/data/sse" || msg != "/e/data/message" || ws != "/e/data/ws" {
		t.Errorf("Paths() by default = %s %s %s %s", mcp, sse, msg, ws)
	}
}

// TestEndpointProblems: each mistake in [[endpoints]] is reported with
// file, line and field, every one at once.
func TestEndpointProblems(t *testing.T) {
	for _, tt := range []struct {
		name, toml string
		want       []string
	}{
		{"bad names", `[[endpoints]]
name = "Code"

[[endpoints]]
name = "-x"

[[endpoints]]
servers = ["github"]
`, []string{
			`g.toml:12: endpoints[0].name: invalid endpoint name "Code": 1 to 64 of a-z 0-9 - _, beginning with a letter or digit`,
			`g.toml:15: endpoints[1].name: invalid endpoint name "-x": 1 to 64 of a-z 0-9 - _, beginning with a letter or digit`,
			`g.toml:17: endpoints[2]: missing name`,
		}},
		{"duplicate name", `[[endpoints]]
name = "code"

[[endpoints]]
name = "code"
`, []string{
			`g.toml:15: endpoints[1].name: duplicate name "code" (first declared as endpoints[0] on line 11)`,
		}},
		{"paths", `[[endpoints]]
name = "a"
path = "/mcp"

[[endpoints]]
name = "b"
path = "/api/v1/mcp"

[[endpoints]]
name = "c"
path = "/x/mcp"

[[endpoints]]
name = "d"
path = "/x/mcp"

[[endpoints]]
name = "e"
path = "/e/c/mcp"

[[endpoints]]
name = "f"
path = "mcp"

[[endpoints]]
name = "g"
path = "/g"
`, []string{
			`g.toml:13: endpoints[0].path: "/mcp" collides with /mcp, which the daemon serves`,
			`g.toml:17: endpoints[1].path: "/api/v1/mcp" collides with /api/, which the daemon serves`,
			`g.toml:25: endpoints[3].path: endpoint "d" would be served at /x/mcp, as endpoint "c" is`,
			`g.toml:29: endpoints[4].path: /e/c/mcp is under /e/, where each endpoint has its default paths (/e/NAME/); use /e/e/ or a folder of its own`,
			`g.toml:33: endpoints[5].path: must be a clean absolute path such as "/code/mcp", not "mcp"`,
			`g.toml:37: endpoints[6].path: "/g" has one element: the legacy transports are served beside it (its last element replaced by sse, message and ws), so give it a folder, such as "/g/mcp"`,
		}},
		{"servers, workflows, tools, rename", `[[endpoints]]
name = "code"
servers = ["github", "gitlab"]
workflows = ["review", "triage"]
tools = ["github_*", "[", "!"]
rename = { read = "mcp_filesystem_read_text_file", cat = "mcp_filesystem_read_text_file" }
`, []string{
			`g.toml:13: endpoints[0].servers[1]: no server "gitlab" in the configuration (configured: github, filesystem)`,
			`g.toml:14: endpoints[0].workflows[1]: workflow "triage" is not published: list it in [gateway] workflows first (published: review)`,
			`g.toml:15: endpoints[0].tools[1]: invalid glob "[": syntax error in pattern`,
			`g.toml:15: endpoints[0].tools[2]: empty pattern`,
			`g.toml:16: endpoints[0].rename.read: "mcp_filesystem_read_text_file" is renamed twice (also to "cat"): a tool is offered under one name`,
		}},
		{"rename to a bad name", `[[endpoints]]
name = "code"
rename = { "bad name" = "x", empty = "" }
`, []string{
			`g.toml:13: endpoints[0].rename."bad name": invalid tool name "bad name": 1 to 128 of A-Z a-z 0-9 _ - .`,
			`g.toml:13: endpoints[0].rename.empty: empty: name the published tool this name calls`,
		}},
		// Still in endpointServers' [gateway] table.
		{"a server [gateway] servers leaves out", `servers = ["github"]

[[endpoints]]
name = "code"
servers = ["filesystem"]
`, []string{
			`g.toml:15: endpoints[0].servers[0]: server "filesystem" is not served: [gateway] servers leaves it out (github)`,
		}},
		{"override", `[[endpoints]]
name = "code"

[endpoints.override.read]
description = 5
colour = "red"
`, []string{
			`g.toml:15: endpoints[0].override.read.description: must be a string, not an integer`,
			`g.toml:16: endpoints[0].override.read.colour: unknown key "colour"`,
		}},
		{"literal token", `[[endpoints]]
name = "code"
auth_token = "hunter2-literal"
`, []string{
			`g.toml:13: endpoints[0].auth_token: a literal token is not allowed: config files are shared and committed, and a token written there leaks; write "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}"`,
		}},
		{"not an array", `[endpoints]
name = "code"
`, []string{
			`g.toml:11: endpoints: must be an array of tables, not a table (write [[endpoints]], with double brackets)`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := writeFile(t, dir, "g.toml", endpointServers+tt.toml)
			_, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
			if diff := cmp.Diff(tt.want, problemStrings(t, err, dir)); diff != "" {
				t.Errorf("Load problems (-want +got):\n%s", diff)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("a problem quotes the literal token: %v", err)
			}
		})
	}
}

// TestEndpointValidate: Validate checks endpoints built in code (the CLI,
// the REST API) as Load does.
func TestEndpointValidate(t *testing.T) {
	c := &Config{
		Servers: []Server{{ID: "a", Command: "x"}},
		Endpoints: []Endpoint{
			{Name: "x", Servers: []string{"b"}, AuthToken: "plain", Tools: []string{"["}},
			{Name: "x"},
			{Name: "y", Override: map[string]ToolOverride{"no such": {}}},
		},
	}
	want := []string{
		`endpoints[0].tools[0]: invalid glob "[": syntax error in pattern`,
		`endpoints[0].auth_token: a literal token is not allowed: config files are shared and committed, and a token written there leaks; write "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}"`,
		`endpoints[0].servers[0]: no server "b" in the configuration (configured: a)`,
		`endpoints[1].name: duplicate name "x" (also endpoints[0])`,
		`endpoints[2].override."no such": invalid tool name "no such": 1 to 128 of A-Z a-z 0-9 _ - .`,
	}
	if diff := cmp.Diff(want, problemStrings(t, c.Validate(), "")); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}
