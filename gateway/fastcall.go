package gateway

// The fast path: a 2026-07-28 client's tools/call served without a
// session made for it.
//
// The go-sdk (v1.8.0) serves each request of a 2026-07-28 client by
// connecting a server session for that one request: it reads the body,
// decodes it five times over (a fresh decoder, with its own 32 KiB buffer,
// for each), starts the session's reader, hands the request to it and the
// answer back across three goroutines, and closes the session again. For
// the request clients make most, a plain tools/call, fastCall does instead
// what that amounts to, on the HTTP handler's own goroutine:
//
//   - it decodes the body once, and serves it only when the SDK would serve
//     it without an error of its own: one request, method tools/call,
//     Mcp-Method, Mcp-Name and MCP-Protocol-Version agreeing with it, the
//     _meta that 2026-07-28 requires, nothing else in params but name and
//     arguments, no Mcp-Param-* headers and a tool that declares none. Any
//     other request, and any request that asks for something streamed
//     back during the call (a progress token, a log level) or for a task
//     (the client declares the tasks extension), goes to the SDK as before,
//     unchanged;
//   - it runs the request through the endpoint's whole chain of receiving
//     middleware (endpoint.chain, captured from the SDK's own: the same
//     functions, in the same order, down to the SDK's dispatch to the
//     tool), on the endpoint's one stateless session (statelessSession),
//     whose state says 2026-07-28 as each of the SDK's sessions for such a
//     request does; a middleware that looks at the session sees what it
//     would see there, and one that reaches the client through it finds
//     none, as no such request would have one to reach;
//   - it answers as the SDK does: the result with the endpoint's
//     serverInfo in _meta and its resultType, as one server-sent event (or
//     application/json, HTTPOptions.JSONResponse); a protocol error that
//     2026-07-28 gives a status of its own (SEP-2575: 404, 400) alone, as
//     application/json with that status.
//
// Everything the gateway applies to a call (the guard, the endpoint's
// policy, held tools, argument validation, guardrails, redaction,
// telemetry, the request bounds) is in that chain, so it applies here as
// it does on the SDK's path. TestFastCallSameAnswers sends the same
// requests both ways and compares the answers.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/wire"
)

// fastOff turns the fast path off (tests do, to compare), and fastServed
// counts the requests it served.
var (
	fastOff    atomic.Bool
	fastServed atomic.Int64
)

// fastCall serves r, a POST of a 2026-07-28 client whose Mcp-Method is
// tools/call, when it is a request the fast path serves (see above). It
// reports false, with r's body as it was, when it is not: the caller then
// hands r to the SDK.
func (b *byGeneration) fastCall(w http.ResponseWriter, r *http.Request) bool {
	if fastOff.Load() || b.ep == nil || !fastHeaders(r.Header) {
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.maxBody))
	if err != nil {
		// As the SDK answers it.
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return true
		}
		http.Error(w, "failed to read body: "+err.Error(), http.StatusBadRequest)
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	fc, ok := parseFastCall(body)
	if !ok || fc.tasks || fc.name != r.Header.Get("Mcp-Name") || b.ep.declaresHeaders(fc.name) {
		return false
	}
	ss, err := b.ep.statelessSession()
	if err != nil {
		return false
	}
	req := &mcp.CallToolRequest{
		Session: ss,
		Params:  &mcp.CallToolParamsRaw{Meta: fc.meta, Name: fc.name, Arguments: fc.arguments},
		Extra:   &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header},
	}
	fastServed.Add(1)
	msg, status := b.ep.answer(r.Context(), fc.id, req)
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	if status != http.StatusOK {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(msg)
		return true
	}
	if b.json {
		h.Set("Content-Type", "application/json")
		w.Write(msg)
		return true
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	out := make([]byte, 0, len(msg)+len("event: message\ndata: \n\n"))
	out = append(out, "event: message\ndata: "...)
	out = append(out, msg...)
	out = append(out, "\n\n"...)
	w.Write(out)
	return true
}

