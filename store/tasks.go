package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tasks of the MCP tasks extension, as the gateway runs them
// (gateway.TaskStore; the daemon adapts): one row per task in
// switchboard_tasks, written when the task is made and at each change of
// its status, read by tasks/get on any replica. A terminal row (completed,
// failed, cancelled) is never written again; every row goes when its
// TTL from its creation is over (PruneTasks). Each row keeps its status
// history (History): the status it was made in and each change after,
// at most MaxTaskHistory of them.

// A Task is one row of switchboard_tasks.
type Task struct {
	ID, Caller, Endpoint, Server, Tool string
	Status, StatusMessage              string
	// InputRequests, Result and Error are JSON, nil when empty.
	InputRequests, Result, Error []byte
	Created, Updated             time.Time
	TTL                          time.Duration
	// Owner is the replica that runs the task's call.
	Owner string
	// UpstreamTask is the id of the upstream's own task the call follows,
	// "" when none: meaningful only on the connection of Owner's host to
	// Server that made it.
	UpstreamTask string
	// History is the task's statuses, oldest first: the one it was made
	// in, then each change (UpdateTask), at most MaxTaskHistory (the
	// first and the newest); nil for a task made before the store kept
	// them. Task reads it, ListTasks does not; CreateTask and UpdateTask
	// make it themselves.
	History []TaskStatusChange
}

// A TaskStatusChange is when a task came to a status.
type TaskStatusChange struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
	// Message is the task's status message then, at most
	// maxTaskHistoryMessage bytes.
	Message string `json:"message,omitempty"`
}

// MaxTaskHistory bounds a task's History: past it, the oldest changes
// but the first go.
const MaxTaskHistory = 32

// maxTaskHistoryMessage bounds the status message an entry of History
// keeps (the task's own is whole).
const maxTaskHistoryMessage = 256

// taskChange is the entry of History for t's status.
func taskChange(t Task) TaskStatusChange {
	msg := t.StatusMessage
	if len(msg) > maxTaskHistoryMessage {
		msg = strings.ToValidUTF8(msg[:maxTaskHistoryMessage], "") + "…"
	}
	return TaskStatusChange{Status: t.Status, At: t.Updated.UTC(), Message: msg}
}

// appendTaskHistory is history (as stored) with c after it, bounded by
// MaxTaskHistory.
func appendTaskHistory(history string, c TaskStatusChange) (string, error) {
	var h []TaskStatusChange
	if history != "" {
		if err := json.Unmarshal([]byte(history), &h); err != nil {
			return "", fmt.Errorf("reading the task's history: %w", err)
		}
	}
	h = append(h, c)
	if len(h) > MaxTaskHistory {
		h = append(h[:1], h[len(h)-MaxTaskHistory+1:]...)
	}
	b, err := json.Marshal(h)
	return string(b), err
}

// CreateTask stores a new task.
// (its History the one status it is in: t.History is not read).
func (s *Store) CreateTask(ctx context.Context, t Task) error {
	history, err := appendTaskHistory("", taskChange(t))
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO switchboard_tasks
		(id, caller, endpoint, server, tool, status, status_message, input_requests, result, error, created_at, updated_at, ttl_ms, owner, upstream_task, history)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		t.ID, t.Caller, t.Endpoint, t.Server, t.Tool, t.Status, t.StatusMessage, string(t.InputRequests), string(t.Result), string(t.Error),
		millis(t.Created), millis(t.Updated), t.TTL.Milliseconds(), t.Owner, t.UpstreamTask, history); err != nil {
		return s.errf(err, "storing task of tool %q of server %q", t.Tool, t.Server)
	}
	return nil
}

