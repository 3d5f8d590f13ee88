package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// TestFormShowsHiddenText: what the host does not clean in a question,
// because the server must get it back as sent — property names, enum and
// const values — reaches the terminal quoted, its escapes and invisible
// characters written out, never acted on.
func TestFormShowsHiddenText(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"na\u001bme":{"type":"string","enum":["red\u001b[2J","b\u202eevil"]},
		"size":{"type":"string","oneOf":[{"const":"s\u200b","title":"Small"}],"default":"s\u200b"}}}`)
	fields, err := formFields(schema)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, fd := range fields {
		text.WriteString(fd.label() + "\n" + fd.hint() + "\n")
		if problem := fd.validate("x"); problem != "" {
			text.WriteString(shown(problem) + "\n")
		}
	}
	out := text.String()
	if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && !unicode.IsGraphic(r) }); i >= 0 {
		t.Errorf("the form writes %q, with a hidden character at %d", out, i)
	}
	for _, want := range []string{`"na\x1bme"`, `1) "red\x1b[2J"`, `2) "b\u202eevil"`, `1) Small ("s\u200b")`} {
		if !strings.Contains(out, want) {
			t.Errorf("the form writes %q; want it to show %s", out, want)
		}
	}
	// The answer is the value as the server sent it.
	if v, ok := fields[0].choose("1"); !ok || v != "red\x1b[2J" {
		t.Errorf("choose(1) = %q, %v", v, ok)
	}
}
