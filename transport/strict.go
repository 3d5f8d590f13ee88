package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/strictjson"
)

// Strict about what servers send (the package doc's "Refused messages").

// ErrRefusedMessage is matched (errors.Is) by a [*RefusedError].
var ErrRefusedMessage = errors.New("refused the server's message")

// A RefusedError is a message from a server that the protocol does not
// allow, and that this package refused rather than let the SDK read it
// its own way. Its text says what was wrong without quoting the message.
type RefusedError struct {
	// Reason is what was wrong: a *strictjson.Error (a repeated member
	// name, bytes that are not UTF-8), or a batch where none may be.
	Reason error
}

func (e *RefusedError) Error() string { return ErrRefusedMessage.Error() + ": " + e.Reason.Error() }

func (e *RefusedError) Unwrap() []error { return []error{ErrRefusedMessage, e.Reason} }

// CodeRefusedMessage is the JSON-RPC error code of the answer a refused
// message is replaced with, so that the request it answered fails at once
// with a *RefusedError's text instead of waiting for an answer that was
// refused. The code is in JSON-RPC's range for implementations
// (-32000…-32099) and used by none of MCP, the go-sdk or the TypeScript
// SDK; [RefusedAnswer] reads it back. A server that sends this code
// itself only makes its error read as a refusal.
const CodeRefusedMessage = -32090

// RefusedAnswer returns the *RefusedError that an error answer made by
// this package stands for (one with [CodeRefusedMessage]), or nil.
func RefusedAnswer(je *jsonrpc.Error) *RefusedError {
	if je == nil || je.Code != CodeRefusedMessage {
		return nil
	}
	reason := strings.TrimPrefix(je.Message, ErrRefusedMessage.Error()+": ")
	return &RefusedError{Reason: errors.New(reason)}
}

var (
	errBatch = errors.New("a JSON-RPC batch (an array of messages), which MCP has not had since 2025-06-18")
	// Switchboard never sends a batch, so a batch holds no answer of its.
	errBatchAnswer = errors.New("a JSON-RPC batch holding an answer, which only a batch of requests may have (none was sent)")
)

// checkMessage returns a *RefusedError when data, one JSON-RPC message (or
// batch) as received, holds a repeated member name or bytes that are not
// UTF-8, or is a batch where batches may not be: on a session of
// 2025-06-18 or later, unless batches is set; holding a response, ever.
// Text that is not JSON (whatever else is wrong with it) is left to the
// SDK's decoder, which fails on it as before. A reader of one stream
// passes its own checker (nil: one from the pool).
func checkMessage(c *strictjson.Checker, data []byte, batches bool) error {
	check := strictjson.Check
	if c != nil {
		check = c.Check
	}
	if err := check(data); err != nil {
		if !jsontext.Value(data).IsValid(lenient...) {
			return nil // not JSON either: the SDK fails on it, as before
		}
		return &RefusedError{Reason: err}
	}
	if firstByte(data) != '[' {
		return nil
	}
	if !batches {
		return &RefusedError{Reason: errBatch}
	}
	var elems []struct {
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(data, &elems) == nil {
		for _, e := range elems {
			if e.Method == nil {
				return &RefusedError{Reason: errBatchAnswer}
			}
		}
	}
	return nil
}

// firstByte is the first byte of data that is not JSON whitespace, or 0.
func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// refusedAnswers returns what replaces a refused message: an error answer
// ([CodeRefusedMessage], err's text) for each request it may answer. Read
// leniently, every "id" of every object in it without a "method" member
// counts (an answer with two ids fails both requests: which one it meant
// is what it left unclear); requests and notifications get nothing: they
// are dropped. The SDK ignores an answer to a request it did not send.
func refusedAnswers(data []byte, err error) [][]byte {
	var answers [][]byte
	for _, id := range answeredIDs(data) {
		answers = append(answers, errorAnswer(id, err))
	}
	return answers
}

// errorAnswer is the error answer to request id (a JSON string or number).
func errorAnswer(id json.RawMessage, err error) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: CodeRefusedMessage, Message: err.Error()}})
	return b
}

// lenient reads what checkMessage refuses.
var lenient = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}

// answeredIDs lists the ids of the responses in data (a message or a
// batch), each once, canonical (a string's bad bytes become U+FFFD, as
// the SDK would read them).
func answeredIDs(data []byte) []json.RawMessage {
	d := jsontext.NewDecoder(bytes.NewReader(data), lenient...)
	var ids []json.RawMessage
	switch d.PeekKind() {
	case '{':
		ids = appendIDs(ids, d)
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return nil
		}
		for {
			at := d.InputOffset()
			switch d.PeekKind() {
			case '{':
				ids = appendIDs(ids, d)
			case ']', 0:
				return ids
			default:
				if d.SkipValue() != nil {
					return ids
				}
			}
			if d.InputOffset() == at {
				return ids // stuck on what it cannot read
			}
		}
	}
	return ids
}

// appendIDs reads the object at d and appends its ids if it is a response.
func appendIDs(ids []json.RawMessage, d *jsontext.Decoder) []json.RawMessage {
	var own []json.RawMessage
	method := false
	if _, err := d.ReadToken(); err != nil { // {
		return ids
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return ids
		}
		name := tok.String() // before the next read voids tok
		v, err := d.ReadValue()
		if err != nil {
			return ids
		}
		switch name {
		case "method":
			method = true
		case "id":
			if k := v.Kind(); k == '"' || k == '0' {
				var id any
				dec := json.NewDecoder(bytes.NewReader(v))
				dec.UseNumber()
				if dec.Decode(&id) == nil {
					b, _ := json.Marshal(id)
					own = append(own, b)
				}
			}
		}
	}
	if _, err := d.ReadToken(); err != nil { // }
		return ids
	}
	if method {
		return ids
	}
next:
	for _, id := range own {
		for _, seen := range ids {
			if bytes.Equal(seen, id) {
				continue next
			}
		}
		ids = append(ids, id)
	}
	return ids
}

// versionWatch reads the protocol version a client connection's
// initialize settles on, and sets batches when that version still has
// JSON-RPC batches (before 2025-06-18), for messageLines. The go-sdk tells
// a connection its session's version only on the server side.
type versionWatch struct {
	mcp.Connection
	batches *atomic.Bool

	mu      sync.Mutex
	pending jsonrpc.ID // of the initialize request sent, until it is answered
	waiting bool
}

func (c *versionWatch) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.IsCall() {
		c.mu.Lock()
		c.pending, c.waiting = req.ID, true
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *versionWatch) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.waiting && resp.ID == c.pending {
			c.waiting = false
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if resp.Error == nil && json.Unmarshal(resp.Result, &r) == nil {
				c.batches.Store(r.ProtocolVersion != "" && r.ProtocolVersion < firstVersionWithoutBatches)
			}
		}
		c.mu.Unlock()
	}
	return msg, err
}

// firstVersionWithoutBatches is the protocol version that removed JSON-RPC
// batches.
const firstVersionWithoutBatches = "2025-06-18"
