package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

func TestLoadFileClaudeDesktop(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "claude_desktop_config.json", `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "{{secrets.github}}"},
      "cwd": "/tmp"
    },
    "old": {"command": "old-server", "disabled": true, "whatever": 1},
    "remote api": {
      "url": "https://mcp.example.com/mcp",
      "headers": {"Authorization": "Bearer {{secrets.tok}}"},
      "timeout": 120000,
      "alwaysAllow": ["search"],
      "autoApprove": []
    },
    "ws": {"url": "wss://ws.example.com/mcp", "description": "over WebSocket", "allow_cross_origin_redirects": true}
  },
  "preferences": {"menuBarEnabled": false}
}
`)
	c, err := LoadFile(path)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	want := &Config{
		ToolNameFormat: DefaultToolNameFormat,
		Servers: []Server{
			{
				ID: "filesystem", Transport: TransportStdio, Command: "npx",
				Args:    []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"},
				Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout,
				Source: Position{File: path, Line: 4, Field: "mcpServers.filesystem"},
			},
			{
				ID: "github", Transport: TransportStdio, Command: "docker",
				Args:    []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
				Env:     map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "{{secrets.github}}"},
				Cwd:     "/tmp",
				Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout,
				Source: Position{File: path, Line: 8, Field: "mcpServers.github"},
			},
			{
				ID: "remote-api", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp",
				Headers: map[string]string{"Authorization": "Bearer {{secrets.tok}}"},
				Timeout: 120 * time.Second, ConnectTimeout: DefaultConnectTimeout,
				Source: Position{File: path, Line: 15, Field: `mcpServers."remote api"`},
			},
			{
				ID: "ws", Description: "over WebSocket", Transport: TransportWebSocket, URL: "wss://ws.example.com/mcp",
				AllowCrossOriginRedirects: true,
				Timeout:                   DefaultTimeout, ConnectTimeout: DefaultConnectTimeout,
				Source: Position{File: path, Line: 22, Field: "mcpServers.ws"},
			},
		},
		Files: []string{path},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("LoadFile mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadFileVSCode(t *testing.T) {
	dir := t.TempDir()
	// VS Code's .vscode/mcp.json: top key "servers", "type" on every entry.
	path := writeFile(t, dir, "mcp.json", `{
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "docs": {"type": "sse", "url": "https://docs.example.com/sse"},
    "api": {"type": "streamableHttp", "url": "https://api.example.com/mcp"},
    "api2": {"type": "streamable-http", "url": "https://api2.example.com/mcp"},
    "sock": {"type": "ws", "url": "wss://sock.example.com/mcp"}
  }
}
`)
	c, err := LoadFile(path)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	type got struct {
		ID        string
		Transport Transport
		Line      int
	}
	var gots []got
	for _, s := range c.Servers {
		gots = append(gots, got{s.ID, s.Transport, s.Source.Line})
	}
	want := []got{
		{"memory", TransportStdio, 4},
		{"docs", TransportSSE, 5},
		{"api", TransportHTTP, 6},
		{"api2", TransportHTTP, 7},
		{"sock", TransportWebSocket, 8},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("LoadFile(%q) mismatch (-want +got):\n%s", path, diff)
	}
}

