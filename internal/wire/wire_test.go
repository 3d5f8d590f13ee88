package wire_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/internal/wire"
)

// corpus are messages and near-messages: what DecodeMessage must read as
// the SDK reads them.
var corpus = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","id":"a\u0062c","method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}`,
	`{"jsonrpc":"2.0","id":7,"result":null}`,
	`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"bad","data":{"k":[1,2]}}}`,
	`{"jsonrpc":"2.0","id":8,"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":9,"method":null}`,
	`{"jsonrpc":"2.0","id":9.0,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":9.5,"method":"x"}`,
	`{"jsonrpc":"2.0","id":-3,"method":"x","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":null,"method":"x"}`,
	`{"jsonrpc":"2.0","id":true,"method":"x"}`,
	`{"jsonrpc":"2.0","id":{},"method":"x"}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"1.0","id":1,"method":"x"}`,
	`{"jsonrpc":2,"id":1,"method":"x"}`,
	`{"id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"Method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"error":"boom"}`,
	`{"jsonrpc":"2.0","id":1,"extra":{"deep":[{"a":1}]},"result":{"b":2}}`,
	`  {"jsonrpc":"2.0","id":1,"result":{}}  `,
	`{"jsonrpc":"2.0","id":1,"result":{}} x`,
	`{"jsonrpc":"2.0","id":1,"result":{}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`"string"`,
	`null`,
	``,
}

// TestDecodeMessageAsSDK: for each message of the corpus, DecodeMessage
// gives the SDK's message, or fails where the SDK's fails; and at the
// SDK's bound on nesting, on either side of it, in params and in a
// string (which does not nest).
func TestDecodeMessageAsSDK(t *testing.T) {
	for _, s := range corpus {
		same(t, []byte(s))
	}
	for _, depth := range []int{wire.MaxDepth - 1, wire.MaxDepth, wire.MaxDepth + 1} {
		nested := strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1)
		same(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":`+nested+`}`))
		same(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"`+strings.Repeat("[", depth+5)+`"}}`))
	}
}

// FuzzDecodeMessage: the same, for any bytes.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range corpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { same(t, data) })
}

func same(t *testing.T, data []byte) {
	t.Helper()
	want, werr := jsonrpc.DecodeMessage(data)
	got, gerr := wire.DecodeMessage(data)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%q: DecodeMessage: %v, %v; the SDK's: %v, %v", data, got, gerr, want, werr)
	}
	if werr != nil {
		return
	}
	if !reflect.DeepEqual(norm(got), norm(want)) {
		t.Errorf("%q: DecodeMessage: %#v; the SDK's: %#v", data, norm(got), norm(want))
	}
}

// norm is a message with its raw JSON compacted (the SDK's keeps the
// bytes as they came, as DecodeMessage does; equal either way).
func norm(m jsonrpc.Message) any {
	compact := func(r json.RawMessage) string {
		if r == nil {
			return "<nil>"
		}
		var v any
		if json.Unmarshal(r, &v) != nil {
			return "invalid:" + string(r)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		return [4]any{"request", m.ID, m.Method, compact(m.Params)}
	case *jsonrpc.Response:
		var e any
		if m.Error != nil {
			je := m.Error.(*jsonrpc.Error)
			e = [3]any{je.Code, je.Message, compact(je.Data)}
		}
		return [4]any{"response", m.ID, compact(m.Result), e}
	}
	return m
}
