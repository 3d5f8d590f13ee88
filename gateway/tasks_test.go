package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// memTasks is a gateway.TaskStore in memory, as the daemon's state
// database keeps tasks (store/tasks.go has the SQL one).
type memTasks struct {
	mu    sync.Mutex
	tasks map[string]gateway.TaskRecord
}

func newMemTasks() *memTasks { return &memTasks{tasks: map[string]gateway.TaskRecord{}} }

func (m *memTasks) CreateTask(_ context.Context, t gateway.TaskRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tasks[t.ID] = t
	return nil
}

func (m *memTasks) Task(_ context.Context, id string) (gateway.TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return t, gateway.ErrTaskNotFound
	}
	return t, nil
}

func (m *memTasks) UpdateTask(_ context.Context, t gateway.TaskRecord) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.tasks[t.ID]
	if !ok || gateway.TaskTerminal(cur.Status) {
		return false, nil
	}
	cur.Status, cur.StatusMessage, cur.InputRequests, cur.Result, cur.Error, cur.Updated = t.Status, t.StatusMessage, t.InputRequests, t.Result, t.Error, t.Updated
	cur.UpstreamTask = t.UpstreamTask
	if t.Owner != "" {
		cur.Owner = t.Owner
	}
	m.tasks[t.ID] = cur
	return true, nil
}

func (m *memTasks) PruneTasks(_ context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, t := range m.tasks {
		if t.Created.Add(t.TTL).Before(now) {
			delete(m.tasks, id)
			n++
		}
	}
	return n, nil
}

// The raw 2026-07-28 client of these tests (internal/testkit/tasktest).
var (
	tasksCaps = tasktest.Caps
	rpc       = tasktest.Post
)

// contentText is the text of a tool result's first content block (or of
// a task's result), which must have one.
func contentText(t *testing.T, res map[string]any) string {
	t.Helper()
	s := tasktest.ResultText(res)
	if s == "" {
		t.Fatalf("no text content in %v", res)
	}
	return s
}

// tasksGateway serves a gateway keeping tasks in opts.Tasks (a new one
// when nil) over the tasks fixture (server "tk"), at /mcp and at /e/b/mcp
// unless opts names endpoints, with task_wait 200ms.
func tasksGateway(t *testing.T, opts *gateway.Options, hopts *gateway.HTTPOptions) (*gateway.Gateway, string) {
	t.Helper()
	srv := fixture(t, "tk", "-tasks-fixtures")
	srv.ToolTasks = map[string]string{"greet": config.TaskNever, "confirm_delete": config.TaskAlways, "multi_input": config.TaskAlways,
		"failing_job": config.TaskRequired, "test_tool_with_task": config.TaskRequired}
	o := gateway.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Tasks == nil {
		o.Tasks = newMemTasks()
	}
	if o.Endpoints == nil {
		o.Endpoints = []gateway.Endpoint{gateway.DefaultEndpoint, namedEndpoint("b", nil)}
	}
	o.TaskWait = 200 * time.Millisecond
	if o.TaskTTL == 0 {
		o.TaskTTL = time.Hour
	}
	return serveWith(t, []config.Server{srv}, nil, &o, hopts)
}

// createTask calls tool, which must become a task, and returns its id.
func createTask(t *testing.T, url, tool string, args map[string]any, header ...string) string {
	t.Helper()
	id, res := tasktest.Create(t, url, tool, args, header...)
	for _, k := range []string{"task", "result", "error", "inputRequests", "requestState", "ttl", "pollInterval"} {
		if _, ok := res[k]; ok {
			t.Errorf("%s: CreateTaskResult has %q: %v", tool, k, res)
		}
	}
	if ttl, ok := res["ttlMs"].(float64); !ok || ttl <= 0 {
		t.Errorf("%s: ttlMs = %v, want a positive number", tool, res["ttlMs"])
	}
	if res["status"] != "working" {
		t.Fatalf("%s: CreateTaskResult %v", tool, res)
	}
	return id
}

// awaitTask polls task id until cond holds of its tasks/get answer.
func awaitTask(t *testing.T, url, id string, what string, cond func(map[string]any) bool, header ...string) map[string]any {
	t.Helper()
	return tasktest.Await(t, url, id, what, 20*time.Second, cond, header...)
}

