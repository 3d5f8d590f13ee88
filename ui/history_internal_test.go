package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHistoryBounds: a browser keeps its last historyPerSession calls,
// newest first; no more than historySessions browsers are kept (the least
// recently used goes); ids never repeat; a browser sees only its own
// calls, and forget drops them.
func TestHistoryBounds(t *testing.T) {
	var h history
	seen := map[int64]bool{}
	for i := range historyPerSession + 5 {
		e := h.add("b1", histEntry{Tool: "t", ArgsText: fmt.Sprint(i)})
		if seen[e.ID] {
			t.Fatalf("id %d given twice", e.ID)
		}
		seen[e.ID] = true
	}
	got := h.of("b1", "t")
	if len(got) != historyPerSession {
		t.Fatalf("%d entries kept, want %d", len(got), historyPerSession)
	}
	if got[0].ArgsText != fmt.Sprint(historyPerSession+4) || got[len(got)-1].ArgsText != "5" {
		t.Errorf("kept %q … %q, want the newest first, the 5 oldest dropped", got[0].ArgsText, got[len(got)-1].ArgsText)
	}
	if _, ok := h.get("b1", got[3].ID); !ok {
		t.Error("get: an entry kept is not found")
	}
	if _, ok := h.get("b2", got[3].ID); ok {
		t.Error("get: another browser's entry is found")
	}
	if n := len(h.of("b1", "other")); n != 0 {
		t.Errorf("of another tool: %d entries", n)
	}
	// b1 is the least recently used of historySessions+1 browsers.
	for i := range historySessions {
		h.add(fmt.Sprint("x", i), histEntry{Tool: "t"})
	}
	if len(h.sessions) != historySessions {
		t.Errorf("%d browsers kept, want %d", len(h.sessions), historySessions)
	}
	if len(h.of("b1", "")) != 0 {
		t.Error("the least recently used browser was kept")
	}
	h.forget("x3")
	if len(h.of("x3", "")) != 0 {
		t.Error("forget kept the browser's calls")
	}
}

// TestCut: cut bounds a string, on a rune boundary, and says so.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc… (cut)"},
		{"aé", 2, "a… (cut)"}, // é is two bytes: not split
	} {
		if got := cut(c.in, c.n); got != c.want {
			t.Errorf("cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	long := strings.Repeat("x", 3*historySummaryMax)
	if s := summaryOf(&result{Blocks: []block{{Kind: "text", Text: long}, {Kind: "text", Text: long}}}); len(s) > historySummaryMax+len("… (cut)") {
		t.Errorf("a summary of %d bytes, over the bound %d", len(s), historySummaryMax)
	}
}

// TestCallCommand: the command line quotes each word for a POSIX shell
// (a single quote closes the quotes, escaped, and opens them again), gives
// no --args for no arguments, and masks the values of secret properties; fieldsOf marks those secret.
func TestCallCommand(t *testing.T) {
	for _, c := range []struct {
		tool, args string
		secret     []string
		want       string
	}{
		{"mcp_a_echo", `{"text":"hi"}`, nil, `switchboard call mcp_a_echo --args '{"text":"hi"}'`},
		{"mcp_a_echo", `{"text":"it's"}`, nil, `switchboard call mcp_a_echo --args '{"text":"it'\''s"}'`},
		{"mcp_a_echo", `{ "text" : "<b>&" }`, nil, `switchboard call mcp_a_echo --args '{"text":"<b>&"}'`},
		{"mcp_a_content", `{}`, nil, `switchboard call mcp_a_content`},
		{"mcp_a_content", ``, nil, `switchboard call mcp_a_content`},
		{"odd tool", `{"b":1,"a":2}`, nil, `switchboard call 'odd tool' --args '{"a":2,"b":1}'`},
		{"mcp_a_login", `{"user":"me","password":"hunter2"}`, []string{"password"}, `switchboard call mcp_a_login --args '{"password":"<secret>","user":"me"}'`},
	} {
		if got := CallCommand(c.tool, json.RawMessage(c.args), c.secret); got != c.want {
			t.Errorf("CallCommand(%q, %s, %q) =\n%s\nwant\n%s", c.tool, c.args, c.secret, got, c.want)
		}
	}
	fs := fieldsOf(map[string]any{"type": "object", "properties": map[string]any{
		"user":     map[string]any{"type": "string"},
		"password": map[string]any{"type": "string", "format": "password"},
		"key":      map[string]any{"type": "string", "writeOnly": true},
	}})
	var secret []string
	for _, f := range fs {
		if f.Secret {
			secret = append(secret, f.Name)
		}
	}
	if diff := cmp.Diff([]string{"key", "password"}, secret); diff != "" {
		t.Errorf("secret fields (-want +got):\n%s", diff)
	}
}

// TestFill: a call's arguments loaded into the form read back as the same
// arguments; a secret field is left for the person to type again.
func TestFill(t *testing.T) {
	fs := fieldsOf(map[string]any{"type": "object", "properties": map[string]any{
		"s":   map[string]any{"type": "string"},
		"n":   map[string]any{"type": "number"},
		"b":   map[string]any{"type": "boolean"},
		"e":   map[string]any{"enum": []any{"x", 2}},
		"l":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"j":   map[string]any{"type": "object"},
		"pwd": map[string]any{"type": "string", "format": "password"},
	}})
	args := `{"b":true,"e":2,"j":{"k":[1,2]},"l":["one","two"],"n":1.5,"pwd":"hunter2","s":"it's"}`
	fill(fs, json.RawMessage(args))
	form := map[string][]string{}
	for _, f := range fs {
		if f.Secret && f.Value != "" {
			t.Errorf("the secret field %s was filled in", f.Name)
		}
		form[f.ID] = []string{f.Value}
	}
	got, ok := argumentsOf(fs, form)
	if !ok {
		t.Fatalf("argumentsOf: errors %+v", fs)
	}
	want := `{"b":true,"e":2,"j":{"k":[1,2]},"l":["one","two"],"n":1.5,"s":"it's"}`
	if compactJSON(string(got)) != want {
		t.Errorf("read back %s, want %s", got, want)
	}
}
