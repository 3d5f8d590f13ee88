package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTaskFields: a server's task mode and per-tool overrides, and the
// [gateway] task keys; bad values are refused naming the field.
func TestTaskFields(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.toml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`[gateway]
task_wait = "250ms"
task_ttl = "2h"
task_poll_interval = "500ms"

[[mcp_servers]]
id = "a"
command = "x"
task = "always"
tool_tasks = { failing_job = "required", greet = "never" }
`)
	cfg, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers[0]
	for tool, want := range map[string]string{"failing_job": TaskRequired, "greet": TaskNever, "other": TaskAlways} {
		if got := s.TaskMode(tool); got != want {
			t.Errorf("TaskMode(%q) = %q, want %q", tool, got, want)
		}
	}
	if got := (Server{}).TaskMode("x"); got != TaskAuto {
		t.Errorf("default TaskMode = %q, want auto", got)
	}
	if g := cfg.Gateway; g.TaskWait != 250*time.Millisecond || g.TaskTTL != 2*time.Hour || g.TaskPollInterval != 500*time.Millisecond {
		t.Errorf("gateway task keys = %v %v %v", g.TaskWait, g.TaskTTL, g.TaskPollInterval)
	}
	for _, c := range []struct{ toml, want string }{
		{"task = \"sometimes\"", `mcp_servers[0].task: invalid task mode "sometimes": want never, auto, always or required`},
		{"tool_tasks = { greet = \"maybe\" }", `mcp_servers[0].tool_tasks.greet: invalid task mode "maybe"`},
		{"tool_tasks = { greet = \"\" }", `mcp_servers[0].tool_tasks.greet: empty task mode`},
	} {
		write("[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n" + c.toml + "\n")
		if _, err := LoadFile(file); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadFile(%s) = %v, want %q", c.toml, err, c.want)
		}
	}
	write("[gateway]\ntask_ttl = \"30d\"\n")
	if _, err := LoadFile(file); err == nil || !strings.Contains(err.Error(), "gateway.task_ttl") {
		t.Errorf("LoadFile(task_ttl = 30d) = %v, want the field named", err)
	}
}