// Task returns task id, or ErrNotFound.
func (s *Store) Task(ctx context.Context, id string) (Task, error) {
	t := Task{ID: id}
	var inputs, result, terr, history string
	var created, updated, ttl int64
	err := s.db.QueryRowContext(ctx, `SELECT caller, endpoint, server, tool, status, status_message, input_requests, result, error, created_at, updated_at, ttl_ms, owner, upstream_task, history
		FROM switchboard_tasks WHERE id = $1`, id).Scan(&t.Caller, &t.Endpoint, &t.Server, &t.Tool, &t.Status, &t.StatusMessage,
		&inputs, &result, &terr, &created, &updated, &ttl, &t.Owner, &t.UpstreamTask, &history)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("task: %w", ErrNotFound)
	}
	if err != nil {
		return Task{}, s.errf(err, "reading a task")
	}
	t.InputRequests, t.Result, t.Error = nonEmpty(inputs), nonEmpty(result), nonEmpty(terr)
	t.Created, t.Updated, t.TTL = fromMillis(created), fromMillis(updated), time.Duration(ttl)*time.Millisecond
	if history != "" {
		if err := json.Unmarshal([]byte(history), &t.History); err != nil {
			return Task{}, fmt.Errorf("task %s: reading its history: %w", id, err)
		}
	}
	return t, nil
}

func nonEmpty(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// UpdateTask writes t's status, status message, input requests, result,
// error, upstream task, updated time and owner ("" keeps it: a replica
// that recovered the task's call owns it then) to task t.ID, unless the
// task has ended already; it reports whether it wrote. A change of status
// goes on the task's History (at t.Updated).
//
// The history is read and written back on the condition that neither it
// nor the status changed in between (another replica's write): when one
// did, UpdateTask reads again, at most maxTaskUpdateTries times.
func (s *Store) UpdateTask(ctx context.Context, t Task) (bool, error) {
	for range maxTaskUpdateTries {
		var status, history string
		err := s.db.QueryRowContext(ctx, `SELECT status, history FROM switchboard_tasks WHERE id = $1`, t.ID).Scan(&status, &history)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, s.errf(err, "writing a task")
		}
		if taskEnded(status) {
			return false, nil
		}
		newHistory := history
		if status != t.Status {
			if newHistory, err = appendTaskHistory(history, taskChange(t)); err != nil {
				return false, fmt.Errorf("task %s: %w", t.ID, err)
			}
		}
		res, err := s.db.ExecContext(ctx, `UPDATE switchboard_tasks SET status = $1, status_message = $2, input_requests = $3, result = $4, error = $5, updated_at = $6, upstream_task = $7,
			owner = COALESCE(NULLIF($9, ''), owner), history = $10
			WHERE id = $8 AND status = $11 AND history = $12`,
			t.Status, t.StatusMessage, string(t.InputRequests), string(t.Result), string(t.Error), millis(t.Updated), t.UpstreamTask, t.ID, t.Owner,
			newHistory, status, history)
		if err != nil {
			return false, s.errf(err, "writing a task")
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, s.errf(err, "writing a task")
		}
		if n > 0 {
			return true, nil
		}
	}
	return false, fmt.Errorf("writing task %s: its status changed under each of %d tries", t.ID, maxTaskUpdateTries)
}

// maxTaskUpdateTries bounds the tries of UpdateTask when other writes to
// the task come between its read and its write.
const maxTaskUpdateTries = 16

