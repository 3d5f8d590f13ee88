package ui

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnescapeJSONHTML: the escapes encoding/json writes for <, > and &
// are read back, and nothing else: an escaped backslash before "u003c"
// is text, other escapes stay as written.
func TestUnescapeJSONHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"\u003cscript\u003ealert(1)\u003c/script\u003e"`, `"<script>alert(1)</script>"`},
		{`"a \u0026 b"`, `"a & b"`},
		{`"\\u003c"`, `"\\u003c"`}, // a backslash, then the text u003c
		{`"\\\u003c"`, `"\\<"`},    // a backslash, then <
		{`"\u00e9 \" \n \u2028"`, `"\u00e9 \" \n \u2028"`},
		{`"ends \`, `"ends \`},
		{`plain`, `plain`},
	} {
		if got := unescapeJSONHTML(tc.in); got != tc.want {
			t.Errorf("unescapeJSONHTML(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDiffLines: a toolpin diff read for the page: each line's sign, the
// HTML escapes read back, and runs of unchanged lines beyond three of a
// change left out, saying how many.
func TestDiffLines(t *testing.T) {
	var in []string
	for i := range 10 {
		in = append(in, "  same "+string(rune('a'+i)))
	}
	in = append(in, `- "d": "old"`, `+ "d": "\u003cb\u003enew"`, "  after")
	got := diffLines(strings.Join(in, "\n") + "\n")
	want := []diffLine{
		{"…", "7 unchanged lines"},
		{" ", "same h"}, {" ", "same i"}, {" ", "same j"},
		{"-", `"d": "old"`}, {"+", `"d": "<b>new"`},
		{" ", "after"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diffLines (-want +got):\n%s", diff)
	}
	// A single unchanged line between two changes' contexts is shown,
	// not replaced by a note of one line.
	in = []string{"- x", "  1", "  2", "  3", "  4", "  5", "  6", "  7", "+ y"}
	if got := diffLines(strings.Join(in, "\n")); len(got) != 9 {
		t.Errorf("diffLines with one line between the contexts: %v, want all 9 lines", got)
	}
}
