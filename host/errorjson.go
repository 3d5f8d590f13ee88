package host

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/guardrail"
)

// ErrorJSON is an error of the host's in a form that crosses a process
// boundary: the cause of a REST API problem, the _meta of a tool result
// the gateway made from a failed call. [ErrorJSON.Err] turns it back into an
// error with the same text that matches the same sentinels ([ErrTimeout],
// [ErrInvalidArguments], …) with errors.Is and, when it was one, is a
// [*CallError] with the same fields and carries the server's
// *jsonrpc.Error, so that a caller on the other side reports it, and
// branches on it, as it would in process.
type ErrorJSON struct {
	// Message is the whole error text; for a call, the text of its Err.
	Message string `json:"message"`
	// Is names the sentinels the error matches, by their text.
	Is []string `json:"is,omitempty"`
	// Call is set when the error is a *CallError.
	Call *CallErrorJSON `json:"call,omitempty"`
	// RPC is the server's protocol error the error carries, if any: its
	// code, message and data.
	RPC *jsonrpc.Error `json:"rpc,omitempty"`
}

// CallErrorJSON is a [CallError]'s fields but its Err.
type CallErrorJSON struct {
	Server   string        `json:"server"`
	Tool     string        `json:"tool,omitempty"`
	Method   string        `json:"method,omitempty"`
	Target   string        `json:"target,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	Timeout  time.Duration `json:"timeout_ns,omitempty"`
}

// sentinels are the errors ErrorJSON carries by name: the host's, and the
// context's (a cancelled or timed-out call).
var sentinels = []error{
	ErrUnknownTool, ErrUnknownServer, ErrInvalidArguments, ErrTimeout, ErrUnavailable,
	ErrClosed, ErrOlderGeneration, ErrCircuitOpen, context.Canceled, context.DeadlineExceeded,
	guardrail.ErrRejected,
}

// NewErrorJSON is err's wire form; nil for nil.
func NewErrorJSON(err error) *ErrorJSON {
	if err == nil {
		return nil
	}
	e := &ErrorJSON{Message: err.Error()}
	var ce *CallError
	if errors.As(err, &ce) && ce.Err != nil {
		e.Message = ce.Err.Error()
		e.Call = &CallErrorJSON{Server: ce.Server, Tool: ce.Tool, Method: ce.Method, Target: ce.Target, Duration: ce.Duration, Timeout: ce.Timeout}
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			e.Is = append(e.Is, s.Error())
		}
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		e.RPC = je
	}
	return e
}

// Err is the error e describes; nil for nil.
func (e *ErrorJSON) Err() error {
	if e == nil {
		return nil
	}
	inner := &remoteError{msg: e.Message, rpc: e.RPC}
	for _, name := range e.Is {
		for _, s := range sentinels {
			if s.Error() == name {
				inner.is = append(inner.is, s)
			}
		}
	}
	if c := e.Call; c != nil {
		return &CallError{Server: c.Server, Tool: c.Tool, Method: c.Method, Target: c.Target, Duration: c.Duration, Timeout: c.Timeout, Err: inner}
	}
	return inner
}

// remoteError is an error that crossed the wire: its text, the sentinels
// it matched, and the protocol error it carried.
type remoteError struct {
	msg string
	is  []error
	rpc *jsonrpc.Error
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Unwrap() error {
	if e.rpc == nil {
		return nil
	}
	return e.rpc
}

func (e *remoteError) Is(target error) bool {
	for _, s := range e.is {
		if s == target {
			return true
		}
	}
	return false
}