// TestLoadJSONByContent checks that an explicit file is sniffed as JSON by
// content, whatever its name.
func TestLoadJSONByContent(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "mcp.conf", "\n  {\"mcpServers\": {\"a\": {\"command\": \"x\"}}}\n")
	c, err := Load(&LoadOptions{File: path, Dir: dir, UserConfigDir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(c.Servers) != 1 || c.Servers[0].ID != "a" {
		t.Errorf("Load(%q).Servers = %v, want one server a", path, c.Servers)
	}
}

func TestLoadFileJSONProblems(t *testing.T) {
	const f = "mcp.json"
	long := strings.Repeat("x", 33)
	tests := []struct {
		name string
		json string
		want []string
	}{
		{
			name: "syntax error",
			json: "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n",
			want: []string{f + ":3: invalid character '}' looking for beginning of object key string"},
		},
		{
			name: "truncated",
			json: "{\n  \"mcpServers\": {\n",
			want: []string{f + ":3: unexpected end of JSON input"},
		},
		{
			name: "not an object",
			json: "[1, 2]\n",
			want: []string{f + ": must be a JSON object with mcpServers or servers, not an array"},
		},
		{
			name: "no servers",
			json: "{\"preferences\": {}}\n",
			want: []string{f + ": no mcpServers or servers object"},
		},
		{
			name: "mcpServers not an object",
			json: "{\n\"mcpServers\": []\n}\n",
			want: []string{f + ":2: mcpServers: must be an object, not an array"},
		},
		{
			name: "entry not an object",
			json: "{\"mcpServers\": {\n\"a\": \"npx\"\n}}\n",
			want: []string{f + ":2: mcpServers.a: must be an object, not a string"},
		},
		{
			name: "unknown keys",
			json: "{\"mcpServers\": {\"a\": {\n\"comand\": \"x\",\n\"command\": \"x\",\n\"envFile\": \".env\"\n}}}\n",
			want: []string{
				f + `:2: mcpServers.a.comand: unknown key "comand"; did you mean command?`,
				f + `:4: mcpServers.a.envFile: Switchboard reads no .env file: set the variables in env, a secret as {{secrets.NAME}} (switchboard secrets set NAME)`,
			},
		},
		{
			name: "wrong types",
			json: "{\"servers\": {\"a\": {\n\"command\": \"x\",\n\"args\": \"-y\",\n\"env\": {\"K\": 1},\n\"disabled\": \"no\"\n}}}\n",
			want: []string{
				f + ":3: servers.a.args: must be an array of strings, not a string",
				f + ":4: servers.a.env.K: must be a string, not a number",
				f + ":5: servers.a.disabled: must be a boolean, not a string",
			},
		},
		{
			name: "unknown type",
			json: "{\"mcpServers\": {\"a\": {\n\"type\": \"grpc\",\n\"url\": \"https://example.com\"\n}}}\n",
			want: []string{f + `:2: mcpServers.a.type: unknown transport "grpc" (want stdio, http (or streamable-http, streamableHttp), sse, websocket (or ws))`},
		},
		{
			name: "bad timeouts",
			json: "{\"mcpServers\": {\n\"a\": {\"command\": \"x\", \"timeout\": true},\n\"b\": {\"command\": \"x\", \"timeout\": -1},\n\"c\": {\"command\": \"x\", \"timeout\": \"soon\", \"connect_timeout\": 30000}\n}}\n",
			want: []string{
				f + `:2: mcpServers.a.timeout: must be a number of milliseconds or a duration string such as "90s", not a boolean`,
				f + ":3: mcpServers.b.timeout: must be a positive number of milliseconds, not -1",
				f + `:4: mcpServers.c.connect_timeout: must be a duration string such as "90s", not a number`,
				f + `:4: mcpServers.c.timeout: invalid duration "soon" (want a Go duration such as "90s" or "2m30s")`,
			},
		},
		{
			name: "type and transport",
			json: "{\"mcpServers\": {\"a\": {\n\"type\": \"http\",\n\"transport\": \"sse\",\n\"url\": \"https://example.com\"\n}}}\n",
			want: []string{f + ":3: mcpServers.a.transport: type and transport both name the transport; keep one"},
		},
		{
			name: "Switchboard's keys checked as in TOML",
			json: "{\"mcpServers\": {\"a\": {\n\"command\": \"x\",\n\"max_concurrency\": 1.5,\n\"tools_allowlist\": [\"t\", \"t\"],\n\"health_interval\": \"often\",\n\"id\": \"b\"\n}}}\n",
			want: []string{
				f + `:3: mcpServers.a.max_concurrency: must be a whole number, not 1.5`,
				f + `:4: mcpServers.a.tools_allowlist[1]: duplicate "t" (also tools_allowlist[0])`,
				f + `:5: mcpServers.a.health_interval: invalid duration "often" (want a Go duration such as "90s" or "2m30s")`,
				f + `:6: mcpServers.a.id: in an mcpServers or servers entry the entry's name is the id: remove id, or rename the entry`,
			},
		},
		{
			name: "id collision after renaming",
			json: "{\"mcpServers\": {\n\"my server\": {\"command\": \"x\"},\n\"my-server\": {\"command\": \"x\"}\n}}\n",
			want: []string{f + `:3: mcpServers.my-server: id "my-server" collides with mcpServers."my server" (characters outside A-Z a-z 0-9 _ - become -)`},
		},
		{
			name: "collision across mcpServers and servers",
			json: "{\"mcpServers\": {\"a\": {\"command\": \"x\"}},\n\"servers\": {\"a\": {\"command\": \"x\"}}}\n",
			want: []string{f + `:2: servers.a: id "a" collides with mcpServers.a (characters outside A-Z a-z 0-9 _ - become -)`},
		},
		{
			name: "name too long",
			json: "{\"mcpServers\": {\n\"" + long + "\": {\"command\": \"x\"}\n}}\n",
			want: []string{f + ":2: mcpServers." + long + ": name is 33 characters; a server id has at most 32"},
		},
		{
			name: "empty name",
			json: "{\"mcpServers\": {\n\"\": {\"command\": \"x\"}\n}}\n",
			want: []string{f + `:2: mcpServers."": an empty name cannot be a server id`},
		},
		{
			name: "duplicate key",
			json: "{\"mcpServers\": {\n\"a\": {\"command\": \"x\"},\n\"a\": {\"command\": \"y\"}\n}}\n",
			want: []string{f + ":3: mcpServers.a: duplicate key (first on line 2); the first one is used"},
		},
		{
			name: "validation uses the entry's path",
			json: "{\"mcpServers\": {\"a\": {\n\"type\": \"stdio\",\n\"url\": \"https://example.com\"\n}}}\n",
			want: []string{
				f + ":1: mcpServers.a.command: required for transport stdio",
				f + ":3: mcpServers.a.url: only for network transports (http, sse, websocket), not stdio",
			},
		},
		{
			name: "placeholder in args",
			json: "{\"mcpServers\": {\"a\": {\n\"command\": \"x\",\n\"args\": [\"{{secrets.tok}}\"]\n}}}\n",
			want: []string{f + ":3: mcpServers.a.args[0]: placeholders are only allowed in env and headers values; argv is readable by every user on this machine, pass secrets through env"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadString(t, f, tt.json)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LoadFile(%q) problems mismatch (-want +got):\n%s", tt.json, diff)
			}
		})
	}
}