// taskEnded reports whether status is one a task ends in.
func taskEnded(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// PruneTasks removes the tasks whose TTL from their creation is over at
// now, and returns how many it removed.
func (s *Store) PruneTasks(ctx context.Context, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM switchboard_tasks WHERE created_at + ttl_ms < $1`, millis(now))
	if err != nil {
		return 0, s.errf(err, "removing expired tasks")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.errf(err, "removing expired tasks")
	}
	return int(n), nil
}

// DefaultTaskLimit and MaxTaskLimit bound a page of ListTasks: each task
// a row read without its result, a page of them one answer of the API.
const (
	DefaultTaskLimit = 100
	MaxTaskLimit     = 1000
)

// A TaskFilter chooses the tasks ListTasks lists.
type TaskFilter struct {
	// Status is one status, "" any.
	Status string
	// Servers, when not nil, are the only servers whose tasks are listed
	// (empty: none).
	Servers []string
	// Cursor is where the previous page ended (its next cursor); "" the
	// newest task.
	Cursor string
	// Limit bounds the page: 0 means DefaultTaskLimit, more than
	// MaxTaskLimit is an error.
	Limit int
}

// ListTasks lists tasks newest first (by creation, then id), one page of
// at most f.Limit, without their input requests, result and error (Task
// has them); next is the cursor of the page after, "" after the last.
func (s *Store) ListTasks(ctx context.Context, f TaskFilter) (tasks []Task, next string, err error) {
	limit := f.Limit
	switch {
	case limit == 0:
		limit = DefaultTaskLimit
	case limit < 0 || limit > MaxTaskLimit:
		return nil, "", fmt.Errorf("listing tasks: limit %d: must be from 1 to %d", f.Limit, MaxTaskLimit)
	}
	if f.Servers != nil && len(f.Servers) == 0 {
		return []Task{}, "", nil
	}
	where, args := []string{"TRUE"}, []any{}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Status != "" {
		where = append(where, "status = "+arg(f.Status))
	}
	if f.Servers != nil {
		ph := make([]string, len(f.Servers))
		for i, sv := range f.Servers {
			ph[i] = arg(sv)
		}
		where = append(where, "server IN ("+strings.Join(ph, ", ")+")")
	}
	if f.Cursor != "" {
		created, id, ok := parseTaskCursor(f.Cursor)
		if !ok {
			return nil, "", fmt.Errorf("listing tasks: cursor %q: not one ListTasks gave", f.Cursor)
		}
		c := arg(created)
		where = append(where, "(created_at < "+c+" OR (created_at = "+c+" AND id < "+arg(id)+"))")
	}
	// One more than the page tells whether there is a next one.
	rows, err := s.db.QueryContext(ctx, `SELECT id, caller, endpoint, server, tool, status, status_message, created_at, updated_at, ttl_ms, owner
		FROM switchboard_tasks WHERE `+strings.Join(where, " AND ")+` ORDER BY created_at DESC, id DESC LIMIT `+arg(limit+1), args...)
	if err != nil {
		return nil, "", s.errf(err, "listing tasks")
	}
	defer rows.Close()
	tasks = []Task{}
	for rows.Next() {
		var t Task
		var created, updated, ttl int64
		if err := rows.Scan(&t.ID, &t.Caller, &t.Endpoint, &t.Server, &t.Tool, &t.Status, &t.StatusMessage, &created, &updated, &ttl, &t.Owner); err != nil {
			return nil, "", s.errf(err, "listing tasks")
		}
		t.Created, t.Updated, t.TTL = fromMillis(created), fromMillis(updated), time.Duration(ttl)*time.Millisecond
		tasks = append(tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, "", s.errf(err, "listing tasks")
	}
	if len(tasks) > limit {
		tasks = tasks[:limit]
		next = TaskCursor(tasks[limit-1])
	}
	return tasks, next, nil
}

// TaskCursor is the cursor of the page after one that ends with t, as
// ListTasks gives it; TaskAfter tells whether t is on a page after
// cursor. A face that lists other tasks beside the store's (the runs that
// are tasks) pages them with these, in the same order.
func TaskCursor(t Task) string { return strconv.FormatInt(millis(t.Created), 10) + "~" + t.ID }

// TaskAfter reports whether t comes after cursor (a TaskCursor) in the
// order of ListTasks: newest first, then by id; false for a cursor
// ListTasks did not give.
func TaskAfter(cursor string, t Task) bool {
	created, id, ok := parseTaskCursor(cursor)
	if !ok {
		return false
	}
	ms := millis(t.Created)
	return ms < created || (ms == created && t.ID < id)
}

// parseTaskCursor reads a cursor of ListTasks: the creation (Unix ms) and
// id of the last task of a page.
func parseTaskCursor(c string) (created int64, id string, ok bool) {
	ms, id, ok := strings.Cut(c, "~")
	if !ok || id == "" {
		return 0, "", false
	}
	created, err := strconv.ParseInt(ms, 10, 64)
	return created, id, err == nil
}
