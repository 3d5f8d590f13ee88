package config

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// A fileResult is one file decoded, before merging: its servers, the line of
// every key it could place, and the problems found while decoding.
type fileResult struct {
	file string

	toolNameFormat     string
	toolNameFormatLine int // 0: not set in this file

	servers   []Server
	providers map[string]Provider

	gateway    *Gateway        // nil: no [gateway] table in this file
	gatewaySet map[string]bool // the keys it set

	network    *Network        // nil: no [network] table in this file
	networkSet map[string]bool // the keys it set

	limits    *Limits         // nil: no [limits] table in this file
	limitsSet map[string]bool // the keys it set

	lines    map[string]int  // field path → line
	bad      map[string]bool // field paths that already have a Problem
	problems []*Problem

	json bool // the mcpServers JSON format (changes type names in messages)
}

func newFileResult(file string) *fileResult {
	return &fileResult{file: file, lines: map[string]int{}, bad: map[string]bool{}}
}

// lineOf returns the line of field, or of its nearest ancestor with a known
// line; 0 when none is known.
func (r *fileResult) lineOf(field string) int {
	for p := field; p != ""; p = parentPath(p) {
		if l, ok := r.lines[p]; ok {
			return l
		}
	}
	return 0
}

// errorf records a Problem at field and marks field as reported, so that
// validation does not report the same field again.
func (r *fileResult) errorf(field, format string, args ...any) {
	r.problems = append(r.problems, &Problem{
		Pos:   Position{File: r.file, Line: r.lineOf(field)},
		Field: field,
		Msg:   fmt.Sprintf(format, args...),
	})
	r.bad[field] = true
}

// sortedKeys returns m's keys in the order they appear in the file (by line,
// then name), so that problems come out in reading order.
func (r *fileResult) sortedKeys(parent string, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := r.lines[keyPath(parent, keys[i])], r.lines[keyPath(parent, keys[j])]
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// typeName names the type of a decoded value for messages.
func (r *fileResult) typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		if r.json {
			return "an object"
		}
		return "a table"
	case nil:
		return "null"
	default:
		return "a date or time" // the only other TOML values
	}
}

func (r *fileResult) tableWord() string {
	if r.json {
		return "an object"
	}
	return "a table"
}

func (r *fileResult) str(field string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		r.errorf(field, "must be a string, not %s", r.typeName(v))
	}
	return s, ok
}

func (r *fileResult) boolean(field string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		r.errorf(field, "must be a boolean, not %s", r.typeName(v))
	}
	return b, ok
}

// strList decodes an array of strings. Any element of another type is
// reported and the whole list dropped, so that later checks never see
// shifted indexes.
func (r *fileResult) strList(field string, v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		r.errorf(field, "must be an array of strings, not %s", r.typeName(v))
		return nil, false
	}
	out := make([]string, 0, len(a))
	good := true
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			r.errorf(indexPath(field, i), "must be a string, not %s", r.typeName(e))
			good = false
			continue
		}
		out = append(out, s)
	}
	if !good {
		r.bad[field] = true
		return nil, false
	}
	return out, true
}

// strMap decodes a table of strings; entries of another type are reported
// and left out.
func (r *fileResult) strMap(field string, v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		r.errorf(field, "must be %s of strings, not %s", r.tableWord(), r.typeName(v))
		return nil, false
	}
	out := make(map[string]string, len(m))
	for _, k := range r.sortedKeys(field, m) {
		s, ok := m[k].(string)
		if !ok {
			// Never quote the value: it may be a secret.
			r.errorf(keyPath(field, k), "must be a string, not %s", r.typeName(m[k]))
			continue
		}
		out[k] = s
	}
	return out, true
}

// count decodes a whole number that must not be negative.
func (r *fileResult) count(field string, v any) (int, bool) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64: // JSON numbers
		if x != float64(int64(x)) {
			r.errorf(field, "must be a whole number, not %v", x)
			return 0, false
		}
		n = int64(x)
	default:
		r.errorf(field, "must be a whole number, not %s", r.typeName(v))
		return 0, false
	}
	if n < 0 || n > 1<<20 {
		r.errorf(field, "must be between 0 and %d, not %d", 1<<20, n)
		return 0, false
	}
	return int(n), true
}

// atLeastOne decodes a whole number that must be at least 1 (0 would read
// as "none" or "unlimited", and means neither).
func (r *fileResult) atLeastOne(field string, v any) (int, bool) {
	n, ok := r.count(field, v)
	if ok && n < 1 {
		r.errorf(field, "must be at least 1, not %d", n)
		return 0, false
	}
	return n, ok
}

// interval decodes a duration where "off" (or zero) turns the thing off.
func (r *fileResult) interval(field string, v any) (time.Duration, bool) {
	if s, ok := v.(string); ok && (s == "off" || s == "0" || s == "0s") {
		return HealthOff, true
	}
	return r.duration(field, v)
}

// duration decodes a Go duration string that must be positive.
func (r *fileResult) duration(field string, v any) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		r.errorf(field, `must be a duration string such as "90s", not %s`, r.typeName(v))
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		r.errorf(field, `invalid duration %q (want a Go duration such as "90s" or "2m30s")`, s)
		return 0, false
	}
	if d <= 0 {
		r.errorf(field, "must be positive, not %q", s)
		return 0, false
	}
	return d, true
}
