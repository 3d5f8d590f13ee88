package daemon

// The one error vocabulary of the faces (docs/design.md, "One error
// vocabulary"): each kind of error that a caller branches on, matched
// with errors.Is and errors.As, and what it is to each face: the REST
// API's HTTP status and RFC 9457 problem type, the web UI's status, the
// CLI's --json error code and exit code. The API, the UI and the CLI ask
// KindOf and StatusOf; none keeps a switch of its own. The daemon holds
// the table because it sees every package whose errors the faces answer
// (host, store, workflow, config, schema, its own); the CLI alone adds
// the two kinds of the packages above it (agent, llm).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

// A Kind is a class of error, named as the CLI's --json error code says it
// and as the REST API's problem type ends: stable, like every --json field.
type Kind string

// The kinds. Exit code 2 is for what the user must change, 1 for work
// that failed, 130 for Ctrl-C (the CLI's exit codes).
const (
	KindUsage            Kind = "usage"             // a bad flag, argument, command or request
	KindConfig           Kind = "config"            // the configuration, an entry or an agent file has problems
	KindUnknownTool      Kind = "unknown_tool"      // no server offers the tool
	KindInvalidArguments Kind = "invalid_arguments" // the arguments fail the tool's input schema; the server was not called
	KindGuardrail        Kind = "guardrail"         // a guardrail rule rejected the call's arguments or result
	KindToolHeld         Kind = "tool_held"         // the tool's definition is held until a person approves it
	KindNotHeld          Kind = "not_held"          // no definition of the tool is held for approval
	KindHeldChanged      Kind = "held_changed"      // the held definition changed since it was shown
	KindUnknownServer    Kind = "unknown_server"    // no server has the id
	KindUnknownEndpoint  Kind = "unknown_endpoint"  // no endpoint has the name
	KindUnknownPrompt    Kind = "unknown_prompt"    // no server has the prompt
	KindUnknownResource  Kind = "unknown_resource"  // no server can have the URI, or several can
	KindUnknownAgent     Kind = "unknown_agent"     // no agent has the name (or there are none)
	KindUnknownAgentRun  Kind = "unknown_agent_run" // no agent run has the id
	KindUnknownWorkflow  Kind = "unknown_workflow"  // no workflow has the id (or there are none)
	KindUnknownRun       Kind = "unknown_run"       // no workflow run has the id
	KindUnknownTask      Kind = "unknown_task"      // no task of the gateway has the id (or one outside your grant)
	KindInvalid          Kind = "invalid"           // a value its schema refuses, or one holding a secret (a run's inputs, a gate's answer)
	KindSelection        Kind = "selection"         // a run selects servers or tools the daemon does not have
	KindExists           Kind = "exists"            // the id is taken
	KindChanged          Kind = "changed"           // changed since it was read (a stale If-Match)
	KindReadOnly         Kind = "read_only"         // a server or endpoint of the configuration files, or a built-in server
	KindDisabled         Kind = "disabled"          // the server is disabled
	KindInputsDiffer     Kind = "inputs_differ"     // a run of that id was started with other inputs
	KindNotWaiting       Kind = "not_waiting"       // the run does not wait on that gate
	KindAnswered         Kind = "answered"          // the gate was answered already (another answer won)
	KindNotInterrupted   Kind = "not_interrupted"   // the run is not interrupted at that step (or it was resolved)
	KindLiveElsewhere    Kind = "live_elsewhere"    // the run is another live process's
	KindNoAPIKey         Kind = "no_api_key"        // the LLM provider needs a key and has none
	KindTimeout          Kind = "timeout"           // no answer in time; the call was cancelled
	KindUnavailable      Kind = "unavailable"       // a server is not connected, or the daemon is not running
	KindStartFailed      Kind = "start_failed"      // servers failed to start
	KindServerError      Kind = "server_error"      // a server answered with a protocol error, or the call to it failed
	KindProvider         Kind = "provider"          // the LLM provider cannot be reached, or a model call failed
	KindFailed           Kind = "failed"            // any other failure of the work
	KindInterrupted      Kind = "interrupted"       // Ctrl-C or SIGTERM
)

