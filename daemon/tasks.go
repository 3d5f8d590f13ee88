package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

// taskStore keeps the gateway's tasks (gateway.TaskStore) in the state
// database (switchboard_tasks): tasks/get answers from any replica on it,
// and after a restart.
type taskStore struct{ s *store.Store }

// TaskStore is the gateway's task store (gateway.Options.Tasks) on s, as
// the daemon's gateway keeps its tasks: for a gateway of one's own on a
// state store, as the gateway's benchmarks make one.
func TaskStore(s *store.Store) gateway.TaskStore { return taskStore{s} }

func (ts taskStore) CreateTask(ctx context.Context, t gateway.TaskRecord) error {
	return ts.s.CreateTask(ctx, toStoreTask(t))
}

func (ts taskStore) Task(ctx context.Context, id string) (gateway.TaskRecord, error) {
	t, err := ts.s.Task(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return gateway.TaskRecord{}, fmt.Errorf("%w: %v", gateway.ErrTaskNotFound, err)
	}
	if err != nil {
		return gateway.TaskRecord{}, err
	}
	return gateway.TaskRecord{ID: t.ID, Caller: t.Caller, Endpoint: t.Endpoint, Server: t.Server, Tool: t.Tool,
		Status: t.Status, StatusMessage: t.StatusMessage, InputRequests: t.InputRequests, Result: t.Result, Error: t.Error,
		Created: t.Created, Updated: t.Updated, TTL: t.TTL, Owner: t.Owner, UpstreamTask: t.UpstreamTask}, nil
}

func (ts taskStore) UpdateTask(ctx context.Context, t gateway.TaskRecord) (bool, error) {
	return ts.s.UpdateTask(ctx, toStoreTask(t))
}

func (ts taskStore) PruneTasks(ctx context.Context, now time.Time) (int, error) {
	return ts.s.PruneTasks(ctx, now)
}

func toStoreTask(t gateway.TaskRecord) store.Task {
	return store.Task{ID: t.ID, Caller: t.Caller, Endpoint: t.Endpoint, Server: t.Server, Tool: t.Tool,
		Status: t.Status, StatusMessage: t.StatusMessage, InputRequests: t.InputRequests, Result: t.Result, Error: t.Error,
		Created: t.Created, Updated: t.Updated, TTL: t.TTL, Owner: t.Owner, UpstreamTask: t.UpstreamTask}
}

// runTasks are the runs of the published workflows as the tasks of the
// calls that started them (gateway.RunTasks): the engine reads them from
// the state database, on any replica.
type runTasks struct{ e *workflow.Engine }

func (rt runTasks) Server() string { return workflow.InProcessServerID }

func (rt runTasks) RunTask(ctx context.Context, run string) (gateway.RunTask, error) {
	t, err := rt.e.ToolTask(ctx, run)
	if err != nil {
		return gateway.RunTask{}, runErr(err)
	}
	return gateway.RunTask{Status: t.Status, StatusMessage: t.StatusMessage, InputRequests: t.InputRequests, Result: t.Result,
		Created: t.Started, Updated: t.Updated}, nil
}

func (rt runTasks) AnswerRun(ctx context.Context, run string, responses map[string]json.RawMessage) error {
	return runErr(rt.e.AnswerToolTask(ctx, run, responses))
}

func (rt runTasks) CancelRun(ctx context.Context, run string) error {
	return runErr(rt.e.CancelToolTask(ctx, run))
}

// runErr is err, wrapping gateway.ErrTaskNotFound too when it says there
// is no such run.
func runErr(err error) error {
	if errors.Is(err, workflow.ErrNoRun) {
		return fmt.Errorf("%w: %w", gateway.ErrTaskNotFound, err)
	}
	return err
}

// A Task is a task of the gateway as the owner's faces show it (the REST
// API, the web UI, the CLI): its row of switchboard_tasks, or a published
// workflow's run that a declaring client's call made its task
// (gateway/runtasks.go), with Run naming that run.
type Task struct {
	store.Task
	// Run is the workflow run the task is, "" for a task of the
	// gateway's own.
	Run string
}

