package store_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
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

// testTaskHistory: a task's history has the status it was made in and
// each change after (a write in the same status adds none), as another
// store reads it; it keeps the first and the newest MaxTaskHistory; two
// stores changing one task at once lose none of their changes.
func testTaskHistory(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	db := newDB(t)
	a, b := open(t, db), open(t, db)
	t0 := time.UnixMilli(time.Now().UnixMilli())
	task := store.Task{ID: "sbt1.h", Caller: "anonymous", Server: "tk", Tool: "ask", Status: "working",
		Created: t0, Updated: t0, TTL: time.Hour, Owner: "r"}
	if err := a.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		status, message string
		at              time.Duration
	}{
		{"input_required", "waiting for an answer", time.Second},
		{"input_required", "still waiting", 2 * time.Second},
		{"working", "", 3 * time.Second},
		{"completed", "", 4 * time.Second},
	}
	for i, st := range steps {
		upd := task
		upd.Status, upd.StatusMessage, upd.Updated = st.status, st.message, t0.Add(st.at)
		s := a
		if i%2 == 1 {
			s = b
		}
		if wrote, err := s.UpdateTask(ctx, upd); err != nil || !wrote {
			t.Fatalf("UpdateTask(%s) = %v, %v", st.status, wrote, err)
		}
	}
	got, err := b.Task(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var hist []string
	for _, c := range got.History {
		hist = append(hist, fmt.Sprintf("%s@%s:%s", c.Status, c.At.Sub(t0), c.Message))
	}
	if got, want := strings.Join(hist, " "), "working@0s: input_required@1s:waiting for an answer working@3s: completed@4s:"; got != want {
		t.Errorf("History = %q, want %q", got, want)
	}
	if ts, _, err := a.ListTasks(ctx, store.TaskFilter{}); err != nil || len(ts) != 1 || ts[0].History != nil {
		t.Errorf("ListTasks = %+v, %v; want the task without its history", ts, err)
	}

	// The bound: the first and the newest.
	long := task
	long.ID = "sbt1.long"
	if err := a.CreateTask(ctx, long); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= store.MaxTaskHistory+8; i++ {
		upd := long
		upd.Status, upd.StatusMessage, upd.Updated = []string{"working", "input_required"}[i%2], strings.Repeat("m", 300)+strconv.Itoa(i), t0.Add(time.Duration(i)*time.Second)
		if wrote, err := b.UpdateTask(ctx, upd); err != nil || !wrote {
			t.Fatalf("UpdateTask %d = %v, %v", i, wrote, err)
		}
	}
	got, _ = a.Task(ctx, long.ID)
	if n := len(got.History); n != store.MaxTaskHistory {
		t.Fatalf("History of %d changes has %d entries, want %d", store.MaxTaskHistory+9, n, store.MaxTaskHistory)
	}
	if first, last := got.History[0], got.History[store.MaxTaskHistory-1]; !first.At.Equal(t0) || !last.At.Equal(t0.Add(time.Duration(store.MaxTaskHistory+8)*time.Second)) {
		t.Errorf("History runs from %v to %v, want the first (%v) and the newest", first.At, last.At, t0)
	}
	if m := got.History[1].Message; len(m) > 260 || !strings.HasPrefix(m, "mmm") {
		t.Errorf("an entry's message has %d bytes, want it cut at 256", len(m))
	}

	// Two writers at once: each change is a status of its own, and every
	// one is on the history.
	race := task
	race.ID = "sbt1.race"
	if err := a.CreateTask(ctx, race); err != nil {
		t.Fatal(err)
	}
	const perWriter = 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*perWriter)
	for w, s := range []*store.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				upd := race
				upd.Status, upd.Updated = fmt.Sprintf("s%d-%d", w, i), time.UnixMilli(time.Now().UnixMilli())
				if wrote, err := s.UpdateTask(ctx, upd); err != nil || !wrote {
					errs <- fmt.Errorf("writer %d, change %d: %v, %v", w, i, wrote, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, _ = a.Task(ctx, race.ID)
	seen := map[string]bool{}
	for _, c := range got.History {
		seen[c.Status] = true
	}
	for w := range 2 {
		for i := range perWriter {
			if s := fmt.Sprintf("s%d-%d", w, i); !seen[s] {
				t.Errorf("concurrent writers: change %s is not on the history (%d entries)", s, len(got.History))
			}
		}
	}
}
