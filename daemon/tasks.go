package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

// taskStore keeps the gateway's tasks (gateway.TaskStore) in the state
// database (switchboard_tasks): tasks/get answers from any replica on it,
// and after a restart.
type taskStore struct{ s *store.Store }

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
		Created: t.Created, Updated: t.Updated, TTL: t.TTL, Owner: t.Owner}, nil
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
		Created: t.Created, Updated: t.Updated, TTL: t.TTL, Owner: t.Owner}
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