// TestTaskLifecycle: a 2026-07-28 client that declares the tasks
// extension, over Streamable HTTP: a call that takes longer than
// task_wait becomes a task, polled to its result; a tool error completes
// it, a protocol error fails it; tasks/cancel cancels it (and acks the
// same once it has ended); a quick call and a "never" tool are answered
// with their results.
func TestTaskLifecycle(t *testing.T) {
	_, base := tasksGateway(t, nil, nil)
	url := base + "/mcp"

	// The extension is advertised.
	d := rpc(t, url, "server/discover", nil, tasksCaps)
	caps, _ := d.Result["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	if _, ok := exts[gateway.TasksExtension]; !ok || caps["tasks"] != nil {
		t.Errorf("discover capabilities = %v, want extensions[%s] and no tasks", caps, gateway.TasksExtension)
	}

	// greet is "never"; slow_compute{0} ends within task_wait.
	if a := rpc(t, url, "tools/call", map[string]any{"name": "mcp_tk_greet", "arguments": map[string]any{"name": "World"}}, tasksCaps); a.Result["resultType"] != "complete" || contentText(t, a.Result) != "Hello, World!" {
		t.Errorf("greet = %+v %v", a.Error, a.Result)
	}
	if a := rpc(t, url, "tools/call", map[string]any{"name": "mcp_tk_slow_compute", "arguments": map[string]any{"seconds": 0, "label": "now"}}, tasksCaps); a.Result["resultType"] != "complete" {
		t.Errorf("slow_compute{0} = %+v %v, want its result", a.Error, a.Result)
	}

	id := createTask(t, url, "mcp_tk_slow_compute", map[string]any{"seconds": 1, "label": "one"})
	a := rpc(t, url, "tasks/get", map[string]any{"taskId": id}, tasksCaps)
	if a.Result["resultType"] != "complete" || a.Result["taskId"] != id || a.Result["status"] != "working" {
		t.Errorf("tasks/get at once = %+v %v, want working", a.Error, a.Result)
	}
	if _, ok := a.Result["requestState"]; ok {
		t.Errorf("tasks/get has requestState: %v", a.Result)
	}
	res := awaitTask(t, url, id, "slow_compute's task to end", tasktest.Terminal)
	result, _ := res["result"].(map[string]any)
	if res["status"] != "completed" || result == nil || contentText(t, result) != "computed one after 1s" {
		t.Errorf("slow_compute task = %v", res)
	}

	// A tool error completes the task; a protocol error fails it.
	id = createTask(t, url, "mcp_tk_failing_job", map[string]any{})
	res = awaitTask(t, url, id, "failing_job's task to end", tasktest.Terminal)
	if result, _ := res["result"].(map[string]any); res["status"] != "completed" || result["isError"] != true {
		t.Errorf("failing_job task = %v, want completed with isError", res)
	}
	id = createTask(t, url, "mcp_tk_protocol_error_job", map[string]any{})
	res = awaitTask(t, url, id, "protocol_error_job's task to end", tasktest.Terminal)
	if e, _ := res["error"].(map[string]any); res["status"] != "failed" || e["code"] == nil || !strings.Contains(e["message"].(string), "the job broke") || res["result"] != nil {
		t.Errorf("protocol_error_job task = %v, want failed with the upstream's error", res)
	}

	// Cancel: acked empty, the task ends cancelled, and its upstream call
	// is cancelled (the fixture's call returns at once).
	id = createTask(t, url, "mcp_tk_slow_compute", map[string]any{"seconds": 60})
	a = rpc(t, url, "tasks/cancel", map[string]any{"taskId": id}, tasksCaps)
	delete(a.Result, "_meta")
	if a.Error != nil || a.Result["resultType"] != "complete" || len(a.Result) != 1 {
		t.Errorf("tasks/cancel = %+v %v, want {resultType: complete}", a.Error, a.Result)
	}
	res = awaitTask(t, url, id, "the cancelled task", tasktest.Terminal)
	if res["status"] != "cancelled" {
		t.Errorf("cancelled task = %v", res)
	}
	if a := rpc(t, url, "tasks/cancel", map[string]any{"taskId": id}, tasksCaps); a.Error != nil || a.Result["resultType"] != "complete" {
		t.Errorf("tasks/cancel of an ended task = %+v %v, want the same ack", a.Error, a.Result)
	}
	waitGoroutines(t, "gateway.(*Gateway).superviseTask", "the tasks' goroutines")

	// tasks/result and tasks/list do not exist.
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if a := rpc(t, url, m, map[string]any{"taskId": id}, tasksCaps); a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("%s = %+v, want -32601", m, a.Error)
		}
	}
	// An id the gateway did not issue is refused without a read.
	if a := rpc(t, url, "tasks/get", map[string]any{"taskId": "tasks-conformance-nonexistent-12345"}, tasksCaps); a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("tasks/get of an unknown id = %+v, want -32602", a.Error)
	}
}

