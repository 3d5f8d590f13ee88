package daemon_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
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
	created := tasktest.Post(t, url, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, declared).Must(t)
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || !strings.HasPrefix(id, "sbr1.") {
		t.Fatalf("tools/call = %v; want a task whose id wraps the run (sbr1.)", created)
	}
	if _, ok := created["ttlMs"]; !ok || created["ttlMs"] != nil {
		t.Errorf("ttlMs = %v (present %v), want null: a run is kept until pruned", created["ttlMs"], ok)
	}
	get := func(id string) map[string]any {
		return tasktest.Post(t, url, "tasks/get", map[string]any{"taskId": id}, declared).Must(t)
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
	if e := tasktest.Post(t, r.url+"/e/other/mcp", "tasks/get", map[string]any{"taskId": id}, declared).Error; e == nil || e.Code != -32602 {
		t.Errorf("tasks/get on another endpoint = %+v, want -32602", e)
	}
	forged := []byte(id)
	forged[len(forged)-3] ^= 1
	if e := tasktest.Post(t, url, "tasks/get", map[string]any{"taskId": string(forged)}, declared).Error; e == nil || e.Code != -32602 {
		t.Errorf("tasks/get of a forged id = %+v, want -32602", e)
	}

	answers := map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"who": "neo"}}, "unknown-key": map[string]any{"ignored": true}}
	if ack := tasktest.Post(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, declared).Must(t); ack["resultType"] != "complete" {
		t.Errorf("tasks/update = %v, want an ack", ack)
	}
	done := awaitStatus(id, "completed")
	res, _ := done["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); sc["after"] != "approved by neo" || res["isError"] == true {
		t.Errorf("completed with %v; want the outputs, after: approved by neo", res)
	}
	// Answered already, and ended: acknowledged, changes nothing.
	late := map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"who": "trinity"}}}
	if ack := tasktest.Post(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": late}, declared).Must(t); ack["resultType"] != "complete" {
		t.Errorf("a late tasks/update = %v, want an ack", ack)
	}
	if ack := tasktest.Post(t, url, "tasks/cancel", map[string]any{"taskId": id}, declared).Must(t); ack["resultType"] != "complete" {
		t.Errorf("tasks/cancel of a completed task = %v, want an ack", ack)
	}
	if got := get(id); got["status"] != "completed" {
		t.Errorf("after a late answer and a cancel, the task is %v, want completed", got["status"])
	}

	// Another run, cancelled while it waits.
	other := tasktest.Post(t, url, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, declared).Must(t)
	id2, _ := other["taskId"].(string)
	if id2 == "" || id2 == id {
		t.Fatalf("a second call = %v, want a task of its own", other)
	}
	awaitStatus(id2, "input_required")
	for range 2 {
		if ack := tasktest.Post(t, url, "tasks/cancel", map[string]any{"taskId": id2}, declared).Must(t); ack["resultType"] != "complete" {
			t.Errorf("tasks/cancel = %v, want an ack", ack)
		}
	}
	awaitStatus(id2, "cancelled")

	// Without the extension: as before, the gate's input-required result.
	plain := tasktest.Post(t, url, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, map[string]any{"elicitation": map[string]any{}}).Must(t)
	if plain["resultType"] == "task" || plain["requestState"] == nil {
		t.Fatalf("tools/call without the extension = %v, want an input-required result", plain)
	}
	if q, _ := plain["inputRequests"].(map[string]any)["gate"].(map[string]any); q["params"].(map[string]any)["message"] != "Deploy before?" {
		t.Errorf("inputRequests = %v, want the gate's question under gate", plain["inputRequests"])
	}
}
