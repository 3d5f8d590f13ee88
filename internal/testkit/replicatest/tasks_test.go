package replicatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// tasksServer is a server of the tasks fixtures whose slow_compute and
// slow_lookup (read-only) are tasks from the start (the tasks extension,
// SEP-2663), appended to the replicas' configuration, its calls logged
// with the other fixture's.
const tasksServer = `
[[mcp_servers]]
id = "tk"
command = %q
args = ["-tasks-fixtures", "-call-log", %q]
tool_tasks = { slow_compute = "always", slow_lookup = "always" }
`

// interruptedTimeout bounds the wait for a task whose replica was killed
// to be reported interrupted by another: the dead replica counts as alive
// until 30 s after its last heartbeat (daemon's replicaExpiry, heartbeats
// every 10 s), so 20 to 30 s after the kill.
const interruptedTimeout = 90 * time.Second

// TestTaskOnOtherReplica: issue 29 §3 on two `switchboard serve` replicas
// on one PostgreSQL. A task made through replica A is polled to its
// result through replica B; a task of A's cancelled through B (by its
// client's tasks/cancel, and by the owner's POST /api/v1/tasks/{id}/cancel)
// is cancelled on A, down to its upstream call; and a task running on A when
// A is killed (SIGKILL) is reported by B failed, interrupted (-32603,
// data switchboard/interrupted), once A's liveness has expired, and the
// same by A restarted.
func TestTaskOnOtherReplica(t *testing.T) {
	// -v: the fixture's stderr (its line for a cancelled call) is logged
	// at info.
	c := newCluster(t, clusterOptions{serveArgs: []string{"-v"}})
	cfg := filepath.Join(c.dir, "switchboard.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	write(t, cfg, string(b)+fmt.Sprintf(tasksServer, c.fixture, c.callLog))
	c.startReplicas(t, 2)
	a, bb := c.replicas[0], c.replicas[1]

	// Polled to completion through the other replica.
	id := createTask(t, a, map[string]any{"seconds": 2, "label": "over there"})
	res := awaitTask(t, bb, id, "the task made on "+a.name+" to complete, read on "+bb.name, 30*time.Second, tasktest.Terminal)
	if res["status"] != "completed" || tasktest.ResultText(res) != "computed over there after 2s" {
		t.Errorf("the task made on %s, read on %s: %v; want completed with the tool's result", a.name, bb.name, res)
	}

	// Cancelled through the other replica: the cancel is forwarded to A,
	// which cancels the call upstream.
	id = createTask(t, a, map[string]any{"seconds": 60, "label": "cancelled"})
	if got := taskRPC(t, bb, "tasks/get", id); got.Error != nil || got.Result["status"] != "working" {
		t.Fatalf("tasks/get on %s of a task running on %s: %+v %v; want working", bb.name, a.name, got.Error, got.Result)
	}
	if got := taskRPC(t, bb, "tasks/cancel", id); got.Error != nil || got.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel on %s of a task running on %s: %+v %v", bb.name, a.name, got.Error, got.Result)
	}
	res = awaitTask(t, bb, id, "the task cancelled through "+bb.name, 30*time.Second, tasktest.Terminal)
	if res["status"] != "cancelled" {
		t.Errorf("the task cancelled through %s: %v; want cancelled", bb.name, res)
	}
	wait.For(t, a.name+"'s upstream call to end cancelled", func() (string, bool) {
		out := a.out.String()
		return out, strings.Contains(out, "slow_compute: cancelled: context canceled")
	})

	// Cancelled by the owner through the other replica's REST API: the
	// request is forwarded to A, which cancels the call, and answers.
	id = createTask(t, a, map[string]any{"seconds": 60, "label": "cancelled by the owner"})
	status, answer := apiCall(t, "POST", bb.url+"/api/v1/tasks/"+id+"/cancel", "")
	var cancelled struct{ Status string }
	if err := json.Unmarshal(answer, &cancelled); status != http.StatusOK || err != nil || cancelled.Status != "cancelled" {
		t.Fatalf("POST /api/v1/tasks/{id}/cancel on %s of a task running on %s: %d %s; want 200, cancelled", bb.name, a.name, status, answer)
	}
	wait.For(t, a.name+"'s upstream call, cancelled through "+bb.name+"'s API, to end", func() (string, bool) {
		out := a.out.String()
		return out, strings.Count(out, "slow_compute: cancelled: context canceled") >= 2
	})

	// Killed while it runs: reported interrupted, not repeated; the
	// task of a read-only tool is called again by B, once, and ends
	// completed with its result.
	id = createTask(t, a, map[string]any{"seconds": 60, "label": "killed"})
	lookup := createTaskOf(t, a, "mcp_tk_slow_lookup", map[string]any{"seconds": 3, "label": "again"})
	if got := taskRPC(t, bb, "tasks/get", id); got.Error != nil || got.Result["status"] != "working" {
		t.Fatalf("tasks/get on %s of a task running on %s: %+v %v; want working", bb.name, a.name, got.Error, got.Result)
	}
	wait.For(t, "slow_lookup's call to reach the server", func() (string, bool) {
		b, _ := os.ReadFile(c.callLog)
		return string(b), strings.Count(string(b), "slow_lookup") == 1
	})
	a.kill(t)
	killed := time.Now()
	res = awaitTask(t, bb, id, fmt.Sprintf("the task of %s, killed, to be reported by %s", a.name, bb.name), interruptedTimeout, tasktest.Terminal)
	checkInterrupted(t, bb.name, res)
	t.Logf("%s killed; %s reported its task interrupted %v later", a.name, bb.name, time.Since(killed).Round(time.Millisecond))
	res = awaitTask(t, bb, lookup, fmt.Sprintf("the read-only task of %s, killed, to be called again by %s", a.name, bb.name), interruptedTimeout, tasktest.Terminal)
	if res["status"] != "completed" || tasktest.ResultText(res) != "looked up again after 3s" {
		t.Errorf("the read-only task of %s, killed, read on %s: %v; want completed with its result", a.name, bb.name, res)
	}
	t.Logf("%s killed; %s completed its read-only task %v later", a.name, bb.name, time.Since(killed).Round(time.Millisecond))
	if b, _ := os.ReadFile(c.callLog); strings.Count(string(b), "slow_lookup") != 2 || strings.Count(string(b), `"label":"killed"`) != 1 {
		t.Errorf("the calls: %s; want slow_lookup twice (before the kill, and by recovery) and the killed slow_compute once", b)
	}

	// A restarted (a new replica on the same configuration) reads it so.
	again := c.start(t, a.name)
	again.awaitReady(t)
	got := taskRPC(t, again, "tasks/get", id)
	if got.Error != nil {
		t.Fatalf("tasks/get on %s restarted: %+v", a.name, got.Error)
	}
	checkInterrupted(t, a.name+" restarted", got.Result)
}

