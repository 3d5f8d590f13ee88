// Package secret resolves the {{env.NAME}} and {{secrets.NAME}} placeholders
// of a configuration and keeps every resolved value out of output.
//
// A [Redactor] is told every value that was resolved from a secret or from
// an environment variable (but those [PublicEnv] names, such as HOME);
// anything that leaves Switchboard (logs, events, errors, --json output)
// passes through it first.
package secret

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// A Placeholder is one {{kind.NAME}} occurrence in a string.
type Placeholder struct {
	Kind       string // "env" or "secrets"
	Name       string
	Start, End int // byte offsets of the whole {{…}} in the string
}

// String returns the placeholder in its canonical spelling, {{kind.NAME}}.
func (p Placeholder) String() string { return "{{" + p.Kind + "." + p.Name + "}}" }

// maxName bounds a placeholder name; it keeps error messages readable and
// env var names within what every platform accepts.
const maxName = 128

// A SyntaxError is a {{…}} that is not a valid placeholder.
type SyntaxError struct {
	Text   string // the offending text, from "{{" (truncated when long)
	Offset int    // byte offset of "{{" in the string
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%q at offset %d: %s", e.Text, e.Offset, e.Reason)
}

// Parse returns the placeholders in s. Any other {{…}} (unknown kind, empty
// or invalid name, unterminated) is an error that quotes it.
// Names match [A-Za-z_][A-Za-z0-9_.-]* and are at most 128 bytes long;
// spaces just inside the braces are allowed: {{ secrets.github }}.
// There is no escape for a literal "{{".
func Parse(s string) ([]Placeholder, error) {
	var ps []Placeholder
	for off := 0; ; {
		i := strings.Index(s[off:], "{{")
		if i < 0 {
			return ps, nil
		}
		start := off + i
		j := strings.Index(s[start+2:], "}}")
		if j < 0 {
			return nil, &SyntaxError{Text: clip(s[start:]), Offset: start, Reason: "unterminated placeholder; want {{env.NAME}} or {{secrets.NAME}}"}
		}
		end := start + 2 + j + 2
		text := s[start:end]
		p, reason := parseOne(strings.Trim(s[start+2:end-2], " \t"))
		if reason != "" {
			return nil, &SyntaxError{Text: clip(text), Offset: start, Reason: reason}
		}
		p.Start, p.End = start, end
		ps = append(ps, p)
		off = end
	}
}

func parseOne(inner string) (Placeholder, string) {
	kind, name, ok := strings.Cut(inner, ".")
	switch {
	case inner == "":
		return Placeholder{}, "empty placeholder; want {{env.NAME}} or {{secrets.NAME}}"
	case !ok:
		return Placeholder{}, "want {{env.NAME}} or {{secrets.NAME}}"
	case kind == "secret":
		return Placeholder{}, `unknown kind "secret"; did you mean {{secrets.` + name + `}}?`
	case kind != "env" && kind != "secrets":
		return Placeholder{}, fmt.Sprintf("unknown kind %q; want env or secrets", kind)
	case name == "":
		return Placeholder{}, "empty name"
	case len(name) > maxName:
		return Placeholder{}, fmt.Sprintf("name longer than %d bytes", maxName)
	case !validName(name):
		return Placeholder{}, "invalid name; want letters, digits, '_', '.' or '-', not starting with a digit, '.' or '-'"
	}
	return Placeholder{Kind: kind, Name: name}, ""
}

func validName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		case i > 0 && ('0' <= c && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// clip bounds quoted input in error messages.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// A Store looks up secrets by name.
type Store interface {
	Lookup(name string) (value string, ok bool)
}

// A Hinter is a Store that can tell a user how to set a missing secret.
type Hinter interface {
	// Hint completes "{{secrets.NAME}} is not set (…)", e.g.
	// "set SWITCHBOARD_SECRET_GITHUB".
	Hint(name string) string
}

// EnvStore looks secret NAME up in the environment variable
// SWITCHBOARD_SECRET_<NAME> (see [EnvVar]). LookupEnv defaults to
// os.LookupEnv. The zero EnvStore is ready to use.
//
// The lookup function is called LookupEnv, not Lookup, so that EnvStore
// itself can be a Store: a type cannot have a field and a method of the same
// name.
type EnvStore struct {
	LookupEnv func(string) (string, bool)
}

// EnvVar returns the environment variable EnvStore reads secret name from:
// SWITCHBOARD_SECRET_ and the name upper-cased, with '-' and '.' as '_'.
func EnvVar(name string) string {
	return "SWITCHBOARD_SECRET_" + strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == '.':
			return '_'
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, name)
}

