package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/store"
)

// testTasks: a task written by one store is read by another on the same
// database; a terminal task is never written again; PruneTasks removes
// the tasks past their TTL at the time it is given, and no other.
func testTasks(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	db := newDB(t)
	a, b := open(t, db), open(t, db)
	now := time.UnixMilli(time.Now().UnixMilli())
	task := store.Task{ID: "sbt1.x.y", Caller: "anonymous", Endpoint: "b", Server: "tk", Tool: "slow", Status: "working",
		Created: now, Updated: now, TTL: time.Hour, Owner: "replica-1"}
	if err := a.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	got, err := b.Task(ctx, task.ID)
	if err != nil || got.Status != "working" || got.Caller != "anonymous" || got.Endpoint != "b" || got.Owner != "replica-1" ||
		!got.Created.Equal(now) || got.TTL != time.Hour || got.Result != nil {
		t.Fatalf("Task = %+v, %v; want %+v", got, err, task)
	}
	if _, err := b.Task(ctx, "sbt1.none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task(unknown) = %v, want ErrNotFound", err)
	}

	upd := task
	upd.Status, upd.StatusMessage, upd.InputRequests = "input_required", "waiting", []byte(`{"k":{"method":"elicitation/create"}}`)
	upd.UpstreamTask = "upstream-1"
	if wrote, err := b.UpdateTask(ctx, upd); err != nil || !wrote {
		t.Fatalf("UpdateTask(input_required) = %v, %v", wrote, err)
	}
	if got, _ := a.Task(ctx, task.ID); got.UpstreamTask != "upstream-1" {
		t.Errorf("after UpdateTask, upstream task = %q, want upstream-1", got.UpstreamTask)
	}
	// A replica that recovered the task's call owns it; "" keeps the
	// owner.
	upd.Owner = "replica-2"
	if wrote, err := b.UpdateTask(ctx, upd); err != nil || !wrote {
		t.Fatalf("UpdateTask(owner) = %v, %v", wrote, err)
	}
	upd.Owner = ""
	if wrote, err := a.UpdateTask(ctx, upd); err != nil || !wrote {
		t.Fatalf("UpdateTask(no owner) = %v, %v", wrote, err)
	}
	if got, _ := a.Task(ctx, task.ID); got.Owner != "replica-2" {
		t.Errorf("after UpdateTask with owner replica-2, then none: owner %q, want replica-2", got.Owner)
	}
	upd.Status, upd.InputRequests, upd.Result = "completed", nil, []byte(`{"content":[]}`)
	if wrote, err := a.UpdateTask(ctx, upd); err != nil || !wrote {
		t.Fatalf("UpdateTask(completed) = %v, %v", wrote, err)
	}
	late := upd
	late.Status, late.Result, late.Error = "failed", nil, []byte(`{"code":-32603}`)
	if wrote, err := b.UpdateTask(ctx, late); err != nil || wrote {
		t.Errorf("UpdateTask of an ended task = %v, %v; want not written", wrote, err)
	}
	got, _ = a.Task(ctx, task.ID)
	if got.Status != "completed" || string(got.Result) != `{"content":[]}` || got.InputRequests != nil || got.Error != nil {
		t.Errorf("after the updates, Task = %+v", got)
	}

	short := task
	short.ID, short.TTL = "sbt1.short", time.Minute
	if err := a.CreateTask(ctx, short); err != nil {
		t.Fatal(err)
	}
	if n, err := b.PruneTasks(ctx, now.Add(30*time.Second)); err != nil || n != 0 {
		t.Errorf("PruneTasks(+30s) = %d, %v; want 0", n, err)
	}
	if n, err := b.PruneTasks(ctx, now.Add(2*time.Minute)); err != nil || n != 1 {
		t.Errorf("PruneTasks(+2m) = %d, %v; want 1", n, err)
	}
	if _, err := a.Task(ctx, short.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a pruned task: %v, want ErrNotFound", err)
	}
	if _, err := a.Task(ctx, task.ID); err != nil {
		t.Errorf("a task within its TTL was pruned: %v", err)
	}
}

// testTaskList: ListTasks pages newest first by its cursor, filters by
// status and servers, reads no result, and refuses a bad limit or cursor.
func testTaskList(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	s := open(t, newDB(t))
	base := time.UnixMilli(time.Now().UnixMilli())
	// Five tasks, two of them created in the same millisecond (the id
	// orders those).
	for i, c := range []struct {
		id, server, status string
		at                 time.Duration
	}{
		{"t1", "a", "completed", 0}, {"t2", "b", "working", time.Second}, {"t3", "a", "working", 2 * time.Second},
		{"t4", "a", "failed", 2 * time.Second}, {"t5", "b", "cancelled", 3 * time.Second},
	} {
		tk := store.Task{ID: c.id, Caller: "anonymous", Server: c.server, Tool: "slow", Status: c.status,
			Created: base.Add(c.at), Updated: base.Add(c.at), TTL: time.Hour, Owner: "r"}
		if c.status == "completed" {
			tk.Result = []byte(`{"content":[]}`)
		}
		if err := s.CreateTask(ctx, tk); err != nil {
			t.Fatalf("CreateTask %d: %v", i, err)
		}
	}
	ids := func(ts []store.Task) string {
		var out []string
		for _, tk := range ts {
			if tk.Result != nil || tk.Error != nil || tk.InputRequests != nil {
				t.Errorf("ListTasks read task %s's outcome: %+v", tk.ID, tk)
			}
			out = append(out, tk.ID)
		}
		return strings.Join(out, ",")
	}
	var pages []string
	cursor := ""
	for range 10 {
		ts, next, err := s.ListTasks(ctx, store.TaskFilter{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, ids(ts))
		if cursor = next; cursor == "" {
			break
		}
	}
	if got, want := strings.Join(pages, " | "), "t5,t4 | t3,t2 | t1"; got != want {
		t.Errorf("ListTasks pages = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		f    store.TaskFilter
		want string
	}{
		{store.TaskFilter{}, "t5,t4,t3,t2,t1"},
		{store.TaskFilter{Status: "working"}, "t3,t2"},
		{store.TaskFilter{Servers: []string{"b"}}, "t5,t2"},
		{store.TaskFilter{Servers: []string{"a"}, Status: "failed"}, "t4"},
		{store.TaskFilter{Servers: []string{}}, ""},
	} {
		ts, next, err := s.ListTasks(ctx, tc.f)
		if err != nil || ids(ts) != tc.want || next != "" {
			t.Errorf("ListTasks(%+v) = %q, %q, %v; want %q", tc.f, ids(ts), next, err, tc.want)
		}
	}
	for _, f := range []store.TaskFilter{{Limit: store.MaxTaskLimit + 1}, {Limit: -1}, {Cursor: "nonsense"}} {
		if _, _, err := s.ListTasks(ctx, f); err == nil || !strings.Contains(err.Error(), "listing tasks") {
			t.Errorf("ListTasks(%+v) = %v, want an error", f, err)
		}
	}
}
