package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// makeTask calls tool on /mcp as a 2026-07-28 client declaring the tasks
// extension, with the headers given as name, value pairs, and returns the
// task id the gateway answers with.
func (a *apiT) makeTask(tool string, args map[string]any, hdr ...string) string {
	a.t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest("POST", a.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	var data string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = d
		} else if strings.HasPrefix(sc.Text(), "{") {
			data = sc.Text()
		}
	}
	var ans struct {
		Result struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(data), &ans) != nil || ans.Result.ResultType != "task" || ans.Result.TaskID == "" {
		a.t.Fatalf("tools/call %s: %d %s, want a task", tool, resp.StatusCode, data)
	}
	return ans.Result.TaskID
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
		code, _, body := a.do("GET", "/api/v1/tasks"+query, "")
		var pg struct {
			Items []api.TaskJSON `json:"items"`
			Next  string         `json:"next_cursor"`
		}
		if code != 200 || json.Unmarshal(body, &pg) != nil {
			t.Fatalf("GET tasks%s: %d %s", query, code, body)
		}
		for _, it := range pg.Items {
			if it.Result != nil {
				t.Errorf("GET tasks%s: task %s listed with its result", query, it.ID)
			}
			ids = append(ids, it.ID)
		}
		return ids, pg.Next
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
// (404, as a task that is not there); the owner sees both.
func TestTasksGrant(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const token = "api-task-grant-token-51c0"
	t.Setenv("SB_API_TOKEN", token)
	a := startAPIWith(t, func(o *daemon.Options) {
		tasksFixture(o)
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
	if code, _, body := a.do("GET", "/api/v1/tasks/"+ta, "", admin...); code != 200 {
		t.Errorf("the narrowed token reads a's task: %d %s", code, body)
	}
	code, h, body := a.do("GET", "/api/v1/tasks/"+tb, "", admin...)
	a.wantProblem("b's task read by the narrowed token", 404, "", code, h, body)
	code, h, body = a.do("POST", "/api/v1/tasks/"+tb+"/cancel", "", admin...)
	a.wantProblem("b's task cancelled by the narrowed token", 404, "", code, h, body)
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