// TestTaskInput: a task whose upstream asks its client during the call is
// input_required, its questions listed under keys the gateway minted;
// tasks/update answers some (the next tasks/get lists only the rest), an
// answer to an unknown key is acked and ignored, and the task completes
// once all are in. A question before the task exists is an input-required
// result, as without tasks, and the retry becomes the task.
func TestTaskInput(t *testing.T) {
	_, base := tasksGateway(t, nil, nil)
	url := base + "/mcp"
	inputs := func(n int) func(map[string]any) bool {
		return func(res map[string]any) bool {
			reqs, _ := res["inputRequests"].(map[string]any)
			return res["status"] == "input_required" && len(reqs) >= n || tasktest.Terminal(res)
		}
	}

	id := createTask(t, url, "mcp_tk_confirm_delete", map[string]any{"filename": "a.txt"})
	res := awaitTask(t, url, id, "confirm_delete to ask", inputs(1))
	reqs, _ := res["inputRequests"].(map[string]any)
	var key string
	for k, v := range reqs {
		key = k
		if m, _ := v.(map[string]any); m["method"] != "elicitation/create" {
			t.Errorf("inputRequests[%s] = %v, want an elicitation/create", k, v)
		}
	}
	if res["status"] != "input_required" || key == "" {
		t.Fatalf("confirm_delete task = %v", res)
	}
	a := rpc(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}, "unknown-key": map[string]any{"ignored": true}}}, tasksCaps)
	if a.Error != nil || a.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update = %+v %v", a.Error, a.Result)
	}
	res = awaitTask(t, url, id, "confirm_delete to end", tasktest.Terminal)
	if result, _ := res["result"].(map[string]any); res["status"] != "completed" || contentText(t, result) != "deleted a.txt" {
		t.Errorf("confirm_delete task = %v", res)
	}

	id = createTask(t, url, "mcp_tk_multi_input", map[string]any{})
	res = awaitTask(t, url, id, "multi_input to ask twice", inputs(2))
	var keys []string
	for k := range res["inputRequests"].(map[string]any) {
		keys = append(keys, k)
	}
	if len(keys) != 2 {
		t.Fatalf("multi_input task = %v, want two questions", res)
	}
	answer := func(key, name string) {
		a := rpc(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"name": name}}}}, tasksCaps)
		if a.Error != nil {
			t.Fatalf("tasks/update: %+v", a.Error)
		}
	}
	answer(keys[0], "first")
	a = rpc(t, url, "tasks/get", map[string]any{"taskId": id}, tasksCaps)
	left, _ := a.Result["inputRequests"].(map[string]any)
	if _, ok := left[keys[1]]; a.Result["status"] != "input_required" || !ok || left[keys[0]] != nil {
		t.Errorf("after a partial update, tasks/get = %v, want input_required with only %s", a.Result, keys[1])
	}
	answer(keys[1], "second")
	res = awaitTask(t, url, id, "multi_input to end", tasktest.Terminal)
	if result, _ := res["result"].(map[string]any); res["status"] != "completed" || !strings.Contains(contentText(t, result), "first") || !strings.Contains(contentText(t, result), "second") {
		t.Errorf("multi_input task = %v", res)
	}

	// MRTR before the task: round 1 asks, round 2 becomes the task.
	a = rpc(t, url, "tools/call", map[string]any{"name": "mcp_tk_test_tool_with_task", "arguments": map[string]any{}}, tasksCaps)
	if a.Result["resultType"] != "input_required" || a.Result["taskId"] != nil {
		t.Fatalf("test_tool_with_task round 1 = %+v %v, want input_required", a.Error, a.Result)
	}
	var k string
	for k = range a.Result["inputRequests"].(map[string]any) {
	}
	a = rpc(t, url, "tools/call", map[string]any{"name": "mcp_tk_test_tool_with_task", "arguments": map[string]any{},
		"inputResponses": map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}},
		"requestState":   a.Result["requestState"]}, tasksCaps)
	id, _ = a.Result["taskId"].(string)
	if a.Result["resultType"] != "task" || id == "" || a.Result["requestState"] != nil || a.Result["inputRequests"] != nil {
		t.Fatalf("test_tool_with_task round 2 = %+v %v, want a task", a.Error, a.Result)
	}
	res = awaitTask(t, url, id, "test_tool_with_task to end", tasktest.Terminal)
	if result, _ := res["result"].(map[string]any); res["status"] != "completed" || !strings.Contains(contentText(t, result), "Alice") {
		t.Errorf("test_tool_with_task task = %v", res)
	}
}

