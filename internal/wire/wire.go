// Package wire reads JSON-RPC 2.0 messages as the go-sdk reads them,
// without its decoder.
//
// The go-sdk (v1.8.0) decodes every value with a fresh decoder that makes
// a 32 KiB buffer, and reads a message from a stdio server twice (as a
// batch, then as one message): for the messages of a call through the
// gateway that is most of what the call allocates, and much of its CPU
// (docs/performance.md, "The go-sdk's decoder"). [DecodeMessage] gives the
// SDK's [jsonrpc.Message] for the same bytes, or an error where the SDK
// gives one, reading them once: names are matched exactly as the SDK
// matches them, a name given twice keeps its last value as the SDK's does,
// and members the SDK does not read are skipped. [Members] is the walk it
// is made of, for a caller that reads an object's members itself.
//
// Only where it is measured to matter: the lines of stdio servers and the
// messages of WebSocket connections (package transport), and the requests
// of the gateway's fast path (package gateway). Everything else is the
// SDK's.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ErrNotObject is the error of Members for data that is not one JSON
// object.
var ErrNotObject = errors.New("not a JSON object")

// Members calls f with the name and value of each member of the JSON
// object data, in order, a name given twice each time, and stops at the
// first error f returns. It returns an error wrapping ErrNotObject when
// data is not one object, alone but for white space, or is not valid
// JSON. A value is only f's until f returns: keep a copy (Clone).
func Members(data []byte, f func(name string, v jsontext.Value) error) error {
	d := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return notObject(err)
	}
	for d.PeekKind() == '"' {
		t, err := d.ReadToken()
		if err != nil {
			return notObject(err)
		}
		name := t.String()
		v, err := d.ReadValue()
		if err != nil {
			return notObject(err)
		}
		if err := f(name, v); err != nil {
			return err
		}
	}
	if t, err := d.ReadToken(); err != nil || t.Kind() != '}' {
		return notObject(err)
	}
	return nil
}

func notObject(err error) error {
	if err == nil {
		return ErrNotObject
	}
	return fmt.Errorf("%w: %v", ErrNotObject, err)
}

// String is the string v holds, as encoding/json decodes it; false when v
// is not a JSON string.
func String(v jsontext.Value) (string, bool) {
	if v.Kind() != '"' {
		return "", false
	}
	if b, err := jsontext.AppendUnquote(nil, v); err == nil {
		return string(b), true
	}
	var s string // what AppendUnquote refuses, encoding/json may mend
	return s, json.Unmarshal(v, &s) == nil
}

// errInvalidRequest is the SDK's error for a message that is neither a
// request (no method) nor a response (no id).
var errInvalidRequest = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// MaxDepth is the deepest nesting of objects and arrays DecodeMessage
// takes, the go-sdk's bound (v1.8.0, internal/json): a message nested
// deeper is refused whole, as the SDK refuses it.
const MaxDepth = 1000

// tooDeep reports whether data nests objects and arrays deeper than
// MaxDepth, reading it as the SDK's check does: brackets outside strings.
func tooDeep(data []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxDepth {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// DecodeMessage is jsonrpc.DecodeMessage: the request or response data
// holds, or an error where the SDK's has one (its wording may differ).
func DecodeMessage(data []byte) (jsonrpc.Message, error) {
	if tooDeep(data) {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: json: exceeded maximum nesting depth of %d", MaxDepth)
	}
	var (
		version           string
		id                any
		method            json.RawMessage
		params, result    json.RawMessage
		wireErr           *jsonrpc.Error
		hasVersion, hasID bool
	)
	err := Members(data, func(name string, v jsontext.Value) error {
		switch name {
		case "jsonrpc":
			hasVersion = true
			var ok bool
			if version, ok = String(v); !ok {
				return fmt.Errorf("jsonrpc: a %s, not a string", v.Kind())
			}
		case "id":
			hasID = true
			switch v.Kind() {
			case '"':
				s, ok := String(v)
				if !ok {
					return errors.New("id: an invalid string")
				}
				id = s
			case '0':
				f, err := strconv.ParseFloat(string(v), 64)
				if err != nil {
					return fmt.Errorf("id: %w", err)
				}
				id = f
			case 'n':
				id = nil
			default:
				id = v.Kind() // not an ID: MakeID refuses it
			}
		case "method":
			method = bytes.Clone(v)
		case "params":
			params = bytes.Clone(v)
		case "result":
			result = bytes.Clone(v)
		case "error":
			wireErr = nil
			return json.Unmarshal(v, &wireErr)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if !hasVersion || version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", version, "2.0")
	}
	if !hasID {
		id = nil
	}
	mid, err := jsonrpc.MakeID(id)
	if err != nil {
		return nil, err
	}
	if len(method) > 0 {
		m, ok := String(jsontext.Value(method))
		if !ok && jsontext.Value(method).Kind() != 'n' {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: method: a %s, not a string", jsontext.Value(method).Kind())
		}
		return &jsonrpc.Request{Method: m, ID: mid, Params: params}, nil
	}
	if !mid.IsValid() {
		return nil, errInvalidRequest
	}
	resp := &jsonrpc.Response{ID: mid, Result: result}
	if wireErr != nil {
		resp.Error = wireErr
	}
	return resp, nil
}
