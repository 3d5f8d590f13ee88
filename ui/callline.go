package ui

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// SecretMark stands in a command line or a history for the value of an
// argument whose schema marks it secret (format "password" or writeOnly).
const SecretMark = "<secret>"

// CallCommand is the `switchboard call` command line that makes the call
// of tool with args (a JSON object): `switchboard call TOOL --args '{…}'`,
// each word quoted for a POSIX shell, the arguments as compact JSON with
// the values of the properties named in secret replaced by [SecretMark].
// No arguments (nil, or {}) give no --args. The CLI's tests parse what it
// returns with the call command's own flags, so the two cannot drift.
func CallCommand(tool string, args json.RawMessage, secret []string) string {
	line := "switchboard call " + shellQuote(tool)
	a := maskArgs(args, secret)
	if a == "" || a == "{}" {
		return line
	}
	return line + " --args " + shellQuote(a)
}

// maskArgs is args as compact JSON (not HTML-escaped: it is shown as
// typed), the values of the properties in secret replaced by SecretMark.
func maskArgs(args json.RawMessage, secret []string) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return ""
	}
	// Decoded and encoded again, numbers as they were written: a string
	// the form encoded as "\u003c" reads "<".
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return compactJSON(string(args))
	}
	for k := range m {
		if slices.Contains(secret, k) {
			m[k] = SecretMark
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return compactJSON(string(args))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// shellSafe are the words a POSIX shell takes as they are.
var shellSafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`) })

// shellQuote quotes s as one word of a POSIX shell: in single quotes, a
// single quote in it closing them, escaped with a backslash, and opening
// them again.
func shellQuote(s string) string {
	if shellSafe().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
