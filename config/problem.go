package config

import (
	"errors"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
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

// ReadProblem is the problem of the file at path that could not be read
// (err is the read's): "path: cannot read: too large".
func ReadProblem(path string, err error) *Problem {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is already in the Problem
	}
	return &Problem{Pos: Position{File: path}, Msg: "cannot read: " + err.Error()}
}

// DecoderProblems joins d's problems, in line order, as [*Problem]s naming
// d's file (an agent or workflow file's); nil when there are none.
func DecoderProblems(d *decode.Decoder) error {
	sort.SliceStable(d.Problems, func(i, j int) bool { return d.Problems[i].Line < d.Problems[j].Line })
	ps := make([]*Problem, len(d.Problems))
	for i, p := range d.Problems {
		ps[i] = &Problem{Pos: Position{File: d.File, Line: p.Line}, Field: p.Field, Msg: p.Msg}
	}
	return joinProblems(ps)
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
