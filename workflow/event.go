package workflow

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboardmcp/switchboard/guardrail"
)

// EventType names an event of a run.
type EventType string

// The events of a run, in the agents' event model: run:started first, then
// step and gate events, and exactly one terminal event last.
const (
	EventRunStarted    EventType = "run:started"    // Workflow, Digest, Inputs, FailedServers
	EventStepStarted   EventType = "step:started"   // Step, Attempt, Item (for_each)
	EventStepCompleted EventType = "step:completed" // Step, Result, DurationMS, Guardrails; Skipped for a step whose if was false, or resolved with skip
	EventStepFailed    EventType = "step:failed"    // Step, Error, Attempt, Guardrails; Continued when on_error continue took it
	EventGateWaiting   EventType = "gate:waiting"   // Step (the gate's id), Text (the message), Schema, Deadline
	EventGateAnswered  EventType = "gate:answered"  // Step, Action (accept, decline, timeout), Result
	// A step that is not idempotent was in flight when its process
	// stopped: it is not called again until a person resolves it
	// (Engine.Resolve). Step, Item, Attempt (the one interrupted), Error.
	EventStepInterrupted EventType = "step:interrupted"
	EventStepResolved    EventType = "step:resolved" // Step, Item, Attempt (the one interrupted), Action (retry, skip, fail)
	EventRunCompleted    EventType = "run:completed" // Outputs, DurationMS
	EventRunFailed       EventType = "run:failed"    // Step (where it failed), Error, DurationMS
	EventRunCancelled    EventType = "run:cancelled" // DurationMS
)

// Terminal reports whether t ends a run.
func (t EventType) Terminal() bool {
	return t == EventRunCompleted || t == EventRunFailed || t == EventRunCancelled
}

// Event is one thing that happened in a run. Every event has the envelope
// (Type, RunID, Seq, Time); the other fields are set as the type says. Its
// JSON (one object per line with `switchboard workflow run --json`) is
// stable: fields may be added, never changed in meaning. Values in events
// (inputs, results, outputs) are redacted of secrets and cut to
// EventValueBytes.
type Event struct {
	Type  EventType `json:"type"`
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"` // 1, 2, 3, … within a run, the same after a recovery
	Time  time.Time `json:"time"`

	Workflow string          `json:"workflow,omitempty"`
	Digest   string          `json:"digest,omitempty"`
	Inputs   json.RawMessage `json:"inputs,omitempty"`
	Step     string          `json:"step,omitempty"`
	// Item is the for_each item's index (from 0) of a step event of an
	// inner step.
	Item      *int            `json:"item,omitempty"`
	Attempt   int             `json:"attempt,omitempty"` // from 1
	Skipped   bool            `json:"skipped,omitempty"`
	Continued bool            `json:"continued,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Outputs   json.RawMessage `json:"outputs,omitempty"`
	Text      string          `json:"text,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	Deadline  *time.Time      `json:"deadline,omitempty"`
	Action    string          `json:"action,omitempty"`
	Error     *RunError       `json:"error,omitempty"`
	// Guardrails (step:completed, step:failed of a tool step) is what the
	// host's guardrails did to the step's call: rule, filter, action,
	// direction, part and kind, never the matched text. A call a rule
	// rejected has none: its error names the rule.
	Guardrails []guardrail.Record `json:"guardrails,omitempty"`
	// FailedServers (run:started) are the servers of the host running
	// the run that had failed to start when it started (see
	// host.ServerStatus.FailedToStart): its steps go without their tools.
	FailedServers []string `json:"failed_servers,omitempty"`

	DurationMS *int64 `json:"duration_ms,omitempty"`
}

// EventValueBytes bounds a value (inputs, a result, outputs) in an event.
const EventValueBytes = 4 << 10

// RunError is why a step or a run failed.
type RunError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
	// Step is the step the run failed at, if any.
	Step string `json:"step,omitempty"`

	attempt int // the attempt that failed, from 1
}

func (e *RunError) Error() string {
	if e.Step != "" {
		return fmt.Sprintf("step %s: %s: %s", e.Step, e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// ErrorCode says why a step or run failed; callers branch on it.
type ErrorCode string

// The reasons a step or run fails.
const (
	ErrToolError     ErrorCode = "tool_error"      // the tool returned isError
	ErrCallFailed    ErrorCode = "call_failed"     // the call failed on the way (unknown tool, invalid arguments, transport)
	ErrAgentFailed   ErrorCode = "agent_failed"    // the agent run failed
	ErrTemplate      ErrorCode = "template"        // a template failed at run time (a missing key, a bad JSON)
	ErrTimeout       ErrorCode = "timeout"         // the step or the run took longer than its timeout
	ErrGateDeclined  ErrorCode = "gate_declined"   // a person declined a gate whose on_decline is fail
	ErrGateTimeout   ErrorCode = "gate_timeout"    // nobody answered a gate whose on_timeout is fail in time
	ErrDefinition    ErrorCode = "definition"      // the workflow changed since the run started, or is gone
	ErrChildWorkflow ErrorCode = "workflow_failed" // a workflow step's run failed
	ErrCancelled     ErrorCode = "cancelled"       // the run was cancelled
	ErrInterrupted   ErrorCode = "interrupted"     // a step was interrupted and a person chose to fail the run (Engine.Resolve)
	ErrLimit         ErrorCode = "limit"           // a bound of Limits (or a for_each's max_items) was reached: runs nested too deep, a for_each over too many items
)
