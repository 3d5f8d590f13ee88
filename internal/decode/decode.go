// Package decode is the toolkit Switchboard's configuration and agent files
// are decoded with, so that each field is declared once.
//
// A [Table] lists the fields of one kind of table (a server, [gateway], an
// agent file, …). Each [Field] declares its key, the formats that have it
// (TOML, the mcpServers JSON of other clients, agent YAML), its kind — how
// a value is read: [String], [Bool], [StringList], [StringMap], [Duration],
// [Interval], [Count], … or a [Value] of the table's own — where it is
// stored in the typed struct (an accessor, so the same declaration sets,
// copies and checks it), and the checks its value must pass. Every decoder
// walks the same tables: an unknown key is reported with a "did you mean"
// taken from the keys its format has, a key-by-key merge copies what a file
// set ([Table.Merge]), and validation of a struct built in Go runs the same
// checks ([Table.Check]).
//
// A [Decoder] works on generic values as the format parsers produce them
// (string, bool, int64, float64, json.Number, []any, map[string]any, nil,
// and TOML's dates), with the line of each key recorded under its field
// path ("mcp_servers[1].env.API_KEY"). It reports every problem it finds,
// each at its field path and line, and keeps going: a value of the wrong
// type is reported and left out, never guessed at. The words of its
// messages are the format's own: an array or a table in TOML, an object in
// JSON, a list or a mapping in YAML.
//
// config reads TOML and JSON with those formats' parsers; YAML, the format
// of agent and workflow files, is read into the same values here
// ([Decoder.YAML]). What the values mean is declared here once.
package decode

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Format is a file format. A [Field] is in one or several.
type Format uint8

// The formats.
const (
	TOML Format = 1 << iota // Switchboard's own config files
	JSON                    // the mcpServers JSON of Claude Desktop, Cursor and VS Code
	YAML                    // agent files (and their inline servers)

	Every = TOML | JSON | YAML
)

func (f Format) String() string {
	var names []string
	for _, n := range []struct {
		f    Format
		name string
	}{{TOML, "TOML"}, {JSON, "JSON"}, {YAML, "YAML"}} {
		if f&n.f != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "no format"
	}
	return strings.Join(names, "|")
}

// Problem is one thing wrong, at a field path and a line of the decoded
// file. The packages that decode files turn it into their own error type.
type Problem struct {
	Line  int    // 0 when unknown
	Field string // "" for the file as a whole
	Msg   string
}

// Decoder decodes the generic values of one file, collecting problems.
type Decoder struct {
	// Format decides which fields exist and the words of messages.
	Format Format
	// File is the decoded file; a relative path value ([Decoder.Path]) is
	// relative to its folder.
	File string
	// Home is the folder ~ stands for in path values; "" when unknown (a ~
	// is then a problem).
	Home string
	// Lines maps field paths to lines; the parser fills it.
	Lines map[string]int
	// Problems are those found so far, in the order found.
	Problems []Problem

	bad map[string]bool
}

// New returns a Decoder for file in format f.
func New(file string, f Format) *Decoder {
	return &Decoder{Format: f, File: file, Lines: map[string]int{}, bad: map[string]bool{}}
}

// LineOf returns the line of field, or of its nearest ancestor with a known
// line; 0 when none is known.
func (d *Decoder) LineOf(field string) int {
	for p := field; ; p = ParentPath(p) {
		if l, ok := d.Lines[p]; ok {
			return l
		}
		if p == "" {
			return 0
		}
	}
}

// Errorf records a problem at field, on field's line, and marks field as
// reported (see [Decoder.Bad]).
func (d *Decoder) Errorf(field, format string, args ...any) {
	d.ErrorAt(d.LineOf(field), field, format, args...)
}

