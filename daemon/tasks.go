package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/store"
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
