package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

// BenchmarkTaskCall measures what issue 29 §3 asks: a trivial call (echo)
// made as a task and polled to completion, against the same call made
// directly, through the same gateway over Streamable HTTP (2026-07-28,
// stateless, one POST per request), its tasks kept in a SQLite state
// store:
//
//   - direct: tools/call without the tasks extension declared: the result;
//
//   - task: tools/call declaring it (echo's mode is "always": a task at
//     once, its row written), then tasks/get at once and again until the
//     task is completed, with its result (a real client waits
//     pollIntervalMs between polls; this measures the gateway's cost).
//
//     go test ./gateway -run '^$' -bench TaskCall -benchtime 2000x -count 5
//
//   - readonly-direct, readonly-task, readonly-durable: a read-only tool
//     (slow_lookup, answering at once) directly, as a task, and as a
//     durable task (a second gateway whose TaskJournal is a workflow
//     engine on the same SQLite file: each task is also a DBOS workflow
//     whose step follows the call).
//
// polls/op is the tasks/get requests a task took. See docs/performance.md,
// section Tasks.
func BenchmarkTaskCall(b *testing.B) {
	db := filepath.Join(b.TempDir(), "state.db")
	st, err := store.Open(context.Background(), db, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	srv := fixture(b, "fx", "-tasks-fixtures")
	srv.ToolTasks = map[string]string{"echo": config.TaskAlways, "slow_lookup": config.TaskAlways}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{srv}, nil, &gateway.Options{Tasks: daemon.TaskStore(st), TaskTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	hopts := &gateway.HTTPOptions{}
	hopts.Guard.Loopback = true
	ts := httptest.NewServer(g.Handler(hopts))
	b.Cleanup(func() {
		ts.Close()
		g.Close()
	})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(hc.CloseIdleConnections)
	url := ts.URL + "/mcp"
	args := map[string]any{"text": "hello"}

	// The same, durable: a second gateway whose tasks of idempotent
	// tools are the durable calls of a workflow engine on the same
	// database, its rows written through the engine's store (as serve's:
	// daemon/tasks.go).
	calls := &benchCalls{}
	e, err := workflow.New(ctx, &workflow.EngineOptions{Database: db, Calls: calls})
	if err != nil {
		b.Fatal(err)
	}
	dg, err := gateway.Start(ctx, []config.Server{srv}, nil, &gateway.Options{Tasks: daemon.TaskStore(e.Store()), TaskTTL: time.Hour, TaskJournal: daemon.TaskJournal(e)})
	if err != nil {
		b.Fatal(err)
	}
	calls.g = dg
	if err := e.Launch(ctx, dg.Host()); err != nil {
		b.Fatal(err)
	}
	dts := httptest.NewServer(dg.Handler(hopts))
	b.Cleanup(func() {
		dts.Close()
		dg.Close()
		e.Close()
	})
	durable := dts.URL + "/mcp"
	lookup := map[string]any{"seconds": 0, "label": "x"}

	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			res := benchRPC(b, hc, url, "tools/call", map[string]any{"name": "mcp_fx_echo", "arguments": args}, false)
			if res["resultType"] == "task" || res["content"] == nil {
				b.Fatalf("direct call: %v", res)
			}
		}
	})
	b.Run("task", func(b *testing.B) { benchTask(b, hc, url, "mcp_fx_echo", args) })
	// A read-only tool (slow_lookup, at once): directly, as a task that
	// is a row alone, and as a durable task.
	b.Run("readonly-direct", func(b *testing.B) {
		for b.Loop() {
			res := benchRPC(b, hc, durable, "tools/call", map[string]any{"name": "mcp_fx_slow_lookup", "arguments": lookup}, false)
			if res["resultType"] == "task" || res["content"] == nil {
				b.Fatalf("direct call: %v", res)
			}
		}
	})
	b.Run("readonly-task", func(b *testing.B) { benchTask(b, hc, url, "mcp_fx_slow_lookup", lookup) })
	b.Run("readonly-durable", func(b *testing.B) { benchTask(b, hc, durable, "mcp_fx_slow_lookup", lookup) })
}

// benchTask calls tool as a task, and polls it to completion.
func benchTask(b *testing.B, hc *http.Client, url, tool string, args map[string]any) {
	polls := 0
	for b.Loop() {
		res := benchRPC(b, hc, url, "tools/call", map[string]any{"name": tool, "arguments": args}, true)
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" {
			b.Fatalf("call as a task: %v", res)
		}
		for {
			polls++
			res = benchRPC(b, hc, url, "tasks/get", map[string]any{"taskId": id}, true)
			if res["status"] == gateway.TaskCompleted {
				break
			}
			if res["status"] != gateway.TaskWorking {
				b.Fatalf("tasks/get: %v", res)
			}
		}
		if res["result"] == nil {
			b.Fatalf("the completed task has no result: %v", res)
		}
	}
	b.ReportMetric(float64(polls)/float64(b.N), "polls/op")
}

// benchCalls is the daemon's taskCalls (daemon/tasks.go) over one
// gateway.
type benchCalls struct{ g *gateway.Gateway }

func (c *benchCalls) Follow(ctx context.Context, id string) (bool, error) {
	return c.g.FollowTask(ctx, id)
}

func (c *benchCalls) Recover(ctx context.Context, dc workflow.DurableCall, again bool) error {
	return c.g.RecoverTask(ctx, dc.ID, dc.Tool, json.RawMessage(dc.Arguments), again)
}

// benchRPC POSTs one stateless 2026-07-28 request through hc, declaring
// the tasks extension when tasks, and returns its result.
func benchRPC(b *testing.B, hc *http.Client, url, method string, params map[string]any, tasks bool) map[string]any {
	var caps map[string]any
	if tasks {
		caps = map[string]any{"extensions": map[string]any{gateway.TasksExtension: map[string]any{}}}
	}
	a := tasktest.Do(b, hc, url, method, params, caps)
	if a.Error != nil {
		b.Fatalf("%s: %d %+v", method, a.Status, a.Error)
	}
	return a.Result
}
