//go:build !noui

package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/ui"
)

// TestUICallCommandParses: the `switchboard call` command line the web
// UI shows under a try-it result (ui.CallCommand), split into words by a
// real POSIX shell and parsed by this CLI's own command tree and flags,
// is a call of the same tool with the same arguments: the UI's line
// cannot drift from the CLI.
func TestUICallCommandParses(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no POSIX shell: %v", err)
	}
	for _, c := range []struct{ tool, args string }{
		{"mcp_a_echo", `{"text":"hi"}`},
		{"mcp_a_echo", `{"text":"it's \"quoted\" $HOME ` + "`id`" + ` \\ <b>&"}`},
		{"mcp_a_echo", `{"text":"two\nlines\tand a tab, ünïcode"}`},
		{"mcp_a_add", `{"a":1.50,"b":-2e3}`},
		{"mcp_a_nested", `{"l":["x","y"],"o":{"k":[1,{"z":null}]},"t":true}`},
		{"mcp_a_content", `{}`},
		{"odd 'tool'", `{"x":"y"}`},
	} {
		line := ui.CallCommand(c.tool, json.RawMessage(c.args), nil)
		// The shell splits the line into words; a function named
		// switchboard prints them, each ended by a NUL.
		out, err := exec.Command(sh, "-c", `switchboard() { for a in "$@"; do printf '%s\0' "$a"; done; }; `+line).Output()
		if err != nil {
			t.Fatalf("sh -c %s: %v", line, err)
		}
		words := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		root := (&env{}).rootCommand()
		cmd, rest, err := root.Find(words)
		if err != nil || cmd.Name() != "call" {
			t.Fatalf("%s: not the call command (%v, %v)", line, cmd.Name(), err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("%s: the call command's flags: %v", line, err)
		}
		if diff := cmp.Diff([]string{c.tool}, cmd.Flags().Args()); diff != "" {
			t.Errorf("%s: the tool (-want +got):\n%s", line, diff)
		}
		argsJSON, _ := cmd.Flags().GetString("args")
		kvs, _ := cmd.Flags().GetStringArray("arg")
		got, err := buildArgs(argsJSON, kvs, nil)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if !sameJSON(t, got, []byte(c.args)) {
			t.Errorf("%s: arguments %s, want %s", line, got, c.args)
		}
	}
}

// sameJSON reports whether a and b are the same JSON value, numbers by
// their text ({} and none are the same: no arguments).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	norm := func(b []byte) any {
		if len(bytes.TrimSpace(b)) == 0 {
			return map[string]any{}
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	return cmp.Equal(norm(a), norm(b))
}
