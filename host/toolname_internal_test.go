package host

import (
	"strings"
	"testing"
)

// TestExpandName: expandName replaces as strings.NewReplacer does, on
// formats with braces that name neither placeholder.
func TestExpandName(t *testing.T) {
	for _, format := range []string{
		"", "{server}_{tool}", "{tool}", "{{server}}", "{server", "{serv{tool}",
		"x{}{tool}{server}{tool}y", "{server}{server}", "{", "}{", "{tool}{",
	} {
		for _, st := range [][2]string{{"gh", "get"}, {"{tool}", "{server}"}, {"", ""}} {
			want := strings.NewReplacer("{server}", st[0], "{tool}", st[1]).Replace(format)
			if got := expandName(format, st[0], st[1]); got != want {
				t.Errorf("expandName(%q, %q, %q) = %q, want %q", format, st[0], st[1], got, want)
			}
		}
	}
}
