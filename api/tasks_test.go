package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/workflow"
)

// makeTask calls tool on /mcp as a 2026-07-28 client declaring the tasks
// extension, with the headers given as name, value pairs, and returns the
// task id the gateway answers with.
func (a *apiT) makeTask(tool string, args map[string]any, hdr ...string) string {
	a.t.Helper()
	id, _ := tasktest.Create(a.t, a.url+"/mcp", tool, args, hdr...)
	return id
}

// asks is a workflow that waits at a gate.
const asks = `id: asks
description: Asks who
outputs:
  said: "{{ .steps.ok.result.who }}"
steps:
  - id: ok
    gate:
      message: "Who?"
      schema:
        type: object
        properties:
          who: {type: string}
        required: [who]
`

// listTasks reads one page of GET /api/v1/tasks with query.
func (a *apiT) listTasks(query string) (items []api.TaskJSON, next string) {
	a.t.Helper()
	code, _, body := a.do("GET", "/api/v1/tasks"+query, "")
	var pg struct {
		Items []api.TaskJSON `json:"items"`
		Next  string         `json:"next_cursor"`
	}
	if code != 200 || json.Unmarshal(body, &pg) != nil {
		a.t.Fatalf("GET tasks%s: %d %s", query, code, body)
	}
	return pg.Items, pg.Next
}

// tasksFixture makes server a's tools the testserver's task fixtures, each
// a task from the start.
func tasksFixture(o *daemon.Options) {
	o.Config.Servers[0].Args = []string{"-tasks-fixtures"}
	o.Config.Servers[0].Task = config.TaskAlways
}