// TaskFilter chooses the tasks ListTasks lists (store.TaskFilter; its
// Servers are narrowed to the caller's grant).
type TaskFilter = store.TaskFilter

// ErrNoTask: no task has the id, or the caller's grant does not cover
// its server.
var ErrNoTask = errors.New("no such task")

// ListTasks lists the gateway's tasks newest first, one page (see
// store.ListTasks): those of the servers the caller's grant (ctx, Grant)
// covers (everything for the owner), and beside them the runs that are
// tasks, whole, as the runs are (runTasksAfter).
func (d *Daemon) ListTasks(ctx context.Context, f TaskFilter) ([]Task, string, error) {
	wantRuns := f.Servers == nil || slices.Contains(f.Servers, workflow.InProcessServerID)
	if gr := d.Grant(ctx); !gr.All() {
		allowed := []string{}
		for _, id := range d.taskServers() {
			if gr.Server(id) && (f.Servers == nil || slices.Contains(f.Servers, id)) {
				allowed = append(allowed, id)
			}
		}
		f.Servers = allowed
	}
	rows, next, err := d.store.ListTasks(ctx, f)
	if err != nil {
		return nil, "", KindUsage.Errorf("%w", err)
	}
	ts := make([]Task, 0, len(rows))
	for _, r := range rows {
		ts = append(ts, Task{Task: r})
	}
	if !wantRuns {
		return ts, next, nil
	}
	limit := f.Limit
	if limit <= 0 {
		limit = store.DefaultTaskLimit
	}
	runs, more, err := d.runTasksAfter(ctx, f.Cursor, f.Status, limit)
	if err != nil || len(runs) == 0 {
		return ts, next, err
	}
	ts = append(ts, runs...)
	slices.SortFunc(ts, func(a, b Task) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if len(ts) > limit || more || next != "" {
		ts = ts[:min(limit, len(ts))]
		next = store.TaskCursor(ts[len(ts)-1].Task)
	}
	return ts, next, nil
}

// maxRunTasksRead bounds the runs ListTasks reads for the runs that are
// tasks: the newest, as GET /api/v1/runs reads them (runs are pruned to
// the engine's KeepRuns ended ones besides those still going).
const maxRunTasksRead = store.MaxTaskLimit

// runTasksAfter are the runs that are tasks, as tasks, after cursor (""
// from the newest) and in status (as tasks/get maps a run's state, ""
// any): at most limit of them, and whether there are more. None when the
// daemon runs no workflows or serves no gateway yet (a run task's id is
// the gateway's).
func (d *Daemon) runTasksAfter(ctx context.Context, cursor, status string, limit int) ([]Task, bool, error) {
	g, wf := d.gateway(), d.Workflows()
	if g == nil || wf == nil {
		return nil, false, nil
	}
	rss, err := wf.Engine.Runs(ctx, &workflow.RunFilter{Tasks: true, Limit: maxRunTasksRead})
	if err != nil {
		return nil, false, err
	}
	var out []Task
	for _, rs := range rss {
		info, ok := g.RunTaskOf(rs.ID, rs.Task)
		if !ok || (status != "" && rs.State.TaskStatus() != status) {
			continue
		}
		updated := rs.Started
		if !rs.Ended.IsZero() {
			updated = rs.Ended
		}
		t := Task{Task: store.Task{ID: info.ID, Caller: info.Caller, Endpoint: info.Endpoint, Server: info.Server, Tool: info.Tool,
			Status: rs.State.TaskStatus(), Created: rs.Started, Updated: updated}, Run: rs.ID}
		if cursor != "" && !store.TaskAfter(cursor, t.Task) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, t)
	}
	return out, false, nil
}