// fastHeaders reports whether h are the headers of a request the fast
// path may serve: JSON, MCP-Protocol-Version 2026-07-28, no
// Last-Event-ID, no Mcp-Param-* headers.
func fastHeaders(h http.Header) bool {
	if h.Get("Mcp-Protocol-Version") != firstSessionlessVersion || len(h.Values("Last-Event-ID")) > 0 {
		return false
	}
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	for k := range h {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	return true
}

// A fastRequest is a tools/call as the fast path serves it.
type fastRequest struct {
	id        jsonrpc.ID
	name      string
	arguments json.RawMessage
	meta      mcp.Meta
	tasks     bool // the client declares the tasks extension
	caps      bool // its capabilities were read
}

// parseFastCall decodes body, a tools/call the fast path serves, or
// reports false: for anything else, and anything it is not sure the SDK
// would take as it does (see the comment at the top of this file). The
// message is read as the SDK reads it (wire.DecodeMessage), once.
func parseFastCall(body []byte) (fastRequest, bool) {
	var fc fastRequest
	if firstJSONByte(body) != '{' {
		return fc, false // a batch, or not JSON: the SDK's to answer
	}
	msg, err := wire.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != "tools/call" || !req.IsCall() {
		return fc, false
	}
	fc.id = req.ID
	var meta jsontext.Value
	var name bool
	err = wire.Members(req.Params, func(k string, v jsontext.Value) error {
		switch k {
		case "name":
			name = true
			var ok bool
			if fc.name, ok = wire.String(v); !ok || fc.name == "" {
				return errNotFast
			}
		case "arguments":
			if v.Kind() != '{' {
				return errNotFast
			}
			fc.arguments = json.RawMessage(v.Clone())
		case "_meta":
			if v.Kind() != '{' {
				return errNotFast
			}
			meta = v.Clone()
		default:
			return errNotFast
		}
		return nil
	})
	if err != nil || !name || meta == nil {
		return fc, false
	}
	// The _meta that 2026-07-28 requires, checked as the SDK checks it
	// (validateRequestMeta): what it might refuse is left to it. A request
	// that asks for something streamed during the call is the SDK's too.
	var version bool
	err = wire.Members(meta, func(k string, v jsontext.Value) error {
		switch k {
		case mcp.MetaKeyProtocolVersion:
			pv, ok := wire.String(v)
			version = ok && pv == firstSessionlessVersion
		case "progressToken", mcp.MetaKeyLogLevel:
			return errNotFast
		case mcp.MetaKeyClientCapabilities:
			var caps *mcp.ClientCapabilities
			if v.Kind() != '{' || json.Unmarshal(v, &caps) != nil || caps == nil {
				return errNotFast
			}
			_, fc.tasks = caps.Extensions[TasksExtension]
			fc.caps = true
		case mcp.MetaKeyClientInfo:
			var impl *mcp.Implementation
			if v.Kind() != '{' || json.Unmarshal(v, &impl) != nil {
				return errNotFast
			}
		}
		return nil
	})
	if err != nil || !version || !fc.caps || json.Unmarshal(meta, &fc.meta) != nil {
		return fc, false
	}
	return fc, true
}

// errNotFast ends the reading of a request the fast path leaves to the
// SDK.
var errNotFast = errors.New("not for the fast path")

// declaresHeaders reports whether the endpoint's tool name declares
// parameters carried in headers (x-mcp-header), which the SDK checks
// against the request's Mcp-Param-* headers: such a call is the SDK's.
func (ep *endpoint) declaresHeaders(name string) bool {
	ep.g.mu.Lock()
	defer ep.g.mu.Unlock()
	return strings.Contains(ep.listed[name], "x-mcp-header")
}

// answer runs req through the endpoint's chain and returns the JSON-RPC
// response to request id, as the SDK would make it, and its HTTP status:
// 200, or, for the protocol errors that 2026-07-28 gives one (SEP-2575),
// 404 or 400, when the SDK answers with the error alone, as
// application/json.
func (ep *endpoint) answer(ctx context.Context, id jsonrpc.ID, req *mcp.CallToolRequest) ([]byte, int) {
	res, err := ep.serveFast(ctx, req)
	status := http.StatusOK
	var resp jsonrpc.Response
	resp.ID = id
	switch {
	case err != nil:
		resp.Error = err
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			switch je.Code {
			case jsonrpc.CodeMethodNotFound:
				status = http.StatusNotFound
			case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
				status = http.StatusBadRequest
			}
		}
	case res == nil:
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call: no result"}
	default:
		// The SDK names the server in every result to a 2026-07-28
		// client, where the result does not already (ownIdentity removed
		// an upstream's).
		m := res.GetMeta()
		if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
			if m == nil {
				m = map[string]any{}
			}
			m[mcp.MetaKeyServerInfo] = ep.impl
			res.SetMeta(m)
		}
		resp.Result, err = json.Marshal(res)
		if err != nil {
			resp.Result, resp.Error = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tools/call: encoding the result: %v", err)}
		}
	}
	msg, err := jsonrpc.EncodeMessage(&resp)
	if err != nil {
		msg, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call: encoding the answer failed"}})
		status = http.StatusOK
	}
	return msg, status
}

// serveFast runs req through the chain; a panic in it fails the call,
// not the gateway.
func (ep *endpoint) serveFast(ctx context.Context, req *mcp.CallToolRequest) (res mcp.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			ep.g.log.Error("gateway: tools/call panicked", "tool", req.Params.Name, "panic", ep.g.red.Redact(fmt.Sprint(p)))
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call: internal error"}
		}
	}()
	return ep.chain(ctx, "tools/call", req)
}

// statelessSession is the endpoint's session for the requests of
// 2026-07-28 clients the fast path serves, made on first use: its state
// is that of a 2026-07-28 request's own session in the SDK, and nothing
// reaches it (its connection is a statelessConn). It ends with the
// gateway, or with the endpoint.
func (ep *endpoint) statelessSession() (*mcp.ServerSession, error) {
	ep.stateless.once.Do(func() {
		g := ep.g
		conn := &statelessConn{done: make(chan struct{})}
		ss, err := ep.srv.Connect(g.ctx, conn, &mcp.ServerSessionOptions{State: &mcp.ServerSessionState{
			InitializeParams: &mcp.InitializeParams{ProtocolVersion: firstSessionlessVersion, Capabilities: &mcp.ClientCapabilities{}},
		}})
		ep.stateless.ss, ep.stateless.err = ss, err
	})
	return ep.stateless.ss, ep.stateless.err
}

// statelessSessionState is an endpoint's stateless session, made once.
type statelessSessionState struct {
	once sync.Once
	ss   *mcp.ServerSession
	err  error
}

// statelessConn is the connection of an endpoint's stateless session, and
// its transport: nothing arrives on it; a notification sent on it has no
// client to reach and is dropped (the requests it serves asked for none
// during the call); a request sent on it fails at once.
type statelessConn struct {
	done chan struct{}
	once sync.Once
}

func (c *statelessConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

func (c *statelessConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *statelessConn) Write(_ context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
		return fmt.Errorf("%s: a 2026-07-28 request has no client to ask; ask with an input-required result", r.Method)
	}
	return nil
}

func (c *statelessConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *statelessConn) SessionID() string { return "" }
