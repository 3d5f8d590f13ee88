package agent

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/guardrail"
)

// EventType names an event.
type EventType string

// The events of a run. A run emits run:started first and exactly one
// terminal event last: run:completed, run:failed or run:cancelled.
const (
	EventRunStarted   EventType = "run:started"     // Agent, Model, Tools, ToolMode, FailedServers
	EventToken        EventType = "agent:token"     // Step, Text: a delta of the model's answer as it streams
	EventToolCall     EventType = "agent:tool_call" // Step, Call: ID, Tool, Arguments (as the server is sent them: guardrails applied, secrets redacted)
	EventToolResult   EventType = "agent:tool_result"
	EventMessage      EventType = "agent:message" // Step, Text: the model's whole message of one step
	EventUsage        EventType = "agent:usage"   // Step, Usage: the tokens of one step's model call, or (Server set) of a server's sampling request during the step's tool calls
	EventRunCompleted EventType = "run:completed" // Text (the final answer), Usage (the run's), DurationMS, FailedServers
	EventRunFailed    EventType = "run:failed"    // Error, Usage, DurationMS, FailedServers
	EventRunCancelled EventType = "run:cancelled" // Usage, DurationMS, FailedServers
)

// Terminal reports whether t ends a run.
func (t EventType) Terminal() bool {
	return t == EventRunCompleted || t == EventRunFailed || t == EventRunCancelled
}

// Event is one thing that happened in a run. Every event has the envelope
// (Type, RunID, Seq, Time); the other fields are set as the type says. Its
// JSON (one object per line with `switchboard run --json`) is stable:
// fields may be added, never changed in meaning.
type Event struct {
	Type  EventType `json:"type"`
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"` // 1, 2, 3, … within a run
	Time  time.Time `json:"time"`

	Agent string   `json:"agent,omitempty"`
	Model string   `json:"model,omitempty"`
	Tools []string `json:"tools,omitempty"` // run:started: the tools the model may use (in search and code mode, through search_tools)
	// ToolMode (run:started) is how the model is given them: all, search
	// or code (tool_mode, with auto resolved).
	ToolMode string `json:"tool_mode,omitempty"`
	Step     int    `json:"step,omitempty"` // the model call, from 1
	Text     string `json:"text,omitempty"`
	// Server is the server whose sampling request used the tokens of an
	// agent:usage event; "" for the step's own model call.
	Server string `json:"server,omitempty"`
	// FailedServers (run:started and the terminal event) are the run's
	// servers that failed to start (host.ServerStatus.FailedToStart): an
	// optional one that could not start, whose tools the run goes
	// without (RobotLab's failed_mcp_server_names). The terminal event's
	// also has those that failed during the run (a lazy server woken for
	// a call that could not start).
	FailedServers []string `json:"failed_servers,omitempty"`

	Call *Call `json:"call,omitempty"`

	Usage      *Usage    `json:"usage,omitempty"`
	DurationMS *int64    `json:"duration_ms,omitempty"`
	Error      *RunError `json:"error,omitempty"`
}

// Call describes a tool call (agent:tool_call) or its result
// (agent:tool_result).
type Call struct {
	ID   string `json:"id"`
	Tool string `json:"tool"` // the host's name for it (search_tools and run_code: their own)
	// Via says how the model called Tool when not directly: "call_tool"
	// (search mode) or "run_code" (a program's call, whose ID is the
	// run_code call's followed by ".1", ".2", …).
	Via string `json:"via,omitempty"`
	// Arguments (tool_call) are those the server is sent: as the host's
	// argument guardrails left them (masked), secrets redacted; reported
	// when the host has them, just before the call goes out. A call the
	// host refused before (invalid arguments, a guardrail's reject) has
	// none: the model's own may hold what a guardrail is there to mask.
	// A call no server is sent (search_tools, run_code's program, a tool
	// not offered) has the model's, secrets redacted.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Success   *bool           `json:"success,omitempty"` // tool_result
	// ErrorCode says why a call did not succeed (tool_result).
	ErrorCode CallErrorCode `json:"error_code,omitempty"`
	// Output is what the model was given (tool_result), cut to
	// EventOutputBytes for the event.
	Output     string `json:"output,omitempty"`
	DurationMS *int64 `json:"duration_ms,omitempty"` // tool_result
	// Guardrails is what the host's guardrails did to the call
	// (tool_result): rule, action, part and kind, never the matched text.
	// A rejected call has ErrorCode "guardrail" instead.
	Guardrails []guardrail.Record `json:"guardrails,omitempty"`
}

// CallErrorCode says why a tool call did not succeed. The model gets the
// failure as an error result either way; the run goes on.
type CallErrorCode string

// The reasons a tool call fails.
const (
	CallToolError        CallErrorCode = "tool_error"        // the tool's own failure (isError)
	CallInvalidArguments CallErrorCode = "invalid_arguments" // the arguments failed the tool's schema; the server was not called
	CallTimeout          CallErrorCode = "timeout"           // the server did not answer in time; the call was cancelled
	CallUnknownTool      CallErrorCode = "unknown_tool"      // the model named a tool it was not given
	CallUnavailable      CallErrorCode = "unavailable"       // the server is not connected
	CallFailed           CallErrorCode = "call_failed"       // any other protocol or transport failure
	CallGuardrail        CallErrorCode = "guardrail"         // a guardrail rule rejected the arguments (the server was not called) or the result
)

// guardrailRecords are the records of what the guardrails did to a call,
// from its result's _meta (host: guardrail.MetaKey).
func guardrailRecords(res *mcp.CallToolResult) []guardrail.Record {
	if res == nil {
		return nil
	}
	recs, _ := res.Meta[guardrail.MetaKey].([]guardrail.Record)
	return recs
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// RunError is why a run failed.
type RunError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

// ErrorCode says why a run failed; callers branch on it.
type ErrorCode string

// The reasons a run fails.
const (
	ErrMaxSteps    ErrorCode = "max_steps"    // the model still asked for tools after max_steps model calls
	ErrTokenBudget ErrorCode = "token_budget" // the run used more than token_budget tokens
	ErrNoTool      ErrorCode = "unknown_tool" // the run's tools name a tool the host does not offer
	// ErrProvider and the llm_* codes: the model call failed. The
	// llm_* codes follow llm.ErrorKind: llm_auth, llm_rate_limit,
	// llm_unavailable, llm_context_too_long, llm_bad_request, llm_other.
	ErrProvider ErrorCode = "llm_error"
)

// EventOutputBytes bounds a tool result's output in an event; the model
// gets up to MaxResultBytes.
const EventOutputBytes = 2 << 10
