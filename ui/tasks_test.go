package ui_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/ui"
	"github.com/switchboardmcp/switchboard/workflow"
)

// makeTask calls tool on /mcp as a 2026-07-28 client declaring the tasks
// extension and returns the task id the gateway answers with.
func (s *served) makeTask(tool string, args map[string]any) string {
	s.t.Helper()
	id, _ := tasktest.Create(s.t, s.url+"/mcp", tool, args)
	return id
}

// answeredTask makes a task of tool (one that asks one yes/no question:
// the fixtures' confirm_delete), answers it yes once it is
// input_required, and returns its id once it completed.
func (s *served) answeredTask(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	id := s.makeTask(tool, args)
	res := tasktest.Await(t, s.url+"/mcp", id, tool+" to ask", time.Minute, func(res map[string]any) bool {
		return res["status"] == "input_required" || tasktest.Terminal(res)
	})
	reqs, _ := res["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("task %s: %v, want one question", id, res)
	}
	for key := range reqs {
		tasktest.Post(t, s.url+"/mcp", "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, tasktest.Caps).Must(t)
	}
	if res := tasktest.Await(t, s.url+"/mcp", id, tool+" to end", time.Minute, tasktest.Terminal); res["status"] != "completed" {
		t.Fatalf("task %s: %v, want it completed", id, res)
	}
	return id
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
	// A task that waited for input (made alone: a question is routed to
	// the one call in flight): its page draws working, the wait
	// (hatched) and working again, then ✓ completed.
	asked := s.answeredTask(t, "mcp_a_confirm_delete", map[string]any{"filename": "a.txt"})
	_, _, body = s.do("GET", "/tasks/"+asked, nil)
	for _, want := range []string{`id="task-chart"`, `data-step="input_required" data-kind="gate"`, `data-step="working" data-kind="step"`, `✓ completed after`} {
		if !strings.Contains(body, want) {
			t.Errorf("the answered task's page has no %s\n%s", want, body)
		}
	}
}

// TestRunTasks: a published workflow called as a task is listed on the
// tasks page beside the gateway's own tasks, input_required at its gate,
// with a link to its run; its page shows the gate's question and the run,
// and its Cancel button cancels the run.
func TestRunTasks(t *testing.T) {
	wf, err := workflow.Parse("gated.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	var tool string
	s := serveWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.Gateway.Workflows = []string{"gated"}
		tool = o.Config.Gateway.WorkflowToolName("gated")
	}, config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	id := s.makeTask(tool, map[string]any{"text": "one"})
	body := wait.For(t, "the run task listed at its gate", func() (string, bool) {
		_, _, body := s.do("GET", "/tasks", nil)
		return body, strings.Contains(body, `data-task="`+id+`"`) && strings.Contains(body, "task-input_required")
	})
	m := regexp.MustCompile(`<a href="/runs/([^"]+)"`).FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, workflow.InProcessServerID+"/") {
		t.Fatalf("GET /tasks: want the run task linking to its run\n%s", body)
	}
	run := m[1]
	_, _, body = s.do("GET", "/tasks/"+id, nil)
	if !strings.Contains(body, "Echo one?") || !strings.Contains(body, `href="/runs/`+run+`"`) || !strings.Contains(body, `id="task-cancel"`) ||
		!strings.Contains(body, `id="task-chart"`) || !strings.Contains(body, `data-kind="waiting"`) {
		t.Errorf("the run task's page: want the gate's question, its run, its run's timeline and a Cancel button\n%s", body)
	}
	status, _, body := s.do("POST", "/tasks/"+id+"/cancel", nil, ui.CSRFHeader, "1", "HX-Request", "true")
	if status != 200 || !strings.Contains(body, "task-cancelled") {
		t.Errorf("cancel: %d, want the run task cancelled\n%s", status, body)
	}
	if _, _, body := s.do("GET", "/runs/"+run, nil); !strings.Contains(body, "cancelled") {
		t.Errorf("the task's run after the cancel: want it cancelled\n%s", body)
	}
}
