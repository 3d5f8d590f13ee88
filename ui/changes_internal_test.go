package ui

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiffLines: a toolpin diff read for the page: each line's sign, the
// text as it is, and runs of unchanged lines beyond three of a
// change left out, saying how many.
func TestDiffLines(t *testing.T) {
	var in []string
	for i := range 10 {
		in = append(in, "  same "+string(rune('a'+i)))
	}
	in = append(in, `- "d": "old"`, `+ "d": "<b>new"`, "  after")
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
