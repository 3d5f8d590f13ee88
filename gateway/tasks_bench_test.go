package gateway_test

import (
	"context"
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
// polls/op is the tasks/get requests a task took. See docs/performance.md,
// section Tasks.
func BenchmarkTaskCall(b *testing.B) {
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "state.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	srv := fixture(b, "fx")
	srv.ToolTasks = map[string]string{"echo": config.TaskAlways}
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

	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			res := benchRPC(b, hc, url, "tools/call", map[string]any{"name": "mcp_fx_echo", "arguments": args}, false)
			if res["resultType"] == "task" || res["content"] == nil {
				b.Fatalf("direct call: %v", res)
			}
		}
	})
	b.Run("task", func(b *testing.B) {
		polls := 0
		for b.Loop() {
			res := benchRPC(b, hc, url, "tools/call", map[string]any{"name": "mcp_fx_echo", "arguments": args}, true)
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
	})
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
