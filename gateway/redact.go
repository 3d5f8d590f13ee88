package gateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/secret"
)

// The gateway's face redacts everything it sends, over every transport
// (Streamable HTTP in both generations, SSE, WebSocket, stdio): the results
// and errors of its clients' requests, and the requests and notifications
// it sends them. The host already redacts what servers send (its edge);
// this is the face's own guarantee, which also covers what the gateway
// writes itself — an error quoting a configuration value, say.

// redactResponses is the outermost receiving middleware: what a handler
// answers is redacted last, after everything else has had its say.
func (g *Gateway) redactResponses(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return nil, redactError(g.red, err)
		}
		if res != nil {
			res = secret.RedactValue(g.red, res)
		}
		return res, nil
	}
}

// redactOutgoing is the sending middleware: the gateway's requests
// (elicitation, sampling, roots) and notifications (progress, log messages,
// resource updates) to its clients.
func (g *Gateway) redactOutgoing(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return next(ctx, method, secret.RedactValue(g.red, req))
	}
}

// redactError returns err, or when it holds a secret the error the SDK
// would have sent, redacted: a protocol error keeps its code and data
// (redacted); another error is sent, as the SDK sends it, with its text as
// the message and the code of the protocol error it wraps, if any.
func redactError(red *secret.Redactor, err error) error {
	if je, ok := err.(*jsonrpc.Error); ok {
		return secret.RedactValue(red, je)
	}
	msg := err.Error()
	redacted := red.Redact(msg)
	if redacted == msg {
		return err
	}
	var code int64
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		code = je.Code
	}
	return &jsonrpc.Error{Code: code, Message: redacted}
}