// kinds is the table, in the order KindOf tries it: what a call error
// wraps (a timeout, an unknown tool) before the call error itself. field
// is the request field a problem of the kind names. The kinds of the CLI
// alone (no_api_key, provider, interrupted) would be a 5xx if a face met
// one.
var kinds = []kindRow{
	{kind: KindConfig, status: 422, exit: 2, title: "invalid configuration", as: isA[*config.Problem]},
	{kind: KindUsage, status: 400, exit: 2, title: "bad request"},
	{kind: KindUnknownTool, status: 404, exit: 2, title: "no such tool", is: []error{host.ErrUnknownTool}},
	{kind: KindInvalidArguments, status: 422, exit: 2, title: "invalid arguments", field: "arguments", is: []error{host.ErrInvalidArguments}},
	{kind: KindGuardrail, status: 422, exit: 1, title: "rejected by a guardrail", is: []error{guardrail.ErrRejected}},
	{kind: KindToolHeld, status: 409, exit: 2, title: "held until approved", is: []error{host.ErrToolHeld}},
	{kind: KindNotHeld, status: 404, exit: 2, title: "nothing held for approval", is: []error{ErrNotHeld}},
	{kind: KindHeldChanged, status: 409, exit: 2, title: "the held definition changed since it was shown", field: "digest", is: []error{ErrHeldChanged}},
	{kind: KindUnknownEndpoint, status: 404, exit: 2, title: "no such endpoint", is: []error{ErrUnknownEndpoint}},
	{kind: KindUnknownServer, status: 404, exit: 2, title: "no such server", is: []error{host.ErrUnknownServer, store.ErrNotFound}},
	{kind: KindUnknownPrompt, status: 404, exit: 2, title: "no such prompt"},
	{kind: KindUnknownResource, status: 404, exit: 2, title: "no such resource"},
	{kind: KindUnknownAgent, status: 404, exit: 2, title: "no such agent", is: []error{ErrNoAgent, ErrNoAgents}},
	{kind: KindUnknownAgentRun, status: 404, exit: 2, title: "no such agent run", is: []error{ErrNoAgentRun}},
	{kind: KindUnknownWorkflow, status: 404, exit: 2, title: "no such workflow", is: []error{workflow.ErrNotFound}},
	{kind: KindUnknownRun, status: 404, exit: 2, title: "no such run", is: []error{workflow.ErrNoRun}},
	{kind: KindUnknownTask, status: 404, exit: 2, title: "no such task", is: []error{ErrNoTask}},
	{kind: KindInvalid, status: 422, exit: 2, title: "invalid value", is: []error{workflow.ErrHoldsSecret}, as: isA[*schema.ValidationError]},
	{kind: KindSelection, status: 422, exit: 2, title: "invalid mcp_servers or tools", is: []error{workflow.ErrSelection}},
	{kind: KindExists, status: 409, exit: 2, title: "the id is taken", field: "id", is: []error{store.ErrExists, host.ErrServerExists}},
	{kind: KindChanged, status: 412, exit: 2, title: "changed since you read it", field: "If-Match", is: []error{store.ErrConflict}},
	{kind: KindReadOnly, status: 409, exit: 2, title: "read-only", is: []error{ErrReadOnly}},
	{kind: KindDisabled, status: 409, exit: 2, title: "server disabled", is: []error{ErrDisabled}},
	{kind: KindInputsDiffer, status: 409, exit: 2, title: "a run of that id was started with other inputs", field: "run_id", is: []error{workflow.ErrInputsDiffer}},
	{kind: KindNotWaiting, status: 409, exit: 2, title: "the run is not waiting on that gate", field: "gate", is: []error{workflow.ErrNotWaiting}},
	{kind: KindAnswered, status: 409, exit: 2, title: "the gate was answered already", field: "gate", is: []error{workflow.ErrGateAnswered}},
	{kind: KindNotInterrupted, status: 409, exit: 2, title: "the run is not interrupted at that step", field: "step", is: []error{workflow.ErrNotInterrupted}},
	{kind: KindLiveElsewhere, status: 409, exit: 2, title: "the run or task is another process's", is: []error{ErrLiveElsewhere, gateway.ErrTaskElsewhere}},
	{kind: KindNoAPIKey, status: 500, exit: 2, title: "no API key"},
	{kind: KindTimeout, status: 504, exit: 1, title: "timed out", is: []error{host.ErrTimeout, context.DeadlineExceeded, context.Canceled}},
	{kind: KindStartFailed, status: 502, exit: 1, title: "servers failed to start", as: isA[*host.StartError]},
	{kind: KindUnavailable, status: 503, exit: 1, title: "unavailable", is: []error{ErrNotRunning, host.ErrUnavailable, host.ErrClosed, workflow.ErrClosed}},
	{kind: KindServerError, status: 502, exit: 1, title: "the call failed", as: func(err error) bool { return isA[*jsonrpc.Error](err) || isA[*host.CallError](err) }},
	{kind: KindProvider, status: 502, exit: 1, title: "the LLM provider failed"},
	{kind: KindFailed, status: 500, exit: 1, title: "internal error"},
	{kind: KindInterrupted, status: 503, exit: 130, title: "interrupted"},
}