// ErrorAt is [Decoder.Errorf] at a given line (0: field's line).
func (d *Decoder) ErrorAt(line int, field, format string, args ...any) {
	if line == 0 {
		line = d.LineOf(field)
	}
	d.Problems = append(d.Problems, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
	if d.bad == nil {
		d.bad = map[string]bool{}
	}
	d.bad[field] = true
}

// Bad reports whether a problem was recorded at field, so that validation
// does not report the same field again.
func (d *Decoder) Bad(field string) bool { return d.bad[field] }

// SortedKeys returns m's keys in the order they appear in the file (by
// line, then name), so that problems come out in reading order.
func (d *Decoder) SortedKeys(parent string, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := d.Lines[KeyPath(parent, keys[i])], d.Lines[KeyPath(parent, keys[j])]
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// TypeName names the type of a decoded value in the format's words.
func (d *Decoder) TypeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		if d.Format == YAML {
			return "a number"
		}
		return "a float"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		if d.Format == YAML {
			return "a list"
		}
		return "an array"
	case map[string]any:
		return d.TableWord()
	case nil:
		return "null"
	}
	if d.Format == TOML {
		return "a date or time" // the only other TOML values
	}
	return fmt.Sprintf("%T", v)
}

// TableWord is what the format calls a table: "a table", "an object" or
// "a mapping".
func (d *Decoder) TableWord() string {
	switch d.Format {
	case JSON:
		return "an object"
	case YAML:
		return "a mapping"
	}
	return "a table"
}

// UnknownKey is the message for a key the format does not define, with the
// nearest of known when it looks like a typo.
func (d *Decoder) UnknownKey(key string, known []string) string {
	noun := "key"
	if d.Format == YAML {
		noun = "field" // what agent files call their keys
	}
	msg := fmt.Sprintf("unknown %s %q", noun, key)
	if s := Suggest(key, known); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return msg
}

// The readers below type one value at field, reporting a problem (and
// returning false) when it has the wrong type or is out of range. They are
// the kinds of [Field]s, and the tables' own [Value] readers build on them.

// String reads a string.
func (d *Decoder) String(field string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.Errorf(field, "must be a string, not %s", d.TypeName(v))
	}
	return s, ok
}

// Bool reads a boolean.
func (d *Decoder) Bool(field string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		want := "a boolean"
		if d.Format == YAML {
			want = "true or false" // YAML 1.1 spellings (yes, on) are strings here
		}
		d.Errorf(field, "must be %s, not %s", want, d.TypeName(v))
	}
	return b, ok
}

// StringList reads an array of strings. Any element of another type is
// reported and the whole list dropped, so that later checks never see
// shifted indexes.
func (d *Decoder) StringList(field string, v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		list := "an array"
		if d.Format == YAML {
			list = "a list"
		}
		d.Errorf(field, "must be %s of strings, not %s", list, d.TypeName(v))
		return nil, false
	}
	out := make([]string, 0, len(a))
	good := true
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			d.Errorf(IndexPath(field, i), "must be a string, not %s", d.TypeName(e))
			good = false
			continue
		}
		out = append(out, s)
	}
	if !good {
		d.bad[field] = true
		return nil, false
	}
	return out, true
}

// StringMap reads a table of strings; entries of another type are reported
// and left out.
func (d *Decoder) StringMap(field string, v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be %s of strings, not %s", d.TableWord(), d.TypeName(v))
		return nil, false
	}
	out := make(map[string]string, len(m))
	for _, k := range d.SortedKeys(field, m) {
		s, ok := m[k].(string)
		if !ok {
			// Never quote the value: it may be a secret.
			d.Errorf(KeyPath(field, k), "must be a string, not %s", d.TypeName(m[k]))
			continue
		}
		out[k] = s
	}
	return out, true
}

// maxCount bounds the counts of [Count] and [AtLeastOne]: no queue, restart
// budget or session bound needs more, and a larger number is a typo.
const maxCount = 1 << 20

// Count reads a whole number from 0 to 1<<20.
func (d *Decoder) Count(field string, v any) (int, bool) {
	n, ok := d.whole(field, v)
	if !ok {
		return 0, false
	}
	if n < 0 || n > maxCount {
		d.Errorf(field, "must be between 0 and %d, not %d", maxCount, n)
		return 0, false
	}
	return int(n), true
}

