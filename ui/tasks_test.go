package ui_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/ui"
)

// makeTask calls tool on /mcp as a 2026-07-28 client declaring the tasks
// extension and returns the task id the gateway answers with.
func (s *served) makeTask(tool string, args map[string]any) string {
	s.t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest("POST", s.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var data string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = d
		} else if strings.HasPrefix(sc.Text(), "{") {
			data = sc.Text()
		}
	}
	m := regexp.MustCompile(`"taskId":"([^"]+)"`).FindStringSubmatch(data)
	if m == nil {
		s.t.Fatalf("tools/call %s: %d %s, want a task", tool, resp.StatusCode, data)
	}
	return m[1]
}

// TestTasks: the tasks page, linked in the menu, lists the gateway's
// tasks with status, server/tool and age (filtered by status); a task's
// page shows its details and result text; its Cancel button (an htmx POST
// with the CSRF header) cancels a working one through the gateway, and a
// POST without the header is refused.
func TestTasks(t *testing.T) {
	s := serveServers(t, config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t),
		Args: []string{"-tasks-fixtures"}, Task: config.TaskAlways})
	done := s.makeTask("mcp_a_greet", map[string]any{"name": "Ada"})
	long := s.makeTask("mcp_a_slow_compute", map[string]any{"seconds": 120, "label": "long"})

	status, _, body := s.do("GET", "/tasks", nil)
	if status != 200 || !strings.Contains(body, `<a href="/tasks" aria-current="page">Tasks</a>`) ||
		!strings.Contains(body, `data-task="`+done+`"`) || !strings.Contains(body, `data-task="`+long+`"`) ||
		!strings.Contains(body, "a/slow_compute") || strings.Index(body, long) > strings.Index(body, done) {
		t.Fatalf("GET /tasks: %d, want both tasks, newest first\n%s", status, body)
	}
	body = wait.For(t, "the greet task's page to show its result", func() (string, bool) {
		_, _, body := s.do("GET", "/tasks/"+done, nil)
		return body, strings.Contains(body, "Hello, Ada")
	})
	if !strings.Contains(body, "task-completed") || strings.Contains(body, `id="task-cancel"`) {
		t.Errorf("the completed task's page\n%s", body)
	}
	if _, _, body := s.do("GET", "/tasks?status=working", nil); strings.Contains(body, `data-task="`+done+`"`) || !strings.Contains(body, `data-task="`+long+`"`) {
		t.Errorf("GET /tasks?status=working: want the working task alone\n%s", body)
	}
	_, _, body = s.do("GET", "/tasks/"+long, nil)
	if !strings.Contains(body, `hx-post="/tasks/`+long+`/cancel"`) || !strings.Contains(body, "task-working") {
		t.Fatalf("the working task's page has no Cancel button\n%s", body)
	}
	if status, _, _ := s.do("POST", "/tasks/"+long+"/cancel", nil); status != http.StatusForbidden {
		t.Errorf("cancel without the CSRF header: %d, want 403", status)
	}
	status, _, body = s.do("POST", "/tasks/"+long+"/cancel", nil, ui.CSRFHeader, "1", "HX-Request", "true")
	if status != 200 || !strings.Contains(body, "task-cancelled") || strings.Contains(body, `id="task-cancel"`) || strings.Contains(body, "<html") {
		t.Errorf("cancel: %d, want the task's section, cancelled\n%s", status, body)
	}
	if status, _, _ := s.do("GET", "/tasks/sbt1.nonesuch", nil); status != http.StatusNotFound {
		t.Errorf("an unknown task: %d, want 404", status)
	}
}