// TestTasks: the tasks the gateway made on /mcp are listed newest first
// (paged, filtered by status), shown with their outcome, and cancelled
// through the gateway, upstream too: a cancelled task stays cancelled, and
// the client's tasks/get says so; an unknown task is a 404, a bad status
// a 400 naming it. The Go client reads the same.
func TestTasks(t *testing.T) {
	a := startAPIWith(t, tasksFixture)
	a.waitTool("mcp_a_greet")
	done := a.makeTask("mcp_a_greet", map[string]any{"name": "Ada"})
	long := a.makeTask("mcp_a_slow_compute", map[string]any{"seconds": 120, "label": "long"})

	get := func(id string) api.TaskJSON {
		t.Helper()
		code, _, body := a.do("GET", "/api/v1/tasks/"+id, "")
		var tk api.TaskJSON
		if code != 200 || json.Unmarshal(body, &tk) != nil {
			t.Fatalf("GET tasks/%s: %d %s", id, code, body)
		}
		return tk
	}
	wait.For(t, "the greet task to complete", func() (api.TaskJSON, bool) {
		tk := get(done)
		return tk, tk.Status == "completed"
	})
	tk := get(done)
	if tk.Server != "a" || tk.Tool != "greet" || tk.Caller == "" || tk.TTLMs <= 0 || tk.Created.IsZero() ||
		!strings.Contains(string(tk.Result), "Ada") || tk.Error != nil {
		t.Errorf("GET the completed task = %+v", tk)
	}

	list := func(query string) (ids []string, next string) {
		t.Helper()
		items, next := a.listTasks(query)
		for _, it := range items {
			if it.Result != nil {
				t.Errorf("GET tasks%s: task %s listed with its result", query, it.ID)
			}
			ids = append(ids, it.ID)
		}
		return ids, next
	}
	if ids, _ := list(""); fmt.Sprint(ids) != fmt.Sprint([]string{long, done}) {
		t.Errorf("GET tasks = %v, want [long done]", ids)
	}
	first, next := list("?limit=1")
	second, last := list("?limit=1&cursor=" + next)
	if fmt.Sprint(first, second) != fmt.Sprint([]string{long}, []string{done}) || next == "" || last != "" {
		t.Errorf("pages of one: %v (next %q), %v (next %q)", first, next, second, last)
	}
	if ids, _ := list("?status=working"); fmt.Sprint(ids) != fmt.Sprint([]string{long}) {
		t.Errorf("GET tasks?status=working = %v, want the long one", ids)
	}
	code, h, body := a.do("GET", "/api/v1/tasks?status=finished", "")
	a.wantProblem("a bad status", 400, "status", code, h, body)
	code, h, body = a.do("GET", "/api/v1/tasks/sbt1.nonesuch", "")
	a.wantProblem("an unknown task", 404, "", code, h, body)

	code, _, body = a.do("POST", "/api/v1/tasks/"+long+"/cancel", "")
	var cancelled api.TaskJSON
	if code != 200 || json.Unmarshal(body, &cancelled) != nil || cancelled.Status != "cancelled" {
		t.Fatalf("POST cancel: %d %s, want the task cancelled", code, body)
	}
	if tk := get(long); tk.Status != "cancelled" || tk.StatusMessage == "" {
		t.Errorf("the cancelled task = %+v", tk)
	}
	// Its history: made working, then cancelled, with the message.
	if h := get(long).History; len(h) != 2 || h[0].Status != "working" || h[1].Status != "cancelled" || h[1].Message == "" ||
		h[1].At.Before(h[0].At) {
		t.Errorf("the cancelled task's history = %+v, want working then cancelled", h)
	}
	items, _ := a.listTasks("")
	for _, it := range items {
		if it.History != nil {
			t.Errorf("GET tasks: task %s listed with its history", it.ID)
		}
	}
	// Cancelling again changes nothing; an ended task stays as it is.
	if code, _, body := a.do("POST", "/api/v1/tasks/"+done+"/cancel", ""); code != 200 || !strings.Contains(string(body), `"completed"`) {
		t.Errorf("cancel of a completed task: %d %s, want it completed", code, body)
	}

	c := api.NewClient(a.url, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := c.Tasks(ctx, api.TaskFilter{Status: "cancelled"})
	if err != nil || len(got) != 1 || got[0].ID != long {
		t.Errorf("Client.Tasks(cancelled) = %+v, %v", got, err)
	}
	if _, err := c.Task(ctx, "sbt1.nonesuch"); daemon.KindOf(err) != daemon.KindUnknownTask {
		t.Errorf("Client.Task(unknown) = %v, want kind %s", err, daemon.KindUnknownTask)
	}
}

// TestTasksGrant: an OAuth token narrowed by [[gateway.auth.policy]] to
// server a sees a's tasks, and b's neither listed nor read nor cancelled
// (404, as a task that is not there); the owner sees both. A published
// workflow's run task it sees whole, as it sees runs.
func TestTasksGrant(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const token = "api-task-grant-token-51c0"
	t.Setenv("SB_API_TOKEN", token)
	wf, err := workflow.Parse("asks.yaml", []byte(asks))
	if err != nil {
		t.Fatal(err)
	}
	var wfTool string
	a := startAPIWith(t, func(o *daemon.Options) {
		tasksFixture(o)
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.Gateway.Workflows = []string{"asks"}
		wfTool = o.Config.Gateway.WorkflowToolName("asks")
		b := o.Config.Servers[0]
		b.ID = "b"
		o.Config.Servers = append(o.Config.Servers, b)
		o.Config.Gateway.AuthToken = "{{env.SB_API_TOKEN}}"
		o.Config.Gateway.Auth = &config.GatewayAuth{Issuer: as.Issuer, AllowLocalIssuer: true, AdminScope: "admin",
			Policy: []config.AuthPolicy{{Servers: []string{"a"}}}}
	})
	now := time.Now()
	tok, err := as.Mint(jwt.MapClaims{"iss": as.Issuer, "aud": a.url + "/mcp", "sub": "alice", "scope": "admin", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	admin, owner := []string{"Authorization", "Bearer " + tok}, []string{"Authorization", "Bearer " + token}
	wait.For(t, "both servers' tools", func() (string, bool) {
		code, _, body := a.do("GET", "/api/v1/tools?q=greet", "", owner...)
		return string(body), code == 200 && strings.Count(string(body), `"greet"`) >= 2
	})
	ta := a.makeTask("mcp_a_greet", map[string]any{"name": "A"}, owner...)
	tb := a.makeTask("mcp_b_greet", map[string]any{"name": "B"}, owner...)
	list := func(hdr []string) string {
		code, _, body := a.do("GET", "/api/v1/tasks", "", hdr...)
		var pg struct {
			Items []api.TaskJSON `json:"items"`
		}
		if code != 200 || json.Unmarshal(body, &pg) != nil {
			t.Fatalf("GET tasks: %d %s", code, body)
		}
		var ids []string
		for _, it := range pg.Items {
			ids = append(ids, it.Server)
		}
		return strings.Join(ids, ",")
	}
	if got := list(owner); got != "b,a" {
		t.Errorf("the owner's tasks: servers %q, want b,a", got)
	}
	if got := list(admin); got != "a" {
		t.Errorf("the narrowed token's tasks: servers %q, want a", got)
	}
	rt := a.makeTask(wfTool, map[string]any{}, owner...)
	if got := list(admin); got != workflow.InProcessServerID+",a" {
		t.Errorf("the narrowed token's tasks with a run task: servers %q, want %s,a", got, workflow.InProcessServerID)
	}
	if code, _, body := a.do("GET", "/api/v1/tasks/"+rt, "", admin...); code != 200 {
		t.Errorf("the narrowed token reads the run task: %d %s", code, body)
	}
	if code, _, body := a.do("GET", "/api/v1/tasks/"+ta, "", admin...); code != 200 {
		t.Errorf("the narrowed token reads a's task: %d %s", code, body)
	}
	code, h, body := a.do("GET", "/api/v1/tasks/"+tb, "", admin...)
	a.wantProblem("b's task read by the narrowed token", 404, "", code, h, body)
	code, h, body = a.do("POST", "/api/v1/tasks/"+tb+"/cancel", "", admin...)
	a.wantProblem("b's task cancelled by the narrowed token", 404, "", code, h, body)
}

// TestRunTasks: a published workflow called as a task by a declaring
// client is its run (an sbr1. id), listed beside the gateway's own tasks,
// newest first and paged across both; its status is its run's as
// tasks/get maps it (a run at a gate is input_required), it names its
// run, GET shows the gate's question, and cancel cancels the run. A run
// started otherwise (the API's) is no task.
func TestRunTasks(t *testing.T) {
	wf, err := workflow.Parse("gated.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	var tool string
	a := startAPIWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.Gateway.Workflows = []string{"gated"}
		o.Config.Servers[0].ToolTasks = map[string]string{"echo": config.TaskAlways}
		tool = o.Config.Gateway.WorkflowToolName("gated")
	})
	a.waitTool("mcp_a_echo")
	a.waitTool(tool)
	own := a.makeTask("mcp_a_echo", map[string]any{"text": "hi"})
	if code, _, body := a.do("POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":"not a task"}}`); code != 201 {
		t.Fatalf("POST workflows/gated/runs: %d %s", code, body)
	}
	id := a.makeTask(tool, map[string]any{"text": "one"})
	if !strings.HasPrefix(id, "sbr1.") {
		t.Fatalf("the workflow's task id = %q, want sbr1.", id)
	}

	list := a.listTasks
	ids := func(items []api.TaskJSON) string {
		var s []string
		for _, it := range items {
			s = append(s, it.ID)
		}
		return strings.Join(s, " ")
	}
	items := wait.For(t, "the run task at its gate and the echo task completed", func() ([]api.TaskJSON, bool) {
		items, _ := list("")
		return items, len(items) == 2 && items[0].Status == "input_required" && items[1].Status == "completed"
	})
	rt := items[0]
	if rt.ID != id || items[1].ID != own || rt.Run == "" || rt.Server != workflow.InProcessServerID || rt.Tool == "" ||
		rt.Caller == "" || rt.TTLMs != 0 || items[1].Run != "" {
		t.Errorf("GET tasks = %+v; want the run task (naming its run, server %s), then the echo task", items, workflow.InProcessServerID)
	}
	first, next := list("?limit=1")
	second, last := list("?limit=1&cursor=" + next)
	if ids(first) != id || ids(second) != own || next == "" || last != "" {
		t.Errorf("pages of one: %s (next %q), %s (next %q); want the run task, then the echo task", ids(first), next, ids(second), last)
	}
	if got, _ := list("?status=input_required"); ids(got) != id {
		t.Errorf("GET tasks?status=input_required = %s, want the run task", ids(got))
	}
	if got, _ := list("?status=completed"); ids(got) != own {
		t.Errorf("GET tasks?status=completed = %s, want the echo task", ids(got))
	}

	code, _, body := a.do("GET", "/api/v1/tasks/"+id, "")
	var got api.TaskJSON
	if code != 200 || json.Unmarshal(body, &got) != nil || got.Status != "input_required" || got.Run != rt.Run ||
		!strings.Contains(string(got.InputRequests), "Echo one?") {
		t.Errorf("GET tasks/%s: %d %s; want input_required with the gate's question", id, code, body)
	}
	if code, _, body := a.do("GET", "/api/v1/runs/"+got.Run, ""); code != 200 || !strings.Contains(string(body), `"waiting"`) {
		t.Errorf("GET runs/%s (the task's run): %d %s; want it waiting", got.Run, code, body)
	}
	forged := []byte(id)
	forged[len(forged)-3] ^= 1
	code, h, body := a.do("GET", "/api/v1/tasks/"+string(forged), "")
	a.wantProblem("a forged run task id", 404, "", code, h, body)

	code, _, body = a.do("POST", "/api/v1/tasks/"+id+"/cancel", "")
	if code != 200 || json.Unmarshal(body, &got) != nil || got.Status != "cancelled" {
		t.Errorf("POST tasks/%s/cancel: %d %s; want it cancelled", id, code, body)
	}
	c := api.NewClient(a.url, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if tk, err := c.Task(ctx, id); err != nil || tk.Status != "cancelled" || tk.Run != rt.Run {
		t.Errorf("Client.Task(%s) = %+v, %v; want the run task cancelled", id, tk, err)
	}
}

// TestTaskUpstream: a daemon whose server is another daemon's gateway
// (a server of the tasks extension, upstream_task "always") makes a task
// whose call follows the upstream's own task; GET /api/v1/tasks/{id} names
// that task (upstream_task), which the upstream's API shows, completed.
func TestTaskUpstream(t *testing.T) {
	up := startAPIWith(t, tasksFixture)
	up.waitTool("mcp_a_slow_compute")
	down := startAPIWith(t, func(o *daemon.Options) {
		o.Config.Servers[0] = config.Server{ID: "a", Transport: config.TransportHTTP, URL: up.url + "/mcp", AllowLocalEndpoint: true,
			UpstreamTask: config.UpstreamTaskAlways, Task: config.TaskAlways}
	})
	down.waitTool("mcp_a_mcp_a_slow_compute")
	id := down.makeTask("mcp_a_mcp_a_slow_compute", map[string]any{"seconds": 1, "label": "x"})
	get := func(a *apiT, id string) api.TaskJSON {
		t.Helper()
		code, _, body := a.do("GET", "/api/v1/tasks/"+id, "")
		var tk api.TaskJSON
		if code != 200 || json.Unmarshal(body, &tk) != nil {
			t.Fatalf("GET tasks/%s: %d %s", id, code, body)
		}
		return tk
	}
	tk := wait.For(t, "the task to complete", func() (api.TaskJSON, bool) {
		tk := get(down, id)
		return tk, tk.Status == "completed"
	})
	if !strings.HasPrefix(tk.UpstreamTask, "sbt1.") || tk.UpstreamTask == id || !strings.Contains(string(tk.Result), "computed x after 1s") {
		t.Fatalf("GET the task = %+v, want its result and the upstream's task named", tk)
	}
	if utk := get(up, tk.UpstreamTask); utk.Status != "completed" || utk.Tool != "slow_compute" || utk.UpstreamTask != "" {
		t.Errorf("the upstream's task = %+v, want its completed slow_compute", utk)
	}
}
