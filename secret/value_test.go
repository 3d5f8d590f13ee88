package secret_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/secret"
)

const valueCanary = `Cy7<"sec\ret&>zQ` // JSON and HTML escaping both change it

func newValueRedactor() *secret.Redactor {
	r := secret.NewRedactor()
	r.Add(valueCanary)
	return r
}

// jsonOf marshals v, failing the test on error.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return string(b)
}

// leaks reports whether the JSON text holds the canary in any spelling
// json.Marshal can give it.
func leaks(t *testing.T, text string) bool {
	t.Helper()
	return strings.Contains(text, valueCanary) || strings.Contains(text, strings.Trim(jsonOf(t, valueCanary), `"`)) ||
		strings.Contains(text, "Cy7")
}

// Every content kind of an MCP result, structuredContent and _meta:
// nothing of the canary survives, the original is untouched, and what did
// not need redacting is kept.
func TestRedactValueMCPResult(t *testing.T) {
	r := newValueRedactor()
	raw := json.RawMessage(`{"k":"` + strings.Trim(jsonOf(t, valueCanary), `"`) + `","n":1}`)
	res := &mcp.CallToolResult{
		Meta: mcp.Meta{"leak": valueCanary, valueCanary: "as a key", "keep": "plain"},
		Content: []mcp.Content{
			&mcp.TextContent{Text: "token=" + valueCanary},
			&mcp.ImageContent{Data: []byte("png" + valueCanary), MIMEType: "image/png"},
			&mcp.AudioContent{Data: []byte(valueCanary), MIMEType: "audio/wav"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://x", Text: valueCanary, Blob: []byte(valueCanary)}},
			&mcp.ResourceLink{URI: "test://" + valueCanary, Name: "n", Description: valueCanary},
			&mcp.TextContent{Text: "untouched"},
		},
		StructuredContent: map[string]any{"v": []any{"a", valueCanary, map[string]any{"deep": valueCanary}}, "raw": raw},
	}
	before := jsonOf(t, res)
	got := secret.RedactValue(r, res)
	after := jsonOf(t, got)
	if leaks(t, after) {
		t.Errorf("redacted result still holds the canary:\n%s", after)
	}
	if jsonOf(t, res) != before {
		t.Errorf("RedactValue modified its argument")
	}
	if got == res {
		t.Fatalf("a result with secrets came back as the same pointer")
	}
	if got.Content[5] != res.Content[5] {
		t.Errorf("an untouched content block was copied, not shared")
	}
	if got.Meta["keep"] != "plain" || !strings.Contains(after, `"untouched"`) {
		t.Errorf("redaction lost what needed none: %s", after)
	}
	if !strings.Contains(after, secret.Redacted) {
		t.Errorf("no %s marker in %s", secret.Redacted, after)
	}
	// The raw JSON stays JSON, with its other members.
	var back struct {
		StructuredContent struct {
			Raw map[string]any `json:"raw"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(after), &back); err != nil || back.StructuredContent.Raw["n"] != 1.0 {
		t.Errorf("raw JSON after redaction: %v, %+v", err, back.StructuredContent.Raw)
	}
}

func TestRedactValueNothingToRedact(t *testing.T) {
	r := newValueRedactor()
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}},
		StructuredContent: map[string]any{"a": []any{1.0, "b"}}, Meta: mcp.Meta{"x": "y"}}
	if got := secret.RedactValue(r, res); got != res {
		t.Errorf("a clean value was copied")
	}
	allocs := testing.AllocsPerRun(100, func() { secret.RedactValue(r, res) })
	if allocs > 2 {
		t.Errorf("RedactValue of a clean result: %v allocations, want at most 2", allocs)
	}
	empty := secret.NewRedactor()
	if allocs := testing.AllocsPerRun(100, func() { secret.RedactValue(empty, res) }); allocs != 0 {
		t.Errorf("RedactValue with no secret registered: %v allocations, want 0", allocs)
	}
}

type node struct {
	Blob []byte
	Name string
	Next *node
	Any  any
	priv string
	Arr  [2]string
}

func TestRedactValueShapes(t *testing.T) {
	r := newValueRedactor()
	// Invalid JSON in a RawMessage is redacted as text.
	if got := secret.RedactValue(r, json.RawMessage(`{"a":`+valueCanary)); string(got) != `{"a":[REDACTED]` {
		t.Errorf("invalid raw JSON: %s", got)
	}
	// A cycle ends the walk; unexported fields are copied, not inspected.
	n := &node{Blob: []byte(valueCanary), Name: valueCanary, priv: valueCanary, Arr: [2]string{"x", valueCanary}}
	n.Next = n
	n.Any = n
	got := secret.RedactValue(r, n)
	if got.Name != secret.Redacted || string(got.Blob) != secret.Redacted || got.Arr[1] != secret.Redacted || got.Arr[0] != "x" {
		t.Errorf("got %+v", got)
	}
	if got.priv != valueCanary {
		t.Errorf("an unexported field changed")
	}
	if n.Name != valueCanary {
		t.Errorf("the original changed")
	}

	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"string", valueCanary, `"[REDACTED]"`},
		{"bytes", []byte("a" + valueCanary), `"` + "YVtSRURBQ1RFRF0=" + `"`},
		{"map key", map[string]int{valueCanary: 1, "k": 2}, `{"[REDACTED]":1,"k":2}`},
		{"nested any", []any{map[string]any{"x": []any{valueCanary}}}, `[{"x":["[REDACTED]"]}]`},
		{"raw message escapes", json.RawMessage(jsonOf(t, map[string]string{"a": valueCanary})), `{"a":"[REDACTED]"}`},
		{"nil map", map[string]any(nil), `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonOf(t, secret.RedactValue(r, tc.in)); got != tc.want {
				t.Errorf("RedactValue(%s) = %s, want %s", tc.name, got, tc.want)
			}
		})
	}
}

// FuzzRedactValue: whatever JSON value and secret, no string of the
// redacted value holds the secret, and the input is never modified.
func FuzzRedactValue(f *testing.F) {
	f.Add([]byte(`{"a":"xx-SECRET-xx","b":["SECRET",{"SECRET":1}]}`), "SECRET")
	f.Add([]byte(`"\u003csecret\u003e"`), "<secret>")
	f.Add([]byte(`[1,2,{"k":null}]`), "abcd")
	f.Fuzz(func(t *testing.T, doc []byte, sec string) {
		var v any
		if json.Unmarshal(doc, &v) != nil || len(sec) < secret.MinLen {
			return
		}
		r := secret.NewRedactor()
		r.Add(sec)
		before, _ := json.Marshal(v)
		got := secret.RedactValue(r, v)
		if after, _ := json.Marshal(v); string(after) != string(before) {
			t.Fatalf("the input changed")
		}
		var check func(any)
		check = func(x any) {
			switch x := x.(type) {
			case string:
				if strings.Contains(x, sec) {
					t.Fatalf("%q survives in %q", sec, x)
				}
			case []any:
				for _, e := range x {
					check(e)
				}
			case map[string]any:
				for k, e := range x {
					check(k)
					check(e)
				}
			}
		}
		check(got)
	})
}
