package host

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/secret"
)

// Redaction at the host's edge. A server may send back a secret the host
// gave it (a stdio server echoing its environment, an HTTP server echoing
// its Authorization header). Everything a server sends passes through one
// of these before anything in the process sees it, so no face — the CLI,
// an agent's model, the gateway's clients — can receive a resolved
// secret's value from a server:
//
//   - redactResults, the sending middleware of every client: the results
//     of the host's requests (initialize, every list, tools/call,
//     resources/read, prompts/get, completion) and their errors;
//   - redactRequests, the receiving middleware of every client: what a
//     server asks or tells unasked (elicitation, sampling, roots,
//     log messages, resource updates);
//   - the progress taps (progress.go), which read notifications off the
//     wire before the SDK, redact them with redactParams;
//   - redactErr for the errors the host writes itself, which may quote a
//     child's stderr or a transport's message (and, with the logger, keeps
//     upstream session ids out too: sessionid.go).

// redactResults redacts what servers answer, and their protocol errors.
func (s *server) redactResults(next mcp.MethodHandler) mcp.MethodHandler {
	red := s.h.red
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return nil, redactRPCError(red, err)
		}
		if res != nil {
			res = secret.RedactValue(red, res)
		}
		return res, nil
	}
}

// redactRequests redacts the requests and notifications servers send.
func (s *server) redactRequests(next mcp.MethodHandler) mcp.MethodHandler {
	red := s.h.red
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return next(ctx, method, redactParams(red, req))
	}
}

// redactParams returns req, or a copy of it whose params are redacted. A
// request is a *ClientRequest[P]: its session has no exported field, so
// the walk reaches the params (and transport extras) only.
func redactParams(red *secret.Redactor, req mcp.Request) mcp.Request {
	return secret.RedactValue(red, req)
}

// redactRPCError redacts a server's protocol error. Other errors are the
// SDK's or the transport's; their text is redacted where the host reports
// them (redactErr).
func redactRPCError(red *secret.Redactor, err error) error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return err
	}
	msg := red.Redact(je.Message)
	data := redactRaw(red, je.Data)
	if msg == je.Message && len(data) == len(je.Data) && red.Redact(err.Error()) == err.Error() {
		return err
	}
	// The redacted copy replaces the whole chain: wrapping the original
	// would let errors.As reach its raw message.
	return &jsonrpc.Error{Code: je.Code, Message: msg, Data: data}
}

// redactErr returns err, or, when its text holds a secret, an error with
// the redacted text that still matches err's sentinels with errors.Is
// (ErrTimeout, ErrUnavailable, context.Canceled, ...) but does not unwrap
// to the raw error.
func (h *Host) redactErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := h.redact(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is matches what the original matches: the sentinels carry no secret.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }
