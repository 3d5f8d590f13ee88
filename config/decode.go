package config

import (
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// A fileResult is one file decoded, before merging: what it declares, the
// line of every key it could place, and the problems found while decoding
// (all held by its decode.Decoder).
type fileResult struct {
	*decode.Decoder
	// read is false for a file that could not be read: it is not listed in
	// Config.Files.
	read bool

	toolNameFormat     string
	toolNameFormatLine int // 0: not set in this file

	servers   []Server
	workflows []string // workflows = [...], resolved
	providers map[string]Provider
	endpoints []Endpoint // [[endpoints]], in order
	// guardrails are the [[guardrails]], in order
	guardrails []Guardrail
	// registries are the [[registries]], in order
	registries []Registry
	// tables are the key-by-key tables ([gateway], [network], …) the file
	// has, by key.
	tables map[string]fileTable
}

// fileTable is one key-by-key table as a file declares it.
type fileTable struct {
	v   any      // *Gateway, *Network, …
	set []string // the keys the file set, without those that had a problem
}

// newFileResult returns an empty result for file in format f; home is what
// ~ stands for in its paths ("" when unknown).
func newFileResult(file string, f decode.Format, home string) *fileResult {
	d := decode.New(file, f)
	d.Home = home
	return &fileResult{Decoder: d, read: true, tables: map[string]fileTable{}}
}

// problems returns the file's problems, each naming the file.
func (r *fileResult) problems() []*Problem {
	out := make([]*Problem, len(r.Problems))
	for i, p := range r.Problems {
		out[i] = &Problem{Pos: Position{File: r.File, Line: p.Line}, Field: p.Field, Msg: p.Msg}
	}
	return out
}

// A mergedTable is a top-level table that later files override key by key
// rather than whole ([gateway], [network], [limits], [state]): its fields,
// and where the merged table lives in a Config.
type mergedTable[T any] struct {
	key    string
	fields decode.Table[T]
	config func(*Config) *T
	source func(*T) *Position
	// checkOnDecode checks each file's values as they are read, so that a
	// value a later file overrides is still reported, and a value that
	// fails is not merged. Without it, the fields are checked once merged
	// ([gateway]: its servers refer to servers other files declare).
	checkOnDecode bool
}

// merger is a mergedTable of any type.
type merger interface {
	topField() decode.Field[fileResult]
	merge(c *Config, r *fileResult, v *validator)
	checkBuilt(c *Config, v *validator)
}

// mergedTables are the key-by-key tables, in the order of the top-level
// keys.
var mergedTables = []merger{gatewayTable, networkTable, limitsTable, stateTable, telemetryTable, searchTable, codeTable}

// topField declares the table's key at the top level of a TOML file.
func (mt mergedTable[T]) topField() decode.Field[fileResult] {
	return decode.Func(mt.key, decode.TOML, func(r *fileResult, path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			r.Errorf(path, "must be a table, not %s", r.TypeName(v))
			return
		}
		t := new(T)
		*mt.source(t) = Position{File: r.File, Line: r.LineOf(path), Field: path}
		var set []string
		if mt.checkOnDecode {
			set = mt.fields.DecodeAndCheck(r.Decoder, path, m, t)
		} else {
			set = mt.fields.Decode(r.Decoder, path, m, t)
		}
		r.tables[mt.key] = fileTable{v: t, set: set}
	})
}

// merge applies the keys r's table set over c's, and records in v where
// each key and each of its elements came from.
func (mt mergedTable[T]) merge(c *Config, r *fileResult, v *validator) {
	ft, ok := r.tables[mt.key]
	if !ok {
		return
	}
	src, dst := ft.v.(*T), mt.config(c)
	*mt.source(dst) = *mt.source(src)
	mt.fields.Merge(dst, src, ft.set)
	for _, k := range ft.set {
		f := decode.KeyPath(mt.key, k)
		// A list set here replaces the earlier one whole, with its lines.
		for p := range v.merged {
			if p == f || strings.HasPrefix(p, f+"[") || strings.HasPrefix(p, f+".") {
				delete(v.merged, p)
			}
		}
		v.merged[f] = Position{File: r.File, Line: r.LineOf(f)}
		for p, l := range r.Lines {
			if strings.HasPrefix(p, f+"[") || strings.HasPrefix(p, f+".") {
				v.merged[p] = Position{File: r.File, Line: l}
			}
		}
	}
}

// checkBuilt checks a table built in Go rather than loaded (loading checks
// each file's values as it reads them).
func (mt mergedTable[T]) checkBuilt(c *Config, v *validator) {
	if !mt.checkOnDecode {
		return // checked once merged, loaded or not
	}
	t := mt.config(c)
	src := *mt.source(t)
	mt.fields.Check(t, func(field, msg string) {
		v.problems = append(v.problems, &Problem{Pos: Position{File: src.File, Line: src.Line}, Field: decode.JoinPath(mt.key, field), Msg: msg})
	})
}

// mergedPos is where the merged key or element at field was set: the
// nearest recorded ancestor, else the table's own Source.
func (v *validator) mergedPos(field string, source Position) Position {
	for p := field; p != ""; p = decode.ParentPath(p) {
		if q, ok := v.merged[p]; ok {
			return q
		}
	}
	return Position{File: source.File, Line: source.Line}
}

// reported reports whether decoding reported field in any file.
func (v *validator) reported(field string) bool {
	for _, r := range v.files {
		if r.Bad(field) {
			return true
		}
	}
	return false
}
