package strictjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/strictjson"
)

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want error  // nil, ErrDuplicateName or ErrInvalidUTF8
		msg  string // the error's text
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, nil, ""},
		{`{"a":1,"A":2}`, nil, ""}, // names are case-sensitive
		{`{"a":"\ud83d cut emoji"}`, nil, ""},
		{`[{"a":1},{"a":2}]`, nil, ""},
		{`{"a":tru}`, nil, ""}, // not JSON: the decoder's business
		{`not json at all`, nil, ""},
		{``, nil, ""},
		{`{"id":1,"result":{"x":1},"result":{"x":2}}`, strictjson.ErrDuplicateName, `duplicate member name "result"`},
		{`{"command":"a","\u0063ommand":"b"}`, strictjson.ErrDuplicateName, `duplicate member name "command"`},
		{`{"x":{"b":[1,{"c":1,"c":2}]}}`, strictjson.ErrDuplicateName, `duplicate member name "c" in x.b[1]`},
		{`{"env":{"MY VAR":"1","MY VAR":"2"}}`, strictjson.ErrDuplicateName, `duplicate member name "MY VAR" in env`},
		{`[{"id":1},{"id":2,"id":3}]`, strictjson.ErrDuplicateName, `duplicate member name "id" in [1]`},
		{"{\"a\":[\"ok\",\"bad \xff byte\"]}", strictjson.ErrInvalidUTF8, `invalid UTF-8 in a[1] at byte 16`},
		{"{\"a\":1,\"a\":\"\xff\"}", strictjson.ErrInvalidUTF8, `invalid UTF-8 in a at byte 12`},
		{"\xfe", strictjson.ErrInvalidUTF8, `invalid UTF-8 at byte 0`},
	} {
		err := strictjson.Check([]byte(tt.in))
		if tt.want == nil {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", tt.in, err)
			}
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("Check(%q) = %v, want %v", tt.in, err, tt.want)
			continue
		}
		if err.Error() != tt.msg {
			t.Errorf("Check(%q) = %q, want %q", tt.in, err.Error(), tt.msg)
		}
	}
}

// TestCheckLongName: a repeated name is quoted cut, never whole: a name
// is the sender's to choose.
func TestCheckLongName(t *testing.T) {
	name := strings.Repeat("n", 10_000)
	err := strictjson.Check([]byte(`{"` + name + `":1,"` + name + `":2}`))
	var e *strictjson.Error
	if !errors.As(err, &e) || e.Name != name {
		t.Fatalf("Check = %v, want an *Error naming the name", err)
	}
	if len(err.Error()) > 120 {
		t.Errorf("the error's text is %d bytes: %.80s…", len(err.Error()), err)
	}
}

// message is a typical answer of a tool: a few hundred bytes.
var message = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"The weather in Paris is 18 °C and cloudy, with light winds from the west."}],"structuredContent":{"city":"Paris","temperature":18,"unit":"C","sky":"cloudy"},"isError":false}}`)

// large is a 1 MiB answer: a long text, a list of objects.
var large = func() []byte {
	type item struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
		Tags []string
	}
	items := make([]item, 5000)
	for i := range items {
		items[i] = item{i, "item " + strings.Repeat("é", 20), []string{"a", "b"}}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": strings.Repeat("lorem ipsum ", 40_000)}}, "items": items}})
	return b
}()

func BenchmarkCheck(b *testing.B) {
	for _, bb := range []struct {
		name string
		data []byte
	}{{"message", message}, {"1MiB", large}} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := strictjson.Check(bb.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode is what reading the same text costs the go-sdk's way
// (a generic decode), for scale.
func BenchmarkDecode(b *testing.B) {
	for _, bb := range []struct {
		name string
		data []byte
	}{{"message", message}, {"1MiB", large}} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.data)))
			b.ReportAllocs()
			for b.Loop() {
				var v struct {
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(bb.data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
