package gateway

// The owner's side of tasks (issue 29 §2): what the daemon's REST API,
// web UI and CLI read and cancel, for the gateway's owner rather than for
// the MCP client that made the task. No caller check here: those faces
// are the owner's, and narrow what a token sees by its grant themselves.

import (
	"context"
	"errors"
	"fmt"
)

// ErrTaskElsewhere: the task runs on another live replica, which alone
// can cancel its call; the error is a *TaskElsewhereError.
var ErrTaskElsewhere = errors.New("the task runs on another gateway replica")

// A TaskElsewhereError names the replica running a task.
type TaskElsewhereError struct{ Task, Replica string }

func (e *TaskElsewhereError) Error() string {
	return fmt.Sprintf("task %s runs on gateway replica %q, which alone can cancel its call: cancel it through that replica", e.Task, e.Replica)
}

func (e *TaskElsewhereError) Unwrap() error { return ErrTaskElsewhere }

// errNoTaskStore is the error of the task methods of a gateway that keeps
// no tasks.
var errNoTaskStore = fmt.Errorf("%w: this gateway keeps no tasks (Options.Tasks)", ErrTaskNotFound)

// Task returns task id as tasks/get would show it to its caller: a task
// still working whose replica is gone is reported (and written)
// interrupted. An unknown id is an error wrapping ErrTaskNotFound.
func (g *Gateway) Task(ctx context.Context, id string) (TaskRecord, error) {
	if g.opts.Tasks == nil {
		return TaskRecord{}, errNoTaskStore
	}
	rec, err := g.opts.Tasks.Task(ctx, id)
	if err != nil {
		return TaskRecord{}, err
	}
	if !TaskTerminal(rec.Status) && g.localTask(id) == nil {
		rec = g.settle(ctx, rec)
	}
	return rec, nil
}

// CancelTask cancels task id as tasks/cancel does, on the owner's
// behalf: a task this replica runs is written cancelled and its upstream
// call cancelled; one whose replica is gone is written interrupted; one
// that ended is left as it is. It returns the task as it then stands. A
// task another live replica runs is not touched: the error is a
// *TaskElsewhereError: tasks/cancel over Streamable HTTP is forwarded
// there (routeTask), and so is the owner's cancel through the daemon's
// REST API (ForwardToReplica).
func (g *Gateway) CancelTask(ctx context.Context, id string) (TaskRecord, error) {
	rec, err := g.Task(ctx, id)
	if err != nil || TaskTerminal(rec.Status) {
		return rec, err
	}
	tr := g.localTask(id)
	if tr == nil {
		return rec, &TaskElsewhereError{Task: id, Replica: rec.Owner}
	}
	g.cancelTask(tr, "cancelled by the gateway's owner")
	tr.mu.Lock()
	rec = tr.rec
	tr.mu.Unlock()
	return rec, nil
}
