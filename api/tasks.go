package api

// The gateway's tasks (the MCP tasks extension, issue 29), as the owner
// sees them: a page of them newest first, one with its outcome, one
// cancelled. The rows are the state database's (switchboard_tasks),
// redacted as the gateway stored them; a caller narrowed by
// [[gateway.auth.policy]] sees the tasks of the servers its grant covers,
// and no other (404, as for a task that is not there). Beside them are
// the published workflows' runs that declaring clients' calls made their
// tasks (sbr1. ids, "run" naming the run), shown whole as runs are.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/switchboardmcp/switchboard/daemon"
)

// TaskJSON is a task as the API shows it. Fields may be added, never
// changed in meaning.
type TaskJSON struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// StatusMessage says why a task failed or what it waits for.
	StatusMessage string `json:"status_message,omitempty"`
	Server        string `json:"server"`
	Tool          string `json:"tool"`
	// Caller is who made it (oauth:USER, session:…, anonymous), Endpoint
	// the named endpoint it was made on ("" the default one).
	Caller   string    `json:"caller"`
	Endpoint string    `json:"endpoint,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	// TTLMs is how long the task is kept from Created.
	TTLMs int64 `json:"ttl_ms"`
	// Replica is the gateway replica that runs its call.
	Replica string `json:"replica,omitempty"`
	// Run is the workflow run the task is (GET /api/v1/runs/{run}): a
	// published workflow called as a task by a declaring client; its
	// TTLMs is 0, as a run is kept until the engine prunes it.
	Run string `json:"run,omitempty"`
	// UpstreamTask is the id of the upstream's own task that its call
	// follows, when the upstream made one (on GET /tasks/{id}).
	UpstreamTask string `json:"upstream_task,omitempty"`
	// InputRequests, Result and Error are on GET /tasks/{id} only, as the
	// gateway stored them (redacted): the questions outstanding
	// (input_required), the tool's result (completed), the JSON-RPC error
	// (failed).
	InputRequests json.RawMessage `json:"input_requests,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Error         json.RawMessage `json:"error,omitempty"`
	// History is the task's statuses, oldest first (at most
	// store.MaxTaskHistory: the first and the newest), on GET /tasks/{id}
	// only; absent for a run (its events are GET /runs/{id}/events) and a
	// task made before they were kept.
	History []TaskStatusJSON `json:"history,omitempty"`
}

// TaskStatusJSON is when a task came to a status.
type TaskStatusJSON struct {
	Status  string    `json:"status"`
	At      time.Time `json:"at"`
	Message string    `json:"message,omitempty"`
}

func toTaskJSON(t daemon.Task) TaskJSON {
	tj := TaskJSON{ID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage, Server: t.Server, Tool: t.Tool,
		Caller: t.Caller, Endpoint: t.Endpoint, Created: t.Created.UTC(), Updated: t.Updated.UTC(), TTLMs: t.TTL.Milliseconds(),
		Replica: t.Owner, Run: t.Run, UpstreamTask: t.UpstreamTask, InputRequests: json.RawMessage(t.InputRequests), Result: json.RawMessage(t.Result), Error: json.RawMessage(t.Error)}
	for _, c := range t.History {
		tj.History = append(tj.History, TaskStatusJSON{Status: c.Status, At: c.At.UTC(), Message: c.Message})
	}
	return tj
}

// taskStatuses are the statuses ?status= takes.
var taskStatuses = []string{"working", "input_required", "completed", "failed", "cancelled"}

func (a *API) listTasks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := daemon.TaskFilter{Status: q.Get("status")}
	if f.Status != "" && !slices.Contains(taskStatuses, f.Status) {
		return &problem{Status: http.StatusBadRequest, Title: "bad status",
			Errors: []fieldError{{Field: "status", Detail: fmt.Sprintf("%q is not a task status: one of %v", f.Status, taskStatuses)}}}
	}
	f.Limit = DefaultLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return &problem{Status: http.StatusBadRequest, Title: "bad limit",
				Errors: []fieldError{{Field: "limit", Detail: fmt.Sprintf("must be a number from 1 to %d", MaxLimit)}}}
		}
		f.Limit = n
	}
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			return &problem{Status: http.StatusBadRequest, Title: "bad cursor", Errors: []fieldError{{Field: "cursor", Detail: "not a cursor this API gave"}}}
		}
		f.Cursor = string(b)
	}
	ts, next, err := a.d.ListTasks(r.Context(), f)
	if err != nil {
		return err
	}
	p := page[TaskJSON]{Items: []TaskJSON{}}
	for _, t := range ts {
		p.Items = append(p.Items, toTaskJSON(t))
	}
	if next != "" {
		p.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(next))
	}
	return a.writeJSON(w, http.StatusOK, p)
}

func (a *API) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := a.d.Task(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, toTaskJSON(t))
}

// cancelTask cancels a task through the daemon's gateway, as tasks/cancel
// does: its upstream call is cancelled on this replica; the request for a
// task another live replica runs is forwarded there, and that replica's
// answer is this one's (one that does not answer: 409, naming it).
func (a *API) cancelTask(w http.ResponseWriter, r *http.Request) error {
	t, err := a.d.CancelTask(r.Context(), r.PathValue("id"))
	if err != nil {
		var refused error
		if a.d.ForwardTask(w, r, err, func(err error) { refused = err }) {
			if refused != nil {
				a.writeProblem(w, a.problemOf(refused))
			}
			return nil
		}
		return err
	}
	return a.writeJSON(w, http.StatusOK, toTaskJSON(t))
}

// A TaskFilter chooses the tasks [Client.Tasks] lists.
type TaskFilter struct {
	// Status is one status, "" any.
	Status string
	// Limit bounds how many (newest first); 0 means DefaultLimit.
	Limit int
}

// Tasks lists the gateway's tasks, newest first, without their outcome
// (GET /api/v1/tasks, as many pages as f.Limit takes).
func (c *Client) Tasks(ctx context.Context, f TaskFilter) ([]TaskJSON, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var out []TaskJSON
	cursor := ""
	for len(out) < limit {
		q := url.Values{"limit": {strconv.Itoa(min(limit-len(out), MaxLimit))}}
		if f.Status != "" {
			q.Set("status", f.Status)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var p listPage[TaskJSON]
		if err := c.do(ctx, http.MethodGet, "tasks?"+q.Encode(), nil, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	return out, nil
}

// Task reads task id with its outcome (GET /api/v1/tasks/{id}).
func (c *Client) Task(ctx context.Context, id string) (TaskJSON, error) {
	var t TaskJSON
	err := c.do(ctx, http.MethodGet, "tasks/"+url.PathEscape(id), nil, &t)
	return t, err
}

// CancelTask cancels task id (POST /api/v1/tasks/{id}/cancel) and returns
// it as it then stands.
func (c *Client) CancelTask(ctx context.Context, id string) (TaskJSON, error) {
	var t TaskJSON
	err := c.do(ctx, http.MethodPost, "tasks/"+url.PathEscape(id)+"/cancel", nil, &t)
	return t, err
}