// TestTaskOnlyForDeclaringClients: a client that does not declare the
// extension gets exactly what it got without tasks: a plain result, from
// a 2026-07-28 client (stateless) and a 2025-11-25 one (a session); a tool
// whose task mode is "required" refuses a 2026-07-28 client that does not
// declare it, with -32021 and the capability it needs; and tasks/* from
// such a client are refused likewise, before the id is looked at.
func TestTaskOnlyForDeclaringClients(t *testing.T) {
	_, base := tasksGateway(t, nil, nil)
	url := base + "/mcp"
	plain := map[string]any{"elicitation": map[string]any{}}

	a := rpc(t, url, "tools/call", map[string]any{"name": "mcp_tk_slow_compute", "arguments": map[string]any{"seconds": 0.5, "label": "plain"}}, plain)
	if a.Error != nil || a.Result["resultType"] != "complete" || contentText(t, a.Result) != "computed plain after 0.5s" {
		t.Errorf("slow_compute for a non-declaring client = %+v %v, want its result", a.Error, a.Result)
	}
	a = rpc(t, url, "tools/call", map[string]any{"name": "mcp_tk_failing_job", "arguments": map[string]any{}}, plain)
	if a.Error == nil || a.Error.Code != -32021 || a.Status != http.StatusBadRequest {
		t.Fatalf("failing_job (required) for a non-declaring client = %d %+v, want 400 -32021", a.Status, a.Error)
	}
	var data mcp.MissingRequiredClientCapabilityData
	if err := json.Unmarshal(a.Error.Data, &data); err != nil || data.RequiredCapabilities == nil || data.RequiredCapabilities.Extensions[gateway.TasksExtension] == nil {
		t.Errorf("-32021 data = %s, want requiredCapabilities.extensions[%s]", a.Error.Data, gateway.TasksExtension)
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		if a := rpc(t, url, m, map[string]any{"taskId": "gate-test", "inputResponses": map[string]any{}}, plain); a.Error == nil || a.Error.Code != -32021 {
			t.Errorf("%s from a non-declaring client = %+v, want -32021", m, a.Error)
		}
	}

	// A 2025-11-25 session: the call's result, the tool's error as it is.
	cs := connect(t, base, clientOpts{version: "2025-11-25"})
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_tk_failing_job", Arguments: map[string]any{}})
	if err != nil || !r.IsError || textOf(r) != "the job failed" {
		t.Errorf("failing_job over 2025-11-25 = %v, %v; want its isError result", r, err)
	}
	r, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_tk_slow_compute", Arguments: map[string]any{"seconds": 0.5, "label": "old"}})
	if err != nil || textOf(r) != "computed old after 0.5s" {
		t.Errorf("slow_compute over 2025-11-25 = %v, %v", r, err)
	}
}

