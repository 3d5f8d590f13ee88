package daemon_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestWorkflowTask: a published workflow with a gate, called by a
// 2026-07-28 client that declares the tasks extension, is a task backed by
// its run: tasks/get shows it input_required with the gate's question
// under the gate's id; tasks/update answers it (an answer to another key
// is acknowledged and ignored); the task completes with the tool's result.
// Another run's task is cancelled by tasks/cancel (a second cancel is
// acknowledged too). The task is nobody's on another endpoint, and a
// forged id is refused. A client that does not declare the extension gets
// today's input-required result.
func TestWorkflowTask(t *testing.T) {
	tool := func(id, text string, needs ...string) *workflow.Step {
		args, err := workflow.NewValue(map[string]any{"text": text})
		if err != nil {
			t.Fatal(err)
		}
		return &workflow.Step{ID: id, Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: args, Needs: needs}
	}
	wf := &workflow.Workflow{ID: "approve", Digest: "d1", Steps: []*workflow.Step{
		tool("before", "before"),
		{ID: "ok", Kind: workflow.StepGate, Needs: []string{"before"}, Gate: &workflow.Gate{Message: mustTemplate(t, "Deploy {{.steps.before.result}}?"),
			Schema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`)}},
		tool("after", "approved by {{.steps.ok.result.who}}", "ok"),
	}, Outputs: []workflow.Output{{Name: "after", Value: mustTemplate(t, "{{.steps.after.result}}")}}}
	db := filepath.Join(t.TempDir(), "state.db")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}, Endpoints: []config.Endpoint{{Name: "other"}}}
	cfg.State.Database = db
	cfg.Gateway.Workflows = []string{"approve"}
	r := run(t, cfg, openDB(t, db), nil, daemon.Options{Database: db, Workflows: []*workflow.Workflow{wf}})
	r.awaitReady(t)
	url, name := r.url+"/mcp", cfg.Gateway.WorkflowToolName("approve")
	declared := map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{gateway.TasksExtension: map[string]any{}}}

	// The call is a task at once.
	created := taskRPC(t, url, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, declared).result(t)
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || !strings.HasPrefix(id, "sbr1.") {
		t.Fatalf("tools/call = %v; want a task whose id wraps the run (sbr1.)", created)
	}
	if _, ok := created["ttlMs"]; !ok || created["ttlMs"] != nil {
		t.Errorf("ttlMs = %v (present %v), want null: a run is kept until pruned", created["ttlMs"], ok)
	}
	get := func(id string) map[string]any {
		return taskRPC(t, url, "tasks/get", map[string]any{"taskId": id}, declared).result(t)
	}
	awaitStatus := func(id, status string) map[string]any {
		t.Helper()
		return wait.For(t, "task "+status, func() (map[string]any, bool) {
			got := get(id)
			return got, got["status"] == status
		})
	}
	asked := awaitStatus(id, "input_required")
	q, _ := asked["inputRequests"].(map[string]any)["ok"].(map[string]any)
	if q["method"] != "elicitation/create" || q["params"].(map[string]any)["message"] != "Deploy before?" {
		t.Fatalf("inputRequests = %v; want the gate's question under its id, ok", asked["inputRequests"])
	}

	// Elsewhere, or forged: no such task.
	if e := taskRPC(t, r.url+"/e/other/mcp", "tasks/get", map[string]any{"taskId": id}, declared).Error; e == nil || e.Code != -32602 {
		t.Errorf("tasks/get on another endpoint = %+v, want -32602", e)
	}
	forged := []byte(id)
	forged[len(forged)-3] ^= 1
	if e := taskRPC(t, url, "tasks/get", map[string]any{"taskId": string(forged)}, declared).Error; e == nil || e.Code != -32602 {
		t.Errorf("tasks/get of a forged id = %+v, want -32602", e)
	}

	answers := map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"who": "neo"}}, "unknown-key": map[string]any{"ignored": true}}
	if ack := taskRPC(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, declared).result(t); ack["resultType"] != "complete" {
		t.Errorf("tasks/update = %v, want an ack", ack)
	}
	done := awaitStatus(id, "completed")
	res, _ := done["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); sc["after"] != "approved by neo" || res["isError"] == true {
		t.Errorf("completed with %v; want the outputs, after: approved by neo", res)
	}
	// Answered already, and ended: acknowledged, changes nothing.
	late := map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"who": "trinity"}}}
	if ack := taskRPC(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": late}, declared).result(t); ack["resultType"] != "complete" {
		t.Errorf("a late tasks/update = %v, want an ack", ack)
	}
	if ack := taskRPC(t, url, "tasks/cancel", map[string]any{"taskId": id}, declared).result(t); ack["resultType"] != "complete" {
		t.Errorf("tasks/cancel of a completed task = %v, want an ack", ack)
	}
	if got := get(id); got["status"] != "completed" {
		t.Errorf("after a late answer and a cancel, the task is %v, want completed", got["status"])
	}

	// Another run, cancelled while it waits.
	other := taskRPC(t, url, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, declared).result(t)
	id2, _ := other["taskId"].(string)
	if id2 == "" || id2 == id {
		t.Fatalf("a second call = %v, want a task of its own", other)
	}
	awaitStatus(id2, "input_required")
	for range 2 {
		if ack := taskRPC(t, url, "tasks/cancel", map[string]any{"taskId": id2}, declared).result(t); ack["resultType"] != "complete" {
			t.Errorf("tasks/cancel = %v, want an ack", ack)
		}
	}
	awaitStatus(id2, "cancelled")

	// Without the extension: as before, the gate's input-required result.
	plain := taskRPC(t, url, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, map[string]any{"elicitation": map[string]any{}}).result(t)
	if plain["resultType"] == "task" || plain["requestState"] == nil {
		t.Fatalf("tools/call without the extension = %v, want an input-required result", plain)
	}
	if q, _ := plain["inputRequests"].(map[string]any)["gate"].(map[string]any); q["params"].(map[string]any)["message"] != "Deploy before?" {
		t.Errorf("inputRequests = %v, want the gate's question under gate", plain["inputRequests"])
	}
}

// taskAnswer is the JSON-RPC answer to one request of taskRPC.
type taskAnswer struct {
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (a taskAnswer) result(t *testing.T) map[string]any {
	t.Helper()
	if a.Error != nil {
		t.Fatalf("error %d: %s", a.Error.Code, a.Error.Message)
	}
	return a.Result
}

// taskRPC POSTs one 2026-07-28 request to url, statelessly, with caps as
// the request's client capabilities, as a client of the tasks extension
// does (the go-sdk's client knows no tasks).
func taskRPC(t *testing.T, url, method string, params map[string]any, caps map[string]any) taskAnswer {
	t.Helper()
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if n, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", n)
	} else if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	hc := &http.Client{Timeout: testTimeout}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				data = []byte(d)
			}
		}
	} else {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		data = b.Bytes()
	}
	var a taskAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("%s: HTTP %d, %q: %v", method, resp.StatusCode, data, err)
	}
	return a
}
