package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUpstreamTaskFields: a server's upstream_task and
// upstream_task_timeout, in TOML and in an mcpServers entry; bad values
// are refused naming the field.
func TestUpstreamTaskFields(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.toml")
	good := "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nupstream_task = \"always\"\nupstream_task_timeout = \"3h\"\n\n[[mcp_servers]]\nid = \"b\"\ncommand = \"x\"\n"
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Servers[0]; a.UpstreamTask != UpstreamTaskAlways || a.UpstreamTaskTimeout != 3*time.Hour {
		t.Errorf("a: upstream_task %q, upstream_task_timeout %v; want always, 3h", a.UpstreamTask, a.UpstreamTaskTimeout)
	}
	if b := cfg.Servers[1]; b.UpstreamTask != "" || b.UpstreamTaskTimeout != 0 {
		t.Errorf("b: upstream_task %q, upstream_task_timeout %v; want unset (auto, the default)", b.UpstreamTask, b.UpstreamTaskTimeout)
	}
	js := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(js, []byte(`{"mcpServers": {"c": {"command": "x", "upstream_task": "never"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = LoadFile(js); err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].UpstreamTask; got != UpstreamTaskNever {
		t.Errorf("c upstream_task = %q, want never", got)
	}
	for _, c := range []struct{ line, want string }{
		{`upstream_task = "sometimes"`, `:4: mcp_servers[0].upstream_task: invalid upstream_task "sometimes": want auto, always or never`},
		{`upstream_task_timeout = "48h"`, `:4: mcp_servers[0].upstream_task_timeout:`},
	} {
		if err := os.WriteFile(file, []byte("[[mcp_servers]]\nid = \"d\"\ncommand = \"x\"\n"+c.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadFile(file); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadFile(%s) = %v, want %q", c.line, err, c.want)
		}
	}
}