// TestTaskVisibility: a task is its caller's, on its endpoint: another
// caller (the owner's token on the endpoint whose own token made it), or
// the same id on another endpoint, is told it does not exist; a task id
// altered by a byte is refused; an Mcp-Name header that does not name the
// task is refused with HTTP 400 and -32020, one left out is accepted.
func TestTaskVisibility(t *testing.T) {
	const owner, bToken = "owner-token-5e2a", "b-token-88c1"
	b := namedEndpoint("b", nil)
	b.AuthToken = bToken
	_, base := tasksGateway(t, &gateway.Options{Endpoints: []gateway.Endpoint{gateway.DefaultEndpoint, b}}, &gateway.HTTPOptions{Guard: guard.Options{AuthToken: owner}})
	bURL := base + "/e/b/mcp"
	asB, asOwner := []string{"Authorization", "Bearer " + bToken}, []string{"Authorization", "Bearer " + owner}

	id := createTask(t, bURL, "mcp_tk_slow_compute", map[string]any{"seconds": 60}, asB...)
	if a := rpc(t, bURL, "tasks/get", map[string]any{"taskId": id}, tasksCaps, asB...); a.Error != nil || a.Result["status"] != "working" {
		t.Errorf("tasks/get by its caller = %+v %v", a.Error, a.Result)
	}
	for name, c := range map[string]struct {
		url    string
		header []string
	}{
		"another caller":   {bURL, asOwner},
		"another endpoint": {base + "/mcp", asOwner},
	} {
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			if a := rpc(t, c.url, m, map[string]any{"taskId": id, "inputResponses": map[string]any{}}, tasksCaps, c.header...); a.Error == nil || a.Error.Code != -32602 {
				t.Errorf("%s by %s = %+v %v, want -32602", m, name, a.Error, a.Result)
			}
		}
	}
	altered := id[:len(id)-1] + string("AB"[strings.IndexByte("AB", id[len(id)-1])+1&1])
	if a := rpc(t, bURL, "tasks/get", map[string]any{"taskId": altered}, tasksCaps, asB...); a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("tasks/get of an altered id = %+v, want -32602", a.Error)
	}

	a := rpc(t, bURL, "tasks/get", map[string]any{"taskId": id}, tasksCaps, append(asB, "Mcp-Name", "sep-2663-wrong-task-id")...)
	if a.Status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32020 {
		t.Errorf("tasks/get with a mismatched Mcp-Name = %d %+v, want 400 -32020", a.Status, a.Error)
	}
	if a := rpc(t, bURL, "tasks/cancel", map[string]any{"taskId": id}, tasksCaps, append(asB, "Mcp-Name", "")...); a.Error != nil {
		t.Errorf("tasks/cancel without Mcp-Name = %+v, want it accepted", a.Error)
	}
	if res := awaitTask(t, bURL, id, "the cancelled task", tasktest.Terminal, asB...); res["status"] != "cancelled" {
		t.Errorf("task = %v, want cancelled", res)
	}
}

// TestTaskInterrupted: a task still working whose replica is gone (here:
// a gateway that stopped, and another reading the same store) is reported
// failed, interrupted, and never run again; a task that finished is read
// as it ended. Expired tasks are pruned.
func TestTaskInterrupted(t *testing.T) {
	// Replicas share the store and the key that signs task ids.
	store, key := newMemTasks(), []byte("a key every replica of the test has")
	g1, base1 := tasksGateway(t, &gateway.Options{Tasks: store, StateKey: key, Replica: "one"}, nil)
	id := createTask(t, base1+"/mcp", "mcp_tk_slow_compute", map[string]any{"seconds": 60})
	done := createTask(t, base1+"/mcp", "mcp_tk_slow_compute", map[string]any{"seconds": 0.3, "label": "kept"})
	awaitTask(t, base1+"/mcp", done, "the short task to end", tasktest.Terminal)
	// g1 stops without a word: its task's row still says working.
	g1.Close()
	if rec, _ := store.Task(context.Background(), id); rec.Status != "working" {
		t.Fatalf("after the stop, the row says %q", rec.Status)
	}

	_, base2 := tasksGateway(t, &gateway.Options{Tasks: store, StateKey: key, Replica: "two"}, nil)
	a := rpc(t, base2+"/mcp", "tasks/get", map[string]any{"taskId": id}, tasksCaps)
	e, _ := a.Result["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if a.Result["status"] != "failed" || e["code"] != float64(-32603) || data["switchboard/interrupted"] != true || !strings.Contains(e["message"].(string), "not repeated") {
		t.Errorf("interrupted task = %+v %v", a.Error, a.Result)
	}
	a = rpc(t, base2+"/mcp", "tasks/get", map[string]any{"taskId": done}, tasksCaps)
	if result, _ := a.Result["result"].(map[string]any); a.Result["status"] != "completed" || contentText(t, result) != "computed kept after 0.3s" {
		t.Errorf("finished task read by another gateway = %v", a.Result)
	}

	n, err := store.PruneTasks(context.Background(), time.Now().Add(2*time.Hour))
	if err != nil || n != 2 {
		t.Errorf("PruneTasks(in 2h) = %d, %v; want both tasks", n, err)
	}
	if a := rpc(t, base2+"/mcp", "tasks/get", map[string]any{"taskId": done}, tasksCaps); a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("a pruned task = %+v, want -32602", a.Error)
	}
}

