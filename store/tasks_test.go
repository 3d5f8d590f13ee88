package store_test

import (
	"context"
	"errors"
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
	if wrote, err := b.UpdateTask(ctx, upd); err != nil || !wrote {
		t.Fatalf("UpdateTask(input_required) = %v, %v", wrote, err)
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