// taskServers are the servers a narrowed grant may see tasks of: the
// host's (a task of a server removed since is the owner's to see).
func (d *Daemon) taskServers() []string {
	h := d.Host()
	if h == nil {
		return nil
	}
	var ids []string
	for _, st := range h.Servers() {
		ids = append(ids, st.ID)
	}
	return ids
}

// Task returns task id with its outcome, as tasks/get reports it (a task
// whose replica is gone is interrupted; a run task as its run stands);
// ErrNoTask when there is none or the caller's grant does not cover its
// server (a run task is shown whole, as its run is).
func (d *Daemon) Task(ctx context.Context, id string) (Task, error) {
	g := d.gateway()
	if g != nil {
		if run, ok := g.TaskRun(id); ok {
			return d.runTask(ctx, g, id, run)
		}
	}
	var t Task
	if g == nil {
		st, err := d.store.Task(ctx, id)
		if err != nil {
			return Task{}, d.noTask(id, err)
		}
		t = Task{Task: st}
	} else {
		rec, err := g.Task(ctx, id)
		if err != nil {
			return Task{}, d.noTask(id, err)
		}
		t = Task{Task: toStoreTask(rec)}
		// The gateway's record has no status history: the store's row
		// has, as the gateway left it (settled above, if it was).
		if st, err := d.store.Task(ctx, id); err == nil {
			t.History = st.History
		}
	}
	if !d.Grant(ctx).Server(t.Server) {
		return Task{}, fmt.Errorf("task %q: %w", id, ErrNoTask)
	}
	return t, nil
}

// runTask is run task id, whose run is run, with its outcome as tasks/get
// reports it: the questions of the gates it waits at, the call's result
// once it ended (redacted, as tasks/get's).
func (d *Daemon) runTask(ctx context.Context, g *gateway.Gateway, id, run string) (Task, error) {
	wf := d.Workflows()
	if wf == nil {
		return Task{}, fmt.Errorf("task %q: %w", id, ErrNoTask)
	}
	tt, err := wf.Engine.ToolTask(ctx, run)
	if err != nil {
		return Task{}, d.noTask(id, runErr(err))
	}
	info, _ := g.RunTaskOf(run, tt.Task)
	t := Task{Task: store.Task{ID: id, Caller: info.Caller, Endpoint: info.Endpoint, Server: info.Server, Tool: info.Tool,
		Status: tt.Status, StatusMessage: tt.StatusMessage, Created: tt.Started, Updated: tt.Updated}, Run: run}
	if t.Server == "" {
		t.Server = workflow.InProcessServerID
	}
	if len(tt.InputRequests) > 0 {
		t.InputRequests, err = json.Marshal(secret.RedactValue(d.red, tt.InputRequests))
	}
	if err == nil && tt.Result != nil {
		t.Result, err = json.Marshal(secret.RedactValue(d.red, tt.Result))
	}
	return t, err
}

// CancelTask cancels task id through the gateway, as tasks/cancel does:
// a run task's run is cancelled; a task of the gateway's own has its
// upstream call cancelled, and it is written cancelled (a task
// whose replica is gone, interrupted; one that ended stays as it is). A
// task another live replica runs is not touched here: the error is
// gateway.ErrTaskElsewhere, naming it (KindLiveElsewhere), and
// ForwardTask sends the request there. It returns the task as it then
// stands.
func (d *Daemon) CancelTask(ctx context.Context, id string) (Task, error) {
	t, err := d.Task(ctx, id)
	if err != nil {
		return Task{}, err
	}
	g := d.gateway()
	if g == nil {
		return Task{}, ErrNotRunning
	}
	if t.Run != "" {
		// A run task: its run is cancelled, as tasks/cancel does.
		if err := d.Workflows().Engine.CancelToolTask(ctx, t.Run); err != nil {
			return Task{}, d.noTask(id, runErr(err))
		}
		return d.Task(ctx, id)
	}
	rec, err := g.CancelTask(ctx, id)
	if errors.Is(err, gateway.ErrTaskElsewhere) {
		return Task{Task: toStoreTask(rec)}, err
	}
	if err != nil {
		return Task{}, d.noTask(id, err)
	}
	return Task{Task: toStoreTask(rec)}, nil
}

