package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClientFiles(t *testing.T) {
	for _, tc := range []struct {
		goos string
		env  map[string]string
		home string
		want []string
	}{
		{"linux", nil, "/home/me", []string{
			"claude-desktop /home/me/.config/Claude/claude_desktop_config.json [mcpServers]",
			"claude-code /home/me/.claude.json [mcpServers]",
			"cursor /home/me/.cursor/mcp.json [mcpServers]",
			"vscode /home/me/.config/Code/User/mcp.json [servers]",
			"vscode /home/me/.config/Code/User/settings.json [mcp servers]",
			"windsurf /home/me/.codeium/windsurf/mcp_config.json [mcpServers]",
			"claude-code /home/me/.claude.json project [projects /work/app mcpServers]",
			"claude-code /work/app/.mcp.json project [mcpServers]",
			"cursor /work/app/.cursor/mcp.json project [mcpServers]",
			"vscode /work/app/.vscode/mcp.json project [servers]",
		}},
		{"linux", map[string]string{"XDG_CONFIG_HOME": "/xdg", "CLAUDE_CONFIG_DIR": "/cc"}, "/home/me", []string{
			"claude-desktop /xdg/Claude/claude_desktop_config.json [mcpServers]",
			"claude-code /cc/.claude.json [mcpServers]",
			"cursor /home/me/.cursor/mcp.json [mcpServers]",
			"vscode /xdg/Code/User/mcp.json [servers]",
			"vscode /xdg/Code/User/settings.json [mcp servers]",
			"windsurf /home/me/.codeium/windsurf/mcp_config.json [mcpServers]",
			"claude-code /cc/.claude.json project [projects /work/app mcpServers]",
			"claude-code /work/app/.mcp.json project [mcpServers]",
			"cursor /work/app/.cursor/mcp.json project [mcpServers]",
			"vscode /work/app/.vscode/mcp.json project [servers]",
		}},
		{"darwin", nil, "/Users/me", []string{
			"claude-desktop /Users/me/Library/Application Support/Claude/claude_desktop_config.json [mcpServers]",
			"claude-code /Users/me/.claude.json [mcpServers]",
			"cursor /Users/me/.cursor/mcp.json [mcpServers]",
			"vscode /Users/me/Library/Application Support/Code/User/mcp.json [servers]",
			"vscode /Users/me/Library/Application Support/Code/User/settings.json [mcp servers]",
			"windsurf /Users/me/.codeium/windsurf/mcp_config.json [mcpServers]",
		}},
		{"windows", map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}, `C:\Users\me`, []string{
			`claude-desktop C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json [mcpServers]`,
			`claude-code C:\Users\me\.claude.json [mcpServers]`,
			`cursor C:\Users\me\.cursor\mcp.json [mcpServers]`,
			`vscode C:\Users\me\AppData\Roaming\Code\User\mcp.json [servers]`,
			`vscode C:\Users\me\AppData\Roaming\Code\User\settings.json [mcp servers]`,
			`windsurf C:\Users\me\.codeium\windsurf\mcp_config.json [mcpServers]`,
		}},
	} {
		fs := ClientFiles(&ClientOptions{Home: tc.home, Dir: "/work/app", GOOS: tc.goos, Getenv: getenv(tc.env)})
		var got []string
		for _, f := range fs {
			if f.Project && tc.goos != "linux" {
				continue
			}
			s := f.Client + " " + f.Path
			if f.Project {
				s += " project"
			}
			got = append(got, fmt.Sprintf("%s %v", s, f.Containers[0]))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ClientFiles(%s, %v) (-want +got):\n%s", tc.goos, tc.env, diff)
		}
	}
}