// checkInterrupted checks that a tasks/get answer, read on who, is of a
// task failed because its call was interrupted in flight.
func checkInterrupted(t *testing.T, who string, res map[string]any) {
	t.Helper()
	e, _ := res["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	msg, _ := e["message"].(string)
	if res["status"] != "failed" || e["code"] != float64(-32603) || data["switchboard/interrupted"] != true || !strings.Contains(msg, "not repeated") {
		t.Errorf("the killed replica's task, read on %s: %v; want failed, -32603, data switchboard/interrupted", who, res)
	}
}

// taskRPC sends tasks/get, tasks/update or tasks/cancel of task id to r's
// /mcp, with the gateway's token.
func taskRPC(t *testing.T, r *replica, method, id string) tasktest.Answer {
	t.Helper()
	return tasktest.Post(t, r.url+"/mcp", method, map[string]any{"taskId": id}, tasktest.Caps, "Authorization", "Bearer "+token)
}

// createTask calls the tasks fixture's slow_compute on r, which must
// answer with a task, and returns the task's id.
func createTask(t *testing.T, r *replica, args map[string]any) string {
	t.Helper()
	return createTaskOf(t, r, "mcp_tk_slow_compute", args)
}

// createTaskOf calls tool on r, which must answer with a task, and
// returns the task's id.
func createTaskOf(t *testing.T, r *replica, tool string, args map[string]any) string {
	t.Helper()
	id, _ := tasktest.Create(t, r.url+"/mcp", tool, args, "Authorization", "Bearer "+token)
	return id
}

// awaitTask polls tasks/get of task id on r until cond holds of its
// answer, for up to bound.
func awaitTask(t *testing.T, r *replica, id, what string, bound time.Duration, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	return tasktest.Await(t, r.url+"/mcp", id, what, bound, cond, "Authorization", "Bearer "+token)
}