// ForwardTask answers r, the owner's request about a task, on the
// replica that runs the task, when err (from CancelTask) says another
// live replica does (gateway.ErrTaskElsewhere): r goes there as it came,
// through the gateway's one forwarding to replicas
// (gateway.ForwardToReplica), and that replica's answer is r's. A
// request on the local socket carries no credential: the owner's
// ([gateway] auth_token) goes with it. refuse answers when the replica
// does not (err, naming its address). ForwardTask reports whether it
// answered; when it did not, err is the answer.
func (d *Daemon) ForwardTask(w http.ResponseWriter, r *http.Request, err error, refuse func(error)) bool {
	var ee *gateway.TaskElsewhereError
	g := d.gateway()
	if !errors.As(err, &ee) || g == nil {
		return false
	}
	if _, ok := guard.Credential(r.Context()); !ok && guard.IsOwner(r.Context()) {
		d.mu.Lock()
		token := d.authToken
		d.mu.Unlock()
		if token != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+token)
		}
	}
	return g.ForwardToReplica(w, r, ee.Replica, peerTaskTimeout, func(addr string) {
		refuse(fmt.Errorf("%w; it does not answer at %s: try again", err, addr))
	})
}

// peerTaskTimeout bounds the owner's request forwarded to the replica
// running a task: a cancel is answered at once.
const peerTaskTimeout = 30 * time.Second

// noTask is err as Task says it: ErrNoTask for a task that is not there.
func (d *Daemon) noTask(id string, err error) error {
	if errors.Is(err, gateway.ErrTaskNotFound) || errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("task %q: %w", id, ErrNoTask)
	}
	return err
}

// gateway is the daemon's gateway once Run or ServeStdio made it; nil
// before.
func (d *Daemon) gateway() *gateway.Gateway {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.g
}

// taskJournal records the calls of the gateway's tasks to idempotent
// tools as the engine's durable calls (gateway.TaskJournal,
// workflow.Engine.StartCall): DBOS workflows in the state database,
// recovered by the engine that adopts them.
type taskJournal struct{ e *workflow.Engine }

// TaskJournal is the gateway's task journal (gateway.Options.TaskJournal)
// on engine e, as serve's: the benchmarks' way to the same.
func TaskJournal(e *workflow.Engine) gateway.TaskJournal { return taskJournal{e} }

func (tj taskJournal) TrackTask(ctx context.Context, rec gateway.TaskRecord, tool string, args json.RawMessage) error {
	return tj.e.StartCall(ctx, workflow.DurableCall{ID: rec.ID, Tool: tool, Arguments: string(args), Idempotent: true})
}

func (tj taskJournal) TaskPending(ctx context.Context, id string) bool {
	ok, err := tj.e.CallPending(ctx, id)
	return ok && err == nil
}

// taskCalls makes the engine's durable calls over the daemon's gateway
// (workflow.CallRunner): the gateway follows the calls it makes, and
// makes again (or reports interrupted) those recovered.
func (d *Daemon) taskCalls() workflow.CallRunner { return taskCalls{d} }

type taskCalls struct{ d *Daemon }

func (tc taskCalls) Follow(ctx context.Context, id string) (bool, error) {
	g := tc.d.gateway()
	if g == nil {
		// No gateway yet: nothing of this process's to follow.
		return false, nil
	}
	return g.FollowTask(ctx, id)
}

func (tc taskCalls) Recover(ctx context.Context, c workflow.DurableCall, again bool) error {
	g := tc.d.gateway()
	if g == nil {
		// The engine launches once the gateway is made (startHost):
		// a recovery before that waits for the next process.
		<-ctx.Done()
		return ctx.Err()
	}
	return g.RecoverTask(ctx, c.ID, c.Tool, json.RawMessage(c.Arguments), again)
}