func TestLoadFileJSONDeep(t *testing.T) {
	deep := "{\"mcpServers\": {},\n\"x\": " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}"
	_, got := loadString(t, "mcp.json", deep)
	want := []string{"mcp.json:2: nested more than 1000 levels deep"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadFile(deep) mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadFileJSONSwitchboardKeys: an mcpServers entry carries every key of
// an [[mcp_servers]] table (but id, the entry's name), spelled as in TOML,
// and means by it what TOML does.
func TestLoadFileJSONSwitchboardKeys(t *testing.T) {
	dir := t.TempDir()
	toml := writeFile(t, dir, "s.toml", `
[[mcp_servers]]
id = "mem"
description = "memory"
transport = "stdio"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]
env = { NODE_OPTIONS = "--max-old-space-size=512" }
allow_env = ["NODE_OPTIONS"]
cwd = "/tmp"
tools_allowlist = ["read_graph"]
timeout = "90s"
connect_timeout = "2m"
install_timeout = "10m"
optional = true
progress_resets_timeout = true
roots = ["file:///tmp"]
lazy = true
health_interval = "off"
max_concurrency = 4
max_restarts = 2

[[mcp_servers]]
id = "web"
transport = "sse"
url = "http://127.0.0.1:8080/sse"
headers = { X-Key = "{{secrets.key}}" }
allow_local_endpoint = true
allow_cross_origin_redirects = true
`)
	json := writeFile(t, dir, "s.json", `{"mcpServers": {
  "mem": {
    "description": "memory", "transport": "stdio", "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-memory"],
    "env": {"NODE_OPTIONS": "--max-old-space-size=512"}, "allow_env": ["NODE_OPTIONS"], "cwd": "/tmp",
    "tools_allowlist": ["read_graph"], "timeout": "90s", "connect_timeout": "2m", "install_timeout": "10m",
    "optional": true, "progress_resets_timeout": true, "roots": ["file:///tmp"], "lazy": true,
    "health_interval": "off", "max_concurrency": 4, "max_restarts": 2
  },
  "web": {
    "type": "sse", "url": "http://127.0.0.1:8080/sse", "headers": {"X-Key": "{{secrets.key}}"},
    "allow_local_endpoint": true, "allow_cross_origin_redirects": true
  }
}}`)
	want, err := LoadFile(toml)
	if err != nil {
		t.Fatalf("LoadFile(TOML): %v", err)
	}
	got, err := LoadFile(json)
	if err != nil {
		t.Fatalf("LoadFile(JSON): %v", err)
	}
	if len(got.Servers) != len(want.Servers) {
		t.Fatalf("JSON: %d servers, TOML: %d", len(got.Servers), len(want.Servers))
	}
	for i := range want.Servers {
		if !want.Servers[i].Equal(got.Servers[i]) {
			t.Errorf("server %q differs (-TOML +JSON):\n%s", want.Servers[i].ID,
				cmp.Diff(want.Servers[i], got.Servers[i], cmpopts.IgnoreFields(Server{}, "Source")))
		}
	}
	// And the table says so: a key TOML has, JSON has (but id).
	jsonKeys := serverFields.Keys(decode.JSON)
	for _, k := range serverFields.Keys(decode.TOML) {
		if k != "id" && !slices.Contains(jsonKeys, k) {
			t.Errorf("[[mcp_servers]] key %q is not accepted in an mcpServers entry", k)
		}
	}
}

// TestLoadFileClientVariables: a file named with --config has the ${…}
// variables of the client its name says (VS Code's and Cursor's project
// files, Claude Code's .mcp.json; any other file: VS Code's) expanded as
// import expands them, or refused with file, line and field, never passed
// to a server as literal text.
func TestLoadFileClientVariables(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "project")
	path := writeFile(t, ws, filepath.Join(".vscode", "mcp.json"), `{
  "inputs": [{"type": "promptString", "id": "api-key", "password": true}],
  "servers": {
    "fs": {"type": "stdio", "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}", "${userHome}${/}notes", "${workspaceFolderBasename}"],
      "env": {"GITHUB_TOKEN": "${env:GH_TOKEN}", "API_KEY": "pre-${env:API_KEY}-post"}},
    "web": {"type": "http", "url": "https://api.example.com/mcp",
      "headers": {"Authorization": "Bearer ${env:API_TOKEN}"}}
  }
}
`)
	c, err := loadWithHome(path, "/home/me")
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	fs, web := c.Servers[0], c.Servers[1]
	wantArgs := []string{"-y", "@modelcontextprotocol/server-filesystem", ws, "/home/me/notes", "project"}
	if diff := cmp.Diff(wantArgs, fs.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	wantEnv := map[string]string{"GITHUB_TOKEN": "{{env.GH_TOKEN}}", "API_KEY": "pre-{{env.API_KEY}}-post"}
	if diff := cmp.Diff(wantEnv, fs.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if got, want := web.Headers["Authorization"], "Bearer {{env.API_TOKEN}}"; got != want {
		t.Errorf("headers.Authorization = %q, want %q", got, want)
	}

	// Claude Code's project file: ${NAME} is an environment variable.
	cc := writeFile(t, ws, ".mcp.json", `{"mcpServers": {"a": {"command": "x", "env": {"KEY": "${API_KEY}"}}}}`)
	c, err = LoadFile(cc)
	if err != nil {
		t.Fatalf("LoadFile(.mcp.json): %v", err)
	}
	if got := c.Servers[0].Env["KEY"]; got != "{{env.API_KEY}}" {
		t.Errorf(".mcp.json: env.KEY = %q, want {{env.API_KEY}}", got)
	}

	const f = "mcp.json"
	tests := []struct {
		name, json string
		want       []string
	}{
		{
			name: "input",
			json: "{\"servers\": {\"a\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\",\n\"headers\": {\"Authorization\": \"Bearer ${input:api-key}\"}}}}\n",
			want: []string{f + ":2: servers.a.headers.Authorization: ${input:api-key} asks VS Code's user for a value, and Switchboard asks no one: store it with `switchboard secrets set api-key` and write {{secrets.api-key}}"},
		},
		{
			name: "env outside env and headers",
			json: "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n\"args\": [\"--token\", \"${env:TOKEN}\"]}}}\n",
			want: []string{f + ":2: mcpServers.a.args[1]: ${env:TOKEN}: Switchboard puts variables only in env and headers values (argv is readable by every user on this machine)"},
		},
		{
			name: "default, unknown and no workspace",
			json: "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n\"env\": {\"A\": \"${env:A:-none}\", \"B\": \"${config:x.y}\"},\n\"args\": [\"${workspaceFolder}\"]}}}\n",
			want: []string{
				f + ":2: mcpServers.a.env.A: ${env:A:-none} has a default, which {{env.A}} cannot keep",
				f + ":2: mcpServers.a.env.B: ${config:x.y}: a variable Switchboard does not know",
				f + ":3: mcpServers.a.args[0]: ${workspaceFolder} is the folder the editor has open, and this file is in no .vscode or .cursor folder: write the path",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadString(t, f, tt.json)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LoadFile(%q) problems mismatch (-want +got):\n%s", tt.json, diff)
			}
		})
	}
}

// loadWithHome is LoadFile with home as the home folder.
func loadWithHome(path, home string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return build([]*fileResult{decodeFile(path, data, true, home)})
}
