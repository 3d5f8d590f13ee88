package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// taskCaps are client capabilities declaring the MCP tasks extension.
var taskCaps = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}

// taskRPC POSTs one 2026-07-28 request, statelessly, declaring the tasks
// extension, and returns its result or error.
func taskRPC(t *testing.T, url, method string, params map[string]any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "raw", "version": "1"}, "io.modelcontextprotocol/clientCapabilities": taskCaps}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
			data = d
		} else if strings.HasPrefix(sc.Text(), "{") {
			data = sc.Text()
		}
	}
	var a struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(data), &a); err != nil {
		t.Fatalf("%s: status %d, answer %q: %v", method, resp.StatusCode, data, err)
	}
	return a.Result, a.Error
}

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
		res, e := taskRPC(t, url, "tools/call", map[string]any{"name": tool, "arguments": args})
		id, _ := res["taskId"].(string)
		if e != nil || res["resultType"] != "task" || id == "" {
			t.Fatalf("slow_compute %v = %v %v, want a task", args, e, res)
		}
		return id
	}
	get := func(url, id string) map[string]any {
		t.Helper()
		res, e := taskRPC(t, url, "tasks/get", map[string]any{"taskId": id})
		if e != nil {
			t.Fatalf("tasks/get: %v", e)
		}
		return res
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