// entrySummary is one entry as a test compares it.
func entrySummary(e Entry, dir string) string {
	if e.Disabled {
		return fmt.Sprintf("%s (line %d): disabled", e.Field, e.Line)
	}
	var ps []string
	for _, p := range e.Problems {
		ps = append(ps, strings.TrimPrefix(p.Error(), dir+string(filepath.Separator)))
	}
	if len(ps) > 0 {
		return fmt.Sprintf("%s (line %d): %s", e.Field, e.Line, strings.Join(ps, "; "))
	}
	b, _ := json.Marshal(e.Server)
	return fmt.Sprintf("%s (line %d): %s", e.Field, e.Line, b)
}

// TestReadClientFile: VS Code's settings (comments, trailing commas,
// mcp.servers) with its variables rewritten or refused; Claude Code's file
// with the user's and this project's servers apart and its ${VAR} form;
// Windsurf's serverUrl; disabled entries, unknown keys and duplicate keys.
func TestReadClientFile(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "app")
	settings := writeFile(t, dir, "settings.json", `{
  // VS Code's own settings come first.
  "editor.fontSize": 14,
  "mcp": {
    "servers": {
      /* a block
         comment */
      "gh": {
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-github", "${workspaceFolder}/src", "${userHome}"],
        "env": {"GITHUB_TOKEN": "${env:GH_TOKEN}", "URL": "https://x.example/a//b"},
      },
      "asks": {"command": "x", "env": {"KEY": "${input:api-key}"}},
      "argvar": {"command": "x", "args": ["--token=${env:TOK}"]},
      "default": {"command": "x", "env": {"A": "${env:A:-1}"}},
      "envfile": {"command": "x", "envFile": "${workspaceFolder}/.env"},
    },
  },
}
`)
	f := ClientFile{Client: ClientVSCode, Path: settings, Containers: [][]string{{"mcp", "servers"}}, dir: project}
	entries, err := ReadClientFile(f, "/home/me")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, entrySummary(e, dir))
	}
	want := []string{
		`mcp.servers.gh (line 8): {"ID":"gh","Description":"","Transport":"stdio","Command":"npx","Args":["-y","@modelcontextprotocol/server-github","` + project + `/src","/home/me"],"Env":{"GITHUB_TOKEN":"{{env.GH_TOKEN}}","URL":"https://x.example/a//b"},"Cwd":"","InstallTimeout":0,"AllowEnv":null,"URL":"","Headers":null,"AllowLocalEndpoint":false,"AllowCrossOriginRedirects":false,"OAuth":null,"ToolsAllowlist":null,"Scan":"","Pin":"","Timeout":0,"ConnectTimeout":0,"Optional":false,"ProgressResetsTimeout":false,"UpstreamTask":"","UpstreamTaskTimeout":0,"Roots":null,"Lazy":false,"HealthInterval":0,"MaxConcurrency":0,"MaxRestarts":0,"Task":"","ToolTasks":null,"Registry":null,"Source":{"File":"` + settings + `","Line":8,"Field":"mcp.servers.gh"}}`,
		"mcp.servers.asks (line 14): settings.json:14: mcp.servers.asks.env.KEY: ${input:api-key} asks VS Code's user for a value, and Switchboard asks no one: store it with `switchboard secrets set api-key` and write {{secrets.api-key}}",
		"mcp.servers.argvar (line 15): settings.json:15: mcp.servers.argvar.args[0]: ${env:TOK}: Switchboard puts variables only in env and headers values (argv is readable by every user on this machine)",
		"mcp.servers.default (line 16): settings.json:16: mcp.servers.default.env.A: ${env:A:-1} has a default, which {{env.A}} cannot keep",
		`mcp.servers.envfile (line 17): settings.json:17: mcp.servers.envfile.envFile: Switchboard reads no .env file: set the variables in env, a secret as {{secrets.NAME}} (switchboard secrets set NAME)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VS Code settings (-want +got):\n%s", diff)
	}

	claude := writeFile(t, dir, ".claude.json", `{
  "numStartups": 3,
  "mcpServers": {
    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {}},
    "off": {"command": "x", "disabled": true}
  },
  "projects": {
    "`+project+`": {
      "mcpServers": {
        "search": {"type": "http", "url": "https://search.example.com/mcp", "headers": {"Authorization": "Bearer ${SEARCH_KEY}"}},
        "dup": {"command": "a", "command": "b"}
      }
    },
    "/elsewhere": {"mcpServers": {"other": {"command": "x"}}}
  }
}
`)
	files := ClientFiles(&ClientOptions{Home: dir, Dir: project, GOOS: "linux", Getenv: getenv(nil)})
	got = nil
	for _, cf := range files {
		if cf.Path != claude {
			continue
		}
		entries, err := ReadClientFile(cf, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			s := e.Server
			if len(e.Problems) == 0 && !e.Disabled {
				got = append(got, fmt.Sprintf("%v %s %s %s %v %v", cf.Project, e.Field, s.Transport, s.Command+s.URL, s.Args, s.Headers))
			} else {
				got = append(got, fmt.Sprintf("%v %s", cf.Project, entrySummary(e, dir)))
			}
		}
	}
	want = []string{
		"false mcpServers.everything stdio npx [-y @modelcontextprotocol/server-everything] map[]",
		"false mcpServers.off (line 5): disabled",
		`true projects."` + project + `".mcpServers.search http https://search.example.com/mcp [] map[Authorization:Bearer {{env.SEARCH_KEY}}]`,
		`true projects."` + project + `".mcpServers.dup (line 11): .claude.json:11: projects."` + project + `".mcpServers.dup.command: duplicate key (first on line 11); the first one is used`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Claude Code (-want +got):\n%s", diff)
	}

	windsurf := writeFile(t, dir, "mcp_config.json", `{"mcpServers": {"remote": {"serverUrl": "https://r.example.com/mcp"}}}`)
	entries, err = ReadClientFile(ClientFile{Client: ClientWindsurf, Path: windsurf, Containers: [][]string{{"mcpServers"}}}, dir)
	if err != nil || len(entries) != 1 || len(entries[0].Problems) > 0 || entries[0].Server.URL != "https://r.example.com/mcp" {
		t.Errorf("Windsurf serverUrl: %+v, %v", entries, err)
	}

	// Claude Desktop expands nothing: ${X} is passed as written.
	desktop := writeFile(t, dir, "claude_desktop_config.json", `{"mcpServers": {"a": {"command": "x", "args": ["${X}"]}}}`)
	entries, err = ReadClientFile(ClientFile{Client: ClientClaudeDesktop, Path: desktop, Containers: [][]string{{"mcpServers"}}}, dir)
	if err != nil || len(entries) != 1 || len(entries[0].Problems) > 0 || entries[0].Server.Args[0] != "${X}" {
		t.Errorf("Claude Desktop ${X}: %+v, %v", entries, err)
	}

	if _, err := ReadClientFile(ClientFile{Path: writeFile(t, dir, "bad.json", "{\n\"mcpServers\": {\"a\" 1}\n}")}, dir); err == nil || !strings.Contains(err.Error(), "bad.json:2: not valid JSON") {
		t.Errorf("a file that is not JSON: %v", err)
	}
}

func TestStandardJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"{\"a\": 1, // c\n\"b\": [1, 2,],}", "{\"a\": 1,     \n\"b\": [1, 2 ] }"},
		{"{/* x\ny */\"a\": \"// not /* a comment */, \\\" ,}\"}", "{    \n    \"a\": \"// not /* a comment */, \\\" ,}\"}"},
		{"{\"a\": [1,\n// last\n]}", "{\"a\": [1 \n       \n]}"},
		{"{\"a\": 1} /* unterminated", "{\"a\": 1}" + strings.Repeat(" ", 16)},
	} {
		got := string(standardJSON([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("standardJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(got) != len(tc.in) || strings.Count(got, "\n") != strings.Count(tc.in, "\n") {
			t.Errorf("standardJSON(%q) moved bytes or lines", tc.in)
		}
	}
}
