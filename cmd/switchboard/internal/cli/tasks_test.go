package cli_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// startServeProcess starts `switchboard serve` as a process of its own on
// a free loopback port, and returns its /mcp URL once it is ready.
func startServeProcess(t *testing.T, bin, cfg, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "--config", cfg, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := interop.StartWithTest(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var base string
	var seen strings.Builder
	timeout := time.After(testTimeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended before it was ready:\n%s", seen.String())
			}
			seen.WriteString(line + "\n")
			if m := servingLine.FindStringSubmatch(line); m != nil {
				base = m[1]
			}
			if readyLine.MatchString(line) {
				go func() {
					for range lines { // a blocked pipe would stall serve
					}
				}()
				return cmd, base + "/mcp"
			}
		case <-timeout:
			t.Fatalf("serve not ready after %v:\n%s", testTimeout, seen.String())
		}
	}
}

// TestServeTasksSurviveKill: tasks live in the state database. `serve` is
// killed with SIGKILL while two tasks' calls are in flight, and started
// again on the same database: tasks/get reports the task of a tool that
// is not idempotent failed, interrupted and not repeated (the upstream
// was called once); the task of a read-only tool (slow_lookup,
// readOnlyHint) is called again by recovery, once, and ends completed
// with its result; and the result of a task that finished before the
// kill is still there.
func TestServeTasksSurviveKill(t *testing.T) {
	dir := isolate(t)
	calls := filepath.Join(dir, "calls.log")
	cfg := writeConfig(t, dir, `[gateway]
task_wait = "100ms"

[[mcp_servers]]
id = "tk"
command = "`+interop.Build(t, fixturePkg)+`"
args = ["-tasks-fixtures", "-call-log", "`+calls+`"]
`)
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	cmd, url := startServeProcess(t, bin, cfg, dir)
	var createOf func(url, tool string, args map[string]any) string

	create := func(args map[string]any) string {
		t.Helper()
		return createOf(url, "mcp_tk_slow_compute", args)
	}
	createOf = func(url, tool string, args map[string]any) string {
		t.Helper()
		id, _ := tasktest.Create(t, url, tool, args)
		return id
	}
	get := func(url, id string) map[string]any {
		t.Helper()
		return tasktest.Post(t, url, "tasks/get", map[string]any{"taskId": id}, tasktest.Caps).Must(t)
	}
	done := create(map[string]any{"seconds": 0.3, "label": "kept"})
	wait.Within(t, testTimeout, "the short task to complete", func() (any, bool) {
		res := get(url, done)
		return res, res["status"] == "completed"
	})
	inFlight := create(map[string]any{"seconds": 60, "label": "lost"})
	lookup := createOf(url, "mcp_tk_slow_lookup", map[string]any{"seconds": 2, "label": "again"})
	wait.Within(t, testTimeout, "the long tasks' calls to reach the server", func() (string, bool) {
		b, _ := os.ReadFile(calls)
		return string(b), strings.Count(string(b), "slow_compute") == 2 && strings.Count(string(b), "slow_lookup") == 1
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	_, url = startServeProcess(t, bin, cfg, dir)
	res := get(url, inFlight)
	e, _ := res["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if res["status"] != "failed" || e["code"] != float64(-32603) || data["switchboard/interrupted"] != true {
		t.Errorf("the task in flight at the kill = %v, want failed, interrupted", res)
	}
	res = get(url, done)
	result, _ := res["result"].(map[string]any)
	if content, _ := result["content"].([]any); res["status"] != "completed" || len(content) != 1 || !strings.Contains(content[0].(map[string]any)["text"].(string), "computed kept") {
		t.Errorf("the finished task after the restart = %v", res)
	}
	// The read-only tool's task: working (never failed) until recovery's
	// call ends, then completed with its result.
	wait.Within(t, testTimeout, "the read-only tool's task to be called again and complete", func() (any, bool) {
		res := get(url, lookup)
		if res["status"] == "failed" {
			t.Fatalf("the read-only tool's task after the restart = %v, want it called again", res)
		}
		return res, res["status"] == "completed"
	})
	res = get(url, lookup)
	result, _ = res["result"].(map[string]any)
	if content, _ := result["content"].([]any); len(content) != 1 || content[0].(map[string]any)["text"] != "looked up again after 2s" {
		t.Errorf("the recovered task = %v, want slow_lookup's result", res)
	}
	b, _ := os.ReadFile(calls)
	if strings.Count(string(b), "slow_compute") != 2 {
		t.Errorf("the server's calls: %q, want the two slow_compute calls and no repeat", b)
	}
	if n := strings.Count(string(b), "slow_lookup"); n != 2 {
		t.Errorf("the server's calls: %q, want slow_lookup twice (before the kill, and by recovery), got %d", b, n)
	}
}
