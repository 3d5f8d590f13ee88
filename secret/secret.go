// Package secret resolves the {{env.NAME}} and {{secrets.NAME}} placeholders
// of a configuration and keeps every resolved secret out of output.
//
// A [Redactor] is told every value that was resolved from a secret; anything
// that leaves Switchboard (logs, events, errors, --json output) passes through
// it first.
package secret

import (
	"io"
	"log/slog"
)

// A Placeholder is one {{kind.NAME}} occurrence in a string.
type Placeholder struct {
	Kind       string // "env" or "secrets"
	Name       string
	Start, End int // byte offsets of the whole {{…}} in the string
}

// Parse returns the placeholders in s. Any other {{…}} (unknown kind, empty
// or invalid name, unterminated) is an error that quotes it.
func Parse(s string) ([]Placeholder, error) { panic("TODO") }

// A Store looks up secrets by name.
type Store interface {
	Lookup(name string) (value string, ok bool)
}

// EnvStore looks secret NAME up in the environment variable
// SWITCHBOARD_SECRET_<NAME> (NAME upper-cased). Lookup defaults to os.LookupEnv.
type EnvStore struct {
	Lookup func(string) (string, bool)
}

// Expand replaces every placeholder in s. env looks up {{env.NAME}}; secrets
// looks up {{secrets.NAME}}. Each resolved secret value is added to red
// (when non-nil). An unresolved placeholder is an error naming it, never a
// value.
func Expand(s string, env func(string) (string, bool), secrets Store, red *Redactor) (string, error) {
	panic("TODO")
}

// A Redactor replaces registered secret values with "[REDACTED]". The zero
// value is not usable; call NewRedactor. Safe for concurrent use.
type Redactor struct{}

// NewRedactor returns an empty Redactor.
func NewRedactor() *Redactor { panic("TODO") }

// Add registers a secret value.
func (r *Redactor) Add(value string) { panic("TODO") }

// Redact returns s with every registered value replaced.
func (r *Redactor) Redact(s string) string { panic("TODO") }

// Writer returns a writer that redacts what it writes to w.
func (r *Redactor) Writer(w io.Writer) io.Writer { panic("TODO") }

// Handler wraps h so that messages and string attributes are redacted.
func (r *Redactor) Handler(h slog.Handler) slog.Handler { panic("TODO") }
