package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A published workflow's call as a task (the MCP tasks extension, which
// the gateway serves): a detached call (host.CallOptions.Detach) starts
// the run and answers at once, and the run, durable already, is the task.
// ToolTask reads the run as the task's status, AnswerToolTask answers its
// gates, CancelToolTask cancels it. Nothing is stored besides the run.

// The statuses of a call's task, as the tasks extension names them.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskCancelled     = "cancelled"
)

// TaskStatus is the status of a run in state s as its call's task, as
// ToolTask says it: TaskWorking while it is queued, runs or is
// interrupted, TaskInputRequired while it waits at a gate (ToolTask says
// working again once every gate it waits at is answered), TaskCompleted
// once it completed or failed, TaskCancelled once cancelled.
func (s RunState) TaskStatus() string {
	switch s {
	case RunWaiting:
		return TaskInputRequired
	case RunCompleted, RunFailed:
		return TaskCompleted
	case RunCancelled:
		return TaskCancelled
	}
	return TaskWorking
}

// A ToolTask is a run, started by a call of its published tool, as that
// call's task.
type ToolTask struct {
	// Status is TaskWorking (queued, running, or interrupted: see
	// StatusMessage), TaskInputRequired (waiting at a gate), TaskCompleted
	// (ended, but cancelled: Result is what the call would have returned,
	// an isError result for a failed run) or TaskCancelled.
	Status        string
	StatusMessage string
	// InputRequests are the questions of the gates the run waits at, one
	// per gate, keyed by the gate's id ("step", or "step/item" for an item
	// of a for_each): stable for as long as the gate waits.
	InputRequests mcp.InputRequestMap
	// Result is the call's result, when Status is TaskCompleted.
	Result *mcp.CallToolResult
	// Started is when the run started, Updated when it last changed (its
	// last event).
	Started, Updated time.Time
	// Task is what the run keeps of the task it is (StartOptions.Task).
	Task string
}

// ToolTask returns run runID as the task of the call that started it; an
// error wrapping ErrNoRun when there is no such run (never started, or
// pruned).
func (e *Engine) ToolTask(ctx context.Context, runID string) (*ToolTask, error) {
	st, err := e.dbosStatus(ctx, runID)
	if err != nil {
		return nil, err
	}
	events, err := e.events.list(ctx, runID, 0, 0)
	if err != nil {
		return nil, err
	}
	rs := e.status(st, events)
	t := &ToolTask{Status: rs.State.TaskStatus(), Started: rs.Started, Updated: rs.Started, Task: rs.Task}
	if n := len(events); n > 0 {
		t.Updated = events[n-1].Time
	}
	if !rs.Ended.IsZero() && rs.Ended.After(t.Updated) {
		t.Updated = rs.Ended
	}
	switch rs.State {
	case RunCompleted, RunFailed:
		t.Result = toolResult(rs.Workflow, rs)
	case RunCancelled:
		t.StatusMessage = fmt.Sprintf("run %s was cancelled", runID)
	case RunInterrupted:
		// A person's decision, not the caller's: the task works on once
		// it is made.
		ev := rs.Interrupted
		t.StatusMessage = resolveHint(runID, taskKey(ev.Step, itemOf(ev)), ev.Attempt)
	case RunWaiting:
		reqs := mcp.InputRequestMap{}
		var first string
		for _, gate := range openGates(events) {
			// An answer is taken (claimed) before the gate says so: a gate
			// answered is no longer asked.
			if won, err := e.events.gateClaim(ctx, gateRunID(runID, gate.key)); err != nil {
				return nil, err
			} else if won != "" {
				continue
			}
			reqs[gate.key] = gateRequest(runID, gate.key, gate.ev)
			if first == "" {
				first = gate.key
			}
		}
		if len(reqs) == 0 {
			t.Status, t.StatusMessage = TaskWorking, fmt.Sprintf("run %s goes on: its gates are answered", runID)
			break
		}
		t.InputRequests = reqs
		t.StatusMessage = fmt.Sprintf("run %s waits at gate %s: answer with tasks/update, or `switchboard runs answer %s %s --value JSON`", runID, first, runID, first)
		if len(reqs) > 1 {
			t.StatusMessage = fmt.Sprintf("run %s waits at %d gates: answer with tasks/update, or `switchboard runs answer`", runID, len(reqs))
		}
	default:
		t.StatusMessage = fmt.Sprintf("run %s is %s", runID, rs.State)
	}
	return t, nil
}

// openGate is a gate waiting: its key and its gate:waiting event.
type openGate struct {
	key string
	ev  *Event
}

// openGates are the gates events leave waiting, in the order they began.
func openGates(events []Event) []openGate {
	var out []openGate
	for i := range events {
		ev := &events[i]
		k := taskKey(ev.Step, itemOf(ev))
		switch ev.Type {
		case EventGateWaiting:
			out = append(out, openGate{key: k, ev: ev})
		case EventGateAnswered:
			for j := range out {
				if out[j].key == k {
					out = append(out[:j], out[j+1:]...)
					break
				}
			}
		}
	}
	return out
}

// AnswerToolTask answers the gates of run runID that responses name (by
// the keys of ToolTask.InputRequests) with the client's answers to their
// questions (elicitation results: accept with content, anything else a
// decline). An answer to a gate that is not waiting, or that another
// answer won (ErrGateAnswered), is ignored, as is one that does not fit
// its question: that gate keeps waiting. It returns the answers it
// ignored as errors (joined, each naming its gate), for the log; an error
// wrapping ErrNoRun when there is no such run.
func (e *Engine) AnswerToolTask(ctx context.Context, runID string, responses map[string]json.RawMessage) error {
	if _, err := e.dbosStatus(ctx, runID); err != nil {
		return err
	}
	var errs []error
	for gate, raw := range responses {
		var res mcp.ElicitResult
		if err := json.Unmarshal(raw, &res); err != nil {
			errs = append(errs, fmt.Errorf("gate %s: the answer is not an elicitation result: %w", gate, err))
			continue
		}
		a := GateAnswer{Action: "decline"}
		if res.Action == "accept" {
			a = GateAnswer{Action: "accept", Content: res.Content}
		}
		if err := e.Answer(ctx, runID, gate, a); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CancelToolTask cancels run runID, unless it has ended (then it is left
// as it is); an error wrapping ErrNoRun when there is no such run.
func (e *Engine) CancelToolTask(ctx context.Context, runID string) error {
	rs, err := e.Get(ctx, runID)
	if err != nil {
		return err
	}
	if rs.State.Ended() {
		return nil
	}
	return e.Cancel(ctx, runID)
}