// TestTaskAcrossReplicas: two replicas on one store. A task made through
// A is polled through B (from the row), and cancelled through B: the
// cancel is forwarded to A, which runs the call, and cancels it there.
// Once A is gone, B reports A's next task interrupted.
func TestTaskAcrossReplicas(t *testing.T) {
	store, key := newMemTasks(), []byte("a key every replica of the test has")
	var mu sync.Mutex
	addrs := map[string]string{}
	peers := func(_ context.Context, replica string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := addrs[replica]; ok {
			return a, nil
		}
		return "", errors.New("it has stopped")
	}
	ga, baseA := tasksGateway(t, &gateway.Options{Tasks: store, StateKey: key, Replica: "a", Peers: peers}, nil)
	_, baseB := tasksGateway(t, &gateway.Options{Tasks: store, StateKey: key, Replica: "b", Peers: peers}, nil)
	mu.Lock()
	addrs["a"], addrs["b"] = strings.TrimPrefix(baseA, "http://"), strings.TrimPrefix(baseB, "http://")
	mu.Unlock()

	id := createTask(t, baseA+"/mcp", "mcp_tk_slow_compute", map[string]any{"seconds": 60})
	if a := rpc(t, baseB+"/mcp", "tasks/get", map[string]any{"taskId": id}, tasksCaps); a.Error != nil || a.Result["status"] != "working" {
		t.Errorf("tasks/get through B = %+v %v, want working", a.Error, a.Result)
	}
	if a := rpc(t, baseB+"/mcp", "tasks/cancel", map[string]any{"taskId": id}, tasksCaps); a.Error != nil || a.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel through B = %+v %v", a.Error, a.Result)
	}
	if res := awaitTask(t, baseB+"/mcp", id, "the task cancelled through B", tasktest.Terminal); res["status"] != "cancelled" {
		t.Errorf("task = %v, want cancelled", res)
	}
	// A's call was cancelled: A holds no task.
	waitGoroutines(t, "gateway.(*Gateway).superviseTask", "A's task")

	id = createTask(t, baseA+"/mcp", "mcp_tk_slow_compute", map[string]any{"seconds": 60})
	mu.Lock()
	delete(addrs, "a")
	mu.Unlock()
	ga.Close()
	res := awaitTask(t, baseB+"/mcp", id, "A's task to be reported", tasktest.Terminal)
	if e, _ := res["error"].(map[string]any); res["status"] != "failed" || !strings.Contains(e["message"].(string), `replica "a" is gone`) {
		t.Errorf("A's task after A stopped = %v, want failed, interrupted", res)
	}
}

// TestTaskTTL: a task whose call outlives its TTL has the call cancelled
// and is written failed, saying so; past its TTL it is gone for clients
// (-32602) until pruned.
func TestTaskTTL(t *testing.T) {
	store := newMemTasks()
	_, base := tasksGateway(t, &gateway.Options{Tasks: store, TaskTTL: 700 * time.Millisecond}, nil)
	id := createTask(t, base+"/mcp", "mcp_tk_slow_compute", map[string]any{"seconds": 60})
	rec := wait.Within(t, 20*time.Second, "the task to end at its TTL", func() (gateway.TaskRecord, bool) {
		rec, err := store.Task(context.Background(), id)
		return rec, err == nil && gateway.TaskTerminal(rec.Status)
	})
	if rec.Status != "failed" || !strings.Contains(rec.StatusMessage, "time to live") {
		t.Errorf("task at its TTL = %s %q, want failed, naming task_ttl", rec.Status, rec.StatusMessage)
	}
	if a := rpc(t, base+"/mcp", "tasks/get", map[string]any{"taskId": id}, tasksCaps); a.Error == nil || a.Error.Code != -32602 || !strings.Contains(a.Error.Message, "expired") {
		t.Errorf("tasks/get past the TTL = %+v, want -32602 expired", a.Error)
	}
}
