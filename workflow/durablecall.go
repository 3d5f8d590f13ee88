package workflow

// Durable calls: one tool call made durable outside any workflow, by the
// rule of a workflow's tool step — what the gateway's tasks (the MCP
// tasks extension) are. StartCall records the call as a DBOS workflow, in
// the engine's DBOS, while the process that started it makes
// the call its own way (the gateway, bridging its client's input). The
// workflow follows that call to its end (CallRunner.Follow). When the
// process stops first (kill -9, or a replica that stopped heartbeating),
// the workflow is pending, and recovery (this engine's Adopt, in the
// restarted process or a surviving replica, exactly one of them) executes
// it again where the call is not this process's: the call is made again
// when it is idempotent (DurableCall.Idempotent: its tool declares
// readOnlyHint or idempotentHint, as for a step), and reported
// interrupted otherwise (CallRunner.Recover). A call in flight when its
// engine closes is left pending for the next.
//
// What DBOS keeps of a call is its input: the arguments, refused when
// they hold the value of a secret (ErrHoldsSecret), as a run's inputs
// are. Ended calls are deleted by Prune, none kept.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/switchboardmcp/switchboard/store"
)

// callWorkflowName is the DBOS workflow of a durable call: part of the
// stored format.
const callWorkflowName = "switchboard.call"

// callIDPrefix begins the DBOS workflow id of a durable call, before its
// DurableCall.ID.
const callIDPrefix = "call:"

// callPruneInterval spaces the prunes that the end of a call starts.
const callPruneInterval = time.Minute

// A DurableCall is a tool call as the engine keeps it.
type DurableCall struct {
	// ID is the caller's id of the call (a gateway task's), unique on
	// the database.
	ID string
	// Tool is the host's name of the tool, Arguments the call's, as JSON.
	Tool      string
	Arguments string
	// Idempotent: the call may be made again when it was in flight as
	// its process stopped.
	Idempotent bool
}

// CallRunner makes durable calls: the daemon's, over its gateway.
type CallRunner interface {
	// Follow waits for call id, made by this process, to end, and
	// reports true; false at once when this process does not make it
	// (it started in a process that stopped). A call this process makes
	// that does not end before ctx (the engine closes): true and ctx's
	// error.
	Follow(ctx context.Context, id string) (bool, error)
	// Recover ends call c, in flight when the process that made it
	// stopped: again, it makes the call once more and returns once it
	// ended; otherwise it reports the call interrupted. A call that ended
	// meanwhile is left as it is.
	Recover(ctx context.Context, c DurableCall, again bool) error
}

// StartCall records call c as in flight, durably, for this process to
// make: once it returns, a stop of the process before the call ends has
// c recovered (see above). A c whose Arguments hold a secret's value is
// refused (ErrHoldsSecret), as is one with no CallRunner
// (EngineOptions.Calls).
func (e *Engine) StartCall(ctx context.Context, c DurableCall) error {
	if err := e.ready(); err != nil {
		return err
	}
	if e.opts.Calls == nil {
		return errors.New("workflow: durable calls need EngineOptions.Calls")
	}
	if e.red != nil && e.red.Redact(c.Arguments) != c.Arguments {
		return fmt.Errorf("call %s: its arguments %w: they would be kept in the state database", c.ID, ErrHoldsSecret)
	}
	h, err := dbos.RunWorkflow(e.dbos, e.callWorkflow, c, dbos.WithWorkflowID(callIDPrefix+c.ID))
	if err != nil {
		return fmt.Errorf("workflow: recording call %s: %w", c.ID, err)
	}
	e.watchers.Go(func() {
		h.GetResult() // ends at Close too: DBOS's context ends
		if last := e.lastCallPrune.Load(); time.Since(time.Unix(0, last)) > callPruneInterval && e.lastCallPrune.CompareAndSwap(last, time.Now().UnixNano()) {
			e.pruneSoon()
		}
	})
	return nil
}

// Store is the engine's own state store, on its database, until Close:
// on SQLite its handle is the one DBOS writes through, so that the
// writes of a durable call's caller (the gateway's task rows) queue with
// DBOS's in Go rather than meet them in SQLite's busy handler, which
// sleeps milliseconds (store/sqlite.go).
func (e *Engine) Store() *store.Store { return e.events.st }

// CallPending reports whether call id is recorded and not ended: a call
// in flight, or one recovery will end.
func (e *Engine) CallPending(ctx context.Context, id string) (bool, error) {
	if err := e.closedErr(); err != nil {
		return false, err
	}
	list, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterWorkflowIDs(callIDPrefix+id))
	if err != nil {
		return false, err
	}
	if len(list) == 0 {
		return false, nil
	}
	switch list[0].Status {
	case dbos.WorkflowStatusPending, dbos.WorkflowStatusEnqueued, dbos.WorkflowStatusDelayed:
		return true, nil
	}
	return false, nil
}

// callWorkflow is a durable call's DBOS workflow, which follows the call
// in the process that makes it and recovers it elsewhere. It has no step:
// what it does is decided again each time it executes (Follow says
// whether the call is this process's), and its output, recorded as it
// ends, is all there is to keep — one write fewer per call than a step.
func (e *Engine) callWorkflow(ctx dbos.Context, c DurableCall) (string, error) {
	r := e.opts.Calls
	if r == nil {
		<-ctx.Done()
		return "", ctx.Err()
	}
	if mine, err := r.Follow(ctx, c.ID); mine {
		return "followed", err
	}
	// Recovery: not while this process may not call (fenced, as a step's
	// begin), and not once the engine closes.
	if err := e.fence(ctx); err != nil {
		<-ctx.Done()
		return "", ctx.Err()
	}
	e.logger.Info("workflow: recovering a call in flight when its process stopped", "call", c.ID, "tool", c.Tool, "again", c.Idempotent)
	if err := r.Recover(ctx, c, c.Idempotent); err != nil {
		return "", err
	}
	if c.Idempotent {
		return "called again", nil
	}
	return "interrupted", nil
}

// pruneCalls deletes the ended durable calls.
func (e *Engine) pruneCalls(ctx context.Context) (int, error) {
	n := 0
	for {
		list, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterName(callWorkflowName),
			dbos.WithFilterStatus(endedStatuses...), dbos.WithFilterLimit(pruneBatch))
		if err != nil {
			return n, fmt.Errorf("workflow: listing the ended calls: %w", err)
		}
		if len(list) == 0 {
			return n, nil
		}
		ids := make([]string, len(list))
		for i := range list {
			ids[i] = list[i].ID
		}
		if err := dbos.DeleteWorkflows(e.dbos, ids); err != nil {
			return n, fmt.Errorf("workflow: deleting %d ended calls: %w", len(ids), err)
		}
		n += len(ids)
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}