// whole reads a whole number, as TOML, YAML and JSON write one.
func (d *Decoder) whole(field string, v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64: // 2.0 in TOML, 2 in YAML's float spellings
		if x != float64(int64(x)) {
			d.Errorf(field, "must be a whole number, not %v", x)
			return 0, false
		}
		n = int64(x)
	case json.Number: // JSON keeps its numbers as written
		i, err := x.Int64()
		if err != nil {
			d.Errorf(field, "must be a whole number, not %s", x)
			return 0, false
		}
		n = i
	default:
		d.Errorf(field, "must be a whole number, not %s", d.TypeName(v))
		return 0, false
	}
	return n, true
}

// AtLeastOne reads a [Decoder.Count] that must be at least 1 (0 would read
// as "none" or "unlimited", and means neither).
func (d *Decoder) AtLeastOne(field string, v any) (int, bool) {
	n, ok := d.Count(field, v)
	if ok && n < 1 {
		d.Errorf(field, "must be at least 1, not %d", n)
		return 0, false
	}
	return n, ok
}

// Bytes reads a whole number of bytes from lo to hi.
func (d *Decoder) Bytes(field string, v any, lo, hi int) (int, bool) {
	n, ok := v.(int64)
	if !ok {
		d.Errorf(field, "must be a whole number of bytes, not %s", d.TypeName(v))
		return 0, false
	}
	if n < int64(lo) || n > int64(hi) {
		d.Errorf(field, "must be between %d and %d, not %d", lo, hi, n)
		return 0, false
	}
	return int(n), true
}

// Range reads a whole number from lo to hi.
func (d *Decoder) Range(field string, v any, lo, hi int) (int, bool) {
	n, ok := d.whole(field, v)
	if ok && (n < int64(lo) || n > int64(hi)) {
		d.Errorf(field, "must be between %d and %d, not %d", lo, hi, n)
		return 0, false
	}
	return int(n), ok
}

// Positive reads a whole number from 1 to 2^31-1.
func (d *Decoder) Positive(field string, v any) (int, bool) {
	n, ok := v.(int64)
	if !ok {
		d.Errorf(field, "must be a whole number, not %s", d.TypeName(v))
		return 0, false
	}
	if n <= 0 || n > math.MaxInt32 {
		d.Errorf(field, "must be a positive whole number, not %d", n)
		return 0, false
	}
	return int(n), true
}

// Number reads a finite number.
func (d *Decoder) Number(field string, v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		if !math.IsNaN(n) && !math.IsInf(n, 0) {
			return n, true
		}
	}
	d.Errorf(field, "must be a number, not %s", d.TypeName(v))
	return 0, false
}

// Duration reads a Go duration string that must be positive.
func (d *Decoder) Duration(field string, v any) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		d.Errorf(field, `must be a duration string such as "90s", not %s`, d.TypeName(v))
		return 0, false
	}
	t, err := time.ParseDuration(s)
	if err != nil {
		d.Errorf(field, `invalid duration %q (want a Go duration such as "90s" or "2m30s")`, s)
		return 0, false
	}
	if t <= 0 {
		d.Errorf(field, "must be positive, not %q", s)
		return 0, false
	}
	return t, true
}

// Interval reads a [Decoder.Duration] where "off" (or zero) turns the thing
// off: it returns off then.
func (d *Decoder) Interval(field string, v any, off time.Duration) (time.Duration, bool) {
	if s, ok := v.(string); ok && (s == "off" || s == "0" || s == "0s") {
		return off, true
	}
	return d.Duration(field, v)
}

// Path resolves a path written in the file: ~ and ~/… are in [Decoder.Home],
// and a relative path is relative to the file's folder (not to the working
// directory, which differs between runs). It reports a problem at field
// when it cannot.
func (d *Decoder) Path(field, p string) (string, bool) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if d.Home == "" {
			d.Errorf(field, "%s: no home folder to expand ~ to (HOME is not set)", p)
			return "", false
		}
		return filepath.Join(d.Home, p[1:]), true
	case strings.HasPrefix(p, "~"):
		d.Errorf(field, "%s: ~user is not expanded; write ~/… for your home folder, or the whole path", p)
		return "", false
	case filepath.IsAbs(p):
		return filepath.Clean(p), true
	}
	dir, err := filepath.Abs(filepath.Dir(d.File))
	if err != nil {
		d.Errorf(field, "%s: relative to %s: %v", p, d.File, err)
		return "", false
	}
	return filepath.Join(dir, p), true
}