type kindRow struct {
	kind         Kind
	status, exit int
	title, field string
	is           []error
	as           func(error) bool
}

func isA[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}

// row is k's row of the table; KindFailed's for a kind not in it.
func row(k Kind) kindRow {
	for _, r := range kinds {
		if r.kind == k {
			return r
		}
	}
	return row(KindFailed)
}

// KindOf is what err is: the kind it was made as (Kind.Errorf, and an
// error that crossed the wire), else the first kind of the table it
// matches, else KindFailed.
func KindOf(err error) Kind {
	var ke *kindError
	if errors.As(err, &ke) && row(ke.kind).kind == ke.kind {
		return ke.kind
	}
	for _, r := range kinds {
		if slices.ContainsFunc(r.is, func(s error) bool { return errors.Is(err, s) }) || r.as != nil && r.as(err) {
			return r.kind
		}
	}
	return KindFailed
}

// Status is k's HTTP status.
func (k Kind) Status() int { return row(k).status }

// Exit is k's exit code in the CLI.
func (k Kind) Exit() int { return row(k).exit }

// Title is the title of k's problem documents, the same for every one
// (RFC 9457 §3.1.3: the detail says what is particular).
func (k Kind) Title() string { return row(k).title }

// Field is the request field a problem of kind k names ("" for none).
func (k Kind) Field() string { return row(k).field }

// ProblemTypePrefix begins every problem type of the REST API: the type is
// the prefix and the kind. An identifier, not a link (RFC 9457 §3.1.1
// allows one that does not resolve); docs/api.md lists them.
const ProblemTypePrefix = "urn:switchboard:problem:"

// Type is k's RFC 9457 problem type.
func (k Kind) Type() string { return ProblemTypePrefix + string(k) }

// KindOfType is the kind of a problem type, for an error that comes back
// over the wire; "" for a type that is not ours (about:blank, or none:
// a problem of the request itself, told by its status alone).
func KindOfType(typ string) Kind {
	name, ok := strings.CutPrefix(typ, ProblemTypePrefix)
	if k := Kind(name); ok && row(k).kind == k {
		return k
	}
	return ""
}

// Errorf is an error of kind k, with fmt.Errorf's text and wrapping. It
// also matches (errors.Is) the sentinels of its kind in the table, so
// that an error decoded from the wire (KindOfType(…).Errorf) is branched
// on as the one that was sent.
func (k Kind) Errorf(format string, args ...any) error {
	return &kindError{kind: k, err: fmt.Errorf(format, args...)}
}

type kindError struct {
	kind Kind
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }
func (e *kindError) Is(target error) bool {
	return slices.Contains(row(e.kind).is, target)
}

// StatusOf is err's HTTP status, the same in every face: its kind's; for
// a server's own refusal of a request, what it refused: a resource it
// does not have (-32002 before SEP-2164, -32602 since, on resources/read)
// 404, other parameters it refuses (-32602, as for a prompt it does not
// have) 422.
func StatusOf(err error) int {
	k := KindOf(err)
	var ce *host.CallError
	var rpc *jsonrpc.Error
	if k == KindServerError && errors.As(err, &ce) && errors.As(err, &rpc) {
		switch {
		case rpc.Code == -32002 || rpc.Code == jsonrpc.CodeInvalidParams && ce.Method == "resources/read":
			return http.StatusNotFound
		case rpc.Code == jsonrpc.CodeInvalidParams:
			return http.StatusUnprocessableEntity
		}
	}
	return k.Status()
}
