package config

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// getenv returns a Getenv that knows only vars, so that no test reads the
// real environment or home directory.
func getenv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoadLayering(t *testing.T) {
	root := t.TempDir()
	userDir := filepath.Join(root, "user")
	workDir := filepath.Join(root, "work")
	userFile := writeFile(t, userDir, "config.toml", `tool_name_format = "{server}_{tool}"

[[mcp_servers]]
id = "a"
command = "user-a"

[[mcp_servers]]
id = "b"
command = "user-b"
timeout = "5s"
`)
	workFile := writeFile(t, workDir, "switchboard.toml", `[[mcp_servers]]
id = "b"
url = "https://b.example.com/mcp"

[[mcp_servers]]
id = "c"
command = "work-c"
`)
	explicit := writeFile(t, root, "explicit.toml", `tool_name_format = "x_{tool}"
[[mcp_servers]]
id = "a"
command = "explicit-a"
connect_timeout = "3s"
`)

	c, err := Load(&LoadOptions{File: explicit, Dir: workDir, UserConfigDir: userDir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &Config{
		ToolNameFormat: "x_{tool}",
		Servers: []Server{
			{
				ID: "a", Transport: TransportStdio, Command: "explicit-a",
				Timeout: DefaultTimeout, ConnectTimeout: 3 * time.Second,
				Source: Position{File: explicit, Line: 2, Field: "mcp_servers[0]"},
			},
			{
				// Replaced whole: user-b's timeout does not survive.
				ID: "b", Transport: TransportHTTP, URL: "https://b.example.com/mcp",
				Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout,
				Source: Position{File: workFile, Line: 1, Field: "mcp_servers[0]"},
			},
			{
				ID: "c", Transport: TransportStdio, Command: "work-c",
				Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout,
				Source: Position{File: workFile, Line: 5, Field: "mcp_servers[1]"},
			},
		},
		Files: []string{userFile, workFile, explicit},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
	if s, ok := c.Server("c"); !ok || s.Command != "work-c" {
		t.Errorf(`Server("c") = %v, %v, want work-c, true`, s, ok)
	}
	if s, ok := c.Server("zz"); ok {
		t.Errorf(`Server("zz") = %v, true, want false`, s)
	}
}

func TestLoadUserConfigDirDefault(t *testing.T) {
	root := t.TempDir()
	xdg := filepath.Join(root, "xdg")
	home := filepath.Join(root, "home")
	writeFile(t, filepath.Join(xdg, "switchboard"), "config.toml", "[[mcp_servers]]\nid = \"xdg\"\ncommand = \"x\"\n")
	writeFile(t, filepath.Join(home, ".config", "switchboard"), "config.toml", "[[mcp_servers]]\nid = \"home\"\ncommand = \"x\"\n")
	empty := t.TempDir()

	tests := []struct {
		name string
		env  map[string]string
		want []string // server ids
	}{
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": home}, []string{"xdg"}},
		{"HOME", map[string]string{"HOME": home}, []string{"home"}},
		{"neither", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(&LoadOptions{Dir: empty, Getenv: getenv(tt.env)})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var got []string
			for _, s := range c.Servers {
				got = append(got, s.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load with %v: ids mismatch (-want +got):\n%s", tt.env, diff)
			}
		})
	}
}

func TestLoadNothing(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(&LoadOptions{Dir: dir, UserConfigDir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &Config{ToolNameFormat: DefaultToolNameFormat}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Load of no files mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadExplicitFileMissing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.toml")
	c, err := Load(&LoadOptions{File: missing, Dir: dir, UserConfigDir: dir, Getenv: getenv(nil)})
	if c == nil {
		t.Fatal("Load returned a nil Config")
	}
	want := []string{"nope.toml: cannot read: no such file or directory"}
	if diff := cmp.Diff(want, problemStrings(t, err, dir)); diff != "" {
		t.Errorf("Load(%q) mismatch (-want +got):\n%s", missing, diff)
	}
	if len(c.Files) != 0 {
		t.Errorf("Load(%q).Files = %q, want none", missing, c.Files)
	}

	c, err = LoadFile(missing)
	if c == nil {
		t.Fatal("LoadFile returned a nil Config")
	}
	if diff := cmp.Diff(want, problemStrings(t, err, dir)); diff != "" {
		t.Errorf("LoadFile(%q) mismatch (-want +got):\n%s", missing, diff)
	}
}

func TestLoadSameFileOnce(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "switchboard.toml", "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n")
	c, err := Load(&LoadOptions{File: f, Dir: dir, UserConfigDir: t.TempDir(), Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff([]string{f}, c.Files); diff != "" {
		t.Errorf("Files mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadAllProblemsAtOnce checks that problems in every file are reported
// together, in file order, and that the config is still returned as far as
// it could be read.
func TestLoadAllProblemsAtOnce(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "user/config.toml", `[[mcp_servers]]
id = "a"
command = "x"
colour = "red"
`)
	writeFile(t, root, "work/switchboard.toml", `[[mcp_servers]]
id = "b"
command = "y"
timeout = 30

[[mcp_servers]]
id = "c"
transport = "http"
command = "z"
url = "https://example.com/mcp"
`)
	explicit := writeFile(t, root, "explicit.toml", `tool_name_format = "{server}"
[[mcp_servers]]
id = "d"
`)
	c, err := Load(&LoadOptions{
		File:          explicit,
		Dir:           filepath.Join(root, "work"),
		UserConfigDir: filepath.Join(root, "user"),
		Getenv:        getenv(nil),
	})
	want := []string{
		`user/config.toml:4: mcp_servers[0].colour: unknown key "colour"`,
		`work/switchboard.toml:4: mcp_servers[0].timeout: must be a duration string such as "90s", not an integer`,
		`work/switchboard.toml:9: mcp_servers[1].command: only for transport stdio, not http`,
		`explicit.toml:1: tool_name_format: must contain {tool}`,
		`explicit.toml:2: mcp_servers[0]: needs command (transport stdio) or url (transport http, sse or websocket)`,
	}
	if diff := cmp.Diff(want, problemStrings(t, err, root)); diff != "" {
		t.Errorf("Load problems mismatch (-want +got):\n%s", diff)
	}
	var ids []string
	for _, s := range c.Servers {
		ids = append(ids, s.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, ids); diff != "" {
		t.Errorf("Load servers mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadDefaults(t *testing.T) {
	c, problems := loadString(t, "switchboard.toml", `[[mcp_servers]]
id = "stdio"
command = "x"

[[mcp_servers]]
id = "http"
url = "https://example.com/mcp"

[[mcp_servers]]
id = "ws"
url = "wss://example.com/mcp"

[[mcp_servers]]
id = "sse"
transport = "sse"
url = "https://example.com/sse"
timeout = "2m"
`)
	if problems != nil {
		t.Fatalf("LoadFile problems: %q", problems)
	}
	type got struct {
		ID                      string
		Transport               Transport
		Timeout, ConnectTimeout time.Duration
	}
	var gots []got
	for _, s := range c.Servers {
		gots = append(gots, got{s.ID, s.Transport, s.Timeout, s.ConnectTimeout})
	}
	want := []got{
		{"stdio", TransportStdio, DefaultTimeout, DefaultConnectTimeout},
		{"http", TransportHTTP, DefaultTimeout, DefaultConnectTimeout},
		{"ws", TransportWebSocket, DefaultTimeout, DefaultConnectTimeout},
		{"sse", TransportSSE, 2 * time.Minute, DefaultConnectTimeout},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("defaults mismatch (-want +got):\n%s", diff)
	}
	if c.ToolNameFormat != DefaultToolNameFormat {
		t.Errorf("ToolNameFormat = %q, want %q", c.ToolNameFormat, DefaultToolNameFormat)
	}
}

// TestLoadFileFull pins the decoding of every field.
func TestLoadFileFull(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "switchboard.toml", `[[mcp_servers]]
id = "everything"
description = "the reference server"
transport = "stdio"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { API_KEY = "{{secrets.everything_key}}" }
cwd = "/tmp"
tools_allowlist = []
timeout = "90s"
connect_timeout = "10s"
optional = true
progress_resets_timeout = true
roots = ["file:///home/me/project"]

[[mcp_servers]]
id = "local"
url = "http://127.0.0.1:8080/mcp"
headers = { Authorization = "Bearer {{secrets.tok}}" }
allow_local_endpoint = true
`)
	c, err := LoadFile(path)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	want := []Server{
		{
			ID:                    "everything",
			Description:           "the reference server",
			Transport:             TransportStdio,
			Command:               "npx",
			Args:                  []string{"-y", "@modelcontextprotocol/server-everything"},
			Env:                   map[string]string{"API_KEY": "{{secrets.everything_key}}"},
			Cwd:                   "/tmp",
			ToolsAllowlist:        []string{},
			Timeout:               90 * time.Second,
			ConnectTimeout:        10 * time.Second,
			Optional:              true,
			ProgressResetsTimeout: true,
			Roots:                 []string{"file:///home/me/project"},
			Source:                Position{File: path, Line: 1, Field: "mcp_servers[0]"},
		},
		{
			ID:                 "local",
			Transport:          TransportHTTP,
			URL:                "http://127.0.0.1:8080/mcp",
			Headers:            map[string]string{"Authorization": "Bearer {{secrets.tok}}"},
			AllowLocalEndpoint: true,
			Timeout:            DefaultTimeout,
			ConnectTimeout:     DefaultConnectTimeout,
			Source:             Position{File: path, Line: 16, Field: "mcp_servers[1]"},
		},
	}
	if diff := cmp.Diff(want, c.Servers); diff != "" {
		t.Errorf("LoadFile servers mismatch (-want +got):\n%s", diff)
	}
	// tools_allowlist = [] means no tools, not every tool.
	if c.Servers[0].ToolsAllowlist == nil {
		t.Errorf("ToolsAllowlist = nil, want empty but set")
	}
}

// TestValidateTyped checks Validate on a Config built in code: field paths
// use the index in Servers, and nothing is changed.
func TestValidateTyped(t *testing.T) {
	c := &Config{
		ToolNameFormat: "{tool}",
		Servers: []Server{
			{ID: "a", Command: "x"},
			{ID: "a", Transport: TransportStdio, Command: "y", Timeout: -time.Second},
			{ID: "b", Transport: TransportWebSocket},
		},
	}
	before := *c
	want := []string{
		`mcp_servers[1].id: duplicate id "a" (also mcp_servers[0])`,
		`mcp_servers[1].timeout: must be positive, not -1s`,
		`mcp_servers[2].url: required for transport websocket`,
	}
	if diff := cmp.Diff(want, problemStrings(t, c.Validate(), "")); diff != "" {
		t.Errorf("Validate mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, *c); diff != "" {
		t.Errorf("Validate changed the config (-before +after):\n%s", diff)
	}
	if err := (&Config{}).Validate(); err != nil {
		t.Errorf("empty Config: Validate() = %v, want nil", err)
	}
}