// Lookup reads secret name from its environment variable.
func (s EnvStore) Lookup(name string) (string, bool) {
	look := s.LookupEnv
	if look == nil {
		look = os.LookupEnv
	}
	return look(EnvVar(name))
}

// Hint names the environment variable to set.
func (s EnvStore) Hint(name string) string { return "set " + EnvVar(name) }

// publicEnv are the variables every stdio server is given anyway
// (transport.MinimalEnv): where programs are, the home folder, the user,
// the shell, the terminal, the locale and time zone. Their values appear in
// every path and message (the home folder does), protect nothing when
// hidden, and would make output unreadable if redacted.
var publicEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"TMPDIR": true, "TERM": true, "LANG": true, "LANGUAGE": true, "TZ": true,
}

// PublicEnv reports whether the environment variable name describes the
// machine or the user rather than holds a credential: PATH, HOME, USER,
// LOGNAME, SHELL, TMPDIR, TERM, LANG, LANGUAGE, TZ and LC_*, which every
// stdio server gets anyway. [Expand] does not register their values with
// a Redactor; every other {{env.NAME}} value is redacted like a secret.
func PublicEnv(name string) bool {
	return publicEnv[name] || strings.HasPrefix(name, "LC_")
}

// An UnresolvedError is a placeholder with no value. It never carries a
// value, only the placeholder and how to set it.
type UnresolvedError struct {
	Placeholder Placeholder
	Hint        string // e.g. "set SWITCHBOARD_SECRET_GITHUB"; may be empty
}

func (e *UnresolvedError) Error() string {
	msg := e.Placeholder.String() + " is not set"
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Expand replaces every placeholder in s. env looks up {{env.NAME}}; secrets
// looks up {{secrets.NAME}}. Each resolved value is added to red (when
// non-nil): every secret, and every environment variable's but those
// [PublicEnv] names, which describe the machine rather than hold a
// credential. An unresolved placeholder is an error naming it, never a
// value.
//
// A nil env means os.LookupEnv; a nil secrets resolves no secret. A variable
// set to the empty string counts as set. Values are inserted verbatim and
// never expanded again. Every unresolved placeholder is reported, joined
// with errors.Join, each an *UnresolvedError; a malformed one is a
// *SyntaxError.
func Expand(s string, env func(string) (string, bool), secrets Store, red *Redactor) (string, error) {
	ps, err := Parse(s)
	if err != nil || len(ps) == 0 {
		return s, err
	}
	if env == nil {
		env = os.LookupEnv
	}
	var b strings.Builder
	var errs []error
	last := 0
	for _, p := range ps {
		var v string
		var ok bool
		var hint string
		switch p.Kind {
		case "env":
			// A variable named in a config is there to reach a server,
			// often as its token: kept out of output like a secret.
			v, ok = env(p.Name)
			if ok && red != nil && !PublicEnv(p.Name) {
				red.Add(v)
			}
		case "secrets":
			if secrets != nil {
				v, ok = secrets.Lookup(p.Name)
				if h, isHinter := secrets.(Hinter); isHinter {
					hint = h.Hint(p.Name)
				}
			} else {
				hint = "no secret store is configured"
			}
			if ok && red != nil {
				red.Add(v)
			}
		}
		if !ok {
			errs = append(errs, &UnresolvedError{Placeholder: p, Hint: hint})
			continue
		}
		b.WriteString(s[last:p.Start])
		b.WriteString(v)
		last = p.End
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	b.WriteString(s[last:])
	return b.String(), nil
}
