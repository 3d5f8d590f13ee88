package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A Problem is one thing wrong with a configuration: a syntax error, an
// unknown key, a wrong type or a value that fails validation. [Load] and
// [Config.Validate] return every Problem at once, joined with [errors.Join];
// [Problems] takes them apart again.
type Problem struct {
	Pos   Position // File and Line (0 when unknown); Pos.Field is unused
	Field string   // complete field path, such as "mcp_servers[2].env.API_KEY"; "" for the file as a whole
	Msg   string
}

// Error returns "file:line: field: msg", leaving out what is unknown.
func (p *Problem) Error() string {
	var b strings.Builder
	if p.Pos.File != "" {
		b.WriteString(p.Pos.String())
		b.WriteString(": ")
	} else if p.Pos.Line > 0 {
		b.WriteString("line " + strconv.Itoa(p.Pos.Line) + ": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems returns the [*Problem]s in err's tree, in order. It returns nil
// for a nil err.
func Problems(err error) []*Problem {
	var out []*Problem
	var walk func(error)
	walk = func(err error) {
		if p, ok := err.(*Problem); ok {
			out = append(out, p)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			if e := u.Unwrap(); e != nil {
				walk(e)
			}
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// joinProblems returns errors.Join of ps, or nil when there are none.
func joinProblems(ps []*Problem) error {
	if len(ps) == 0 {
		return nil
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// sortProblems orders ps by file (in the order of files), then line; problems
// on the same line keep the order they were found in.
func sortProblems(ps []*Problem, files []string) {
	rank := make(map[string]int, len(files))
	for i, f := range files {
		rank[f] = i
	}
	sort.SliceStable(ps, func(i, j int) bool {
		ri, rj := rank[ps[i].Pos.File], rank[ps[j].Pos.File]
		if ri != rj {
			return ri < rj
		}
		return ps[i].Pos.Line < ps[j].Pos.Line
	})
}

// isBareKey reports whether k may be written unquoted in a field path (the
// TOML bare-key alphabet).
func isBareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !isIDByte(k[i]) {
			return false
		}
	}
	return true
}

func isIDByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// keyPath appends key to the field path parent, quoting it when it is not a
// bare key: env."MY VAR".
func keyPath(parent, key string) string {
	if !isBareKey(key) {
		key = strconv.Quote(key)
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// indexPath appends an index to the field path parent: args[1].
func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// parentPath strips the last segment of a field path built by keyPath and
// indexPath; it returns "" for a single segment.
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if strings.HasSuffix(p, `"`) {
		// A quoted segment may itself hold dots: find the opening quote that
		// makes the suffix a valid quoted string.
		for i := len(p) - 2; i >= 0; i-- {
			if p[i] == '"' && (i == 0 || p[i-1] == '.') {
				if _, err := strconv.Unquote(p[i:]); err == nil {
					if i == 0 {
						return ""
					}
					return p[:i-1]
				}
			}
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// Suggest returns the entry of known nearest to key, or "" when none is
// close enough to be a likely typo: the "did you mean" of every format that
// names keys (config files, agent files).
func Suggest(key string, known []string) string { return suggest(key, known) }

func suggest(key string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		d := editDistance(strings.ToLower(key), strings.ToLower(k))
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	limit := 2
	if len(key) <= 4 {
		limit = 1
	}
	if best == "" || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and adjacent transpositions.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// unknownKey is the message for a key the format does not define.
func unknownKey(key string, known []string) string {
	msg := fmt.Sprintf("unknown key %q", key)
	if s := suggest(key, known); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return msg
}

// lineStarts returns the byte offset at which each line of data starts.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineAt returns the 1-based line holding byte offset off.
func lineAt(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}
