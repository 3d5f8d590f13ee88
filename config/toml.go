package config

import (
	"errors"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// tomlTop is the top level of a native config file.
var tomlTop = append(decode.Table[fileResult]{
	decode.Func("tool_name_format", decode.TOML, (*fileResult).tomlToolNameFormat),
	decode.Func("mcp_servers", decode.TOML, (*fileResult).tomlServers),
	decode.Func("providers", decode.TOML, (*fileResult).tomlProviders),
	decode.Func("workflows", decode.TOML, (*fileResult).tomlWorkflows),
	decode.Func("endpoints", decode.TOML, (*fileResult).tomlEndpoints),
	decode.Func("guardrails", decode.TOML, (*fileResult).tomlGuardrails),
	decode.Func("registries", decode.TOML, (*fileResult).tomlRegistries),
}, mergedTopFields()...)

func mergedTopFields() []decode.Field[fileResult] {
	var fs []decode.Field[fileResult]
	for _, mt := range mergedTables {
		fs = append(fs, mt.topField())
	}
	return fs
}

// decodeTOML decodes a native config file; home is what ~ stands for in
// its paths. go-toml decodes into generic values, which checks the syntax
// and TOML's own rules (no key defined twice); the typing is done by the
// field tables rather than by go-toml's strict struct decoding, because
// that stops at the first wrong type and we report every problem at once.
// A second pass over go-toml's AST gives every key a line.
func decodeTOML(file string, data []byte, home string) *fileResult {
	r := newFileResult(file, decode.TOML, home)
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		p := decode.Problem{Msg: err.Error()}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			p.Line, _ = de.Position()
			p.Msg = strings.TrimPrefix(de.Error(), "toml: ")
		}
		r.Problems = append(r.Problems, p)
		return r
	}
	indexTOML(data, r.Lines)
	tomlTop.Decode(r.Decoder, "", doc, r)
	return r
}

func (r *fileResult) tomlToolNameFormat(path string, v any) {
	if s, ok := r.String(path, v); ok {
		r.toolNameFormat = s
		r.toolNameFormatLine = max(r.LineOf(path), 1)
	}
}

// tomlWorkflows decodes workflows = ["path", ...]: workflow files, relative
// to this file's folder.
func (r *fileResult) tomlWorkflows(path string, v any) {
	l, ok := r.StringList(path, v)
	if !ok {
		return
	}
	for i, p := range l {
		f := decode.IndexPath(path, i)
		switch {
		case strings.TrimSpace(p) == "":
			r.Errorf(f, "empty path")
			continue
		case hasPlaceholder(p):
			r.Errorf(f, "%s", placeholderMsg)
			continue
		}
		if abs, ok := r.Path(f, p); ok {
			r.workflows = append(r.workflows, abs)
		}
	}
}

// tomlServers decodes the [[mcp_servers]] array of tables at path.
func (r *fileResult) tomlServers(path string, v any) {
	seen := map[string]int{} // id → index in this file
	for _, t := range r.arrayOfTables(path, "mcp_servers", v) {
		i, sp, m := t.i, t.path, t.m
		s := r.server(sp, m)
		if s.ID != "" && !r.Bad(decode.KeyPath(sp, "id")) {
			if j, dup := seen[s.ID]; dup {
				first := decode.IndexPath(path, j)
				r.Errorf(decode.KeyPath(sp, "id"), "duplicate id %q (first declared as %s on line %d)", s.ID, first, r.LineOf(first))
				continue
			}
			seen[s.ID] = i
		}
		r.servers = append(r.servers, s)
	}
}

// server decodes one server table at path, in the file's format: an
// [[mcp_servers]] table, or an agent file's inline server.
func (r *fileResult) server(path string, m map[string]any) Server {
	s := Server{Source: Position{File: r.File, Line: r.Lines[path], Field: path}}
	serverFields.Decode(r.Decoder, path, m, &s)
	return s
}

// indexTOML records in lines the line of every table header, key and array
// element of a syntactically valid document, under the field path that
// decodeTOML uses for it ("mcp_servers[1].env.API_KEY").
func indexTOML(data []byte, lines map[string]int) {
	starts := lineStarts(data)
	var p unstable.Parser
	p.Reset(data)
	lineOf := func(n *unstable.Node) int {
		return lineAt(starts, int(n.Raw.Offset))
	}
	record := func(path string, line int) {
		if _, ok := lines[path]; !ok && line > 0 {
			lines[path] = line
		}
	}
	// arrays maps the path of each array of tables seen so far to its
	// number of elements: a later [a.b] or [[a]] refers to the last one.
	arrays := map[string]int{}
	// resolve turns a header's keys into a field path, descending into the
	// last element of each array of tables on the way.
	resolve := func(it unstable.Iterator, last bool) (string, *unstable.Node) {
		var path string
		var keyNode *unstable.Node
		for it.Next() {
			n := it.Node()
			if keyNode == nil {
				keyNode = n
			}
			path = decode.KeyPath(path, string(n.Data))
			if it.IsLast() && !last {
				break
			}
			if c, ok := arrays[path]; ok {
				path = decode.IndexPath(path, c-1)
			}
		}
		return path, keyNode
	}

	var keyValue func(base string, n *unstable.Node)
	var value func(path string, n *unstable.Node)
	keyValue = func(base string, n *unstable.Node) {
		path := base
		it := n.Key()
		for it.Next() {
			k := it.Node()
			path = decode.KeyPath(path, string(k.Data))
			record(path, lineOf(k))
		}
		value(path, n.Value())
	}
	value = func(path string, n *unstable.Node) {
		switch n.Kind {
		case unstable.InlineTable:
			it := n.Children()
			for it.Next() {
				if c := it.Node(); c.Kind == unstable.KeyValue {
					keyValue(path, c)
				}
			}
		case unstable.Array:
			it := n.Children()
			i := 0
			for it.Next() {
				c := it.Node()
				if c.Kind == unstable.Comment {
					continue
				}
				if c.Raw.Length > 0 {
					record(decode.IndexPath(path, i), lineOf(c))
				}
				value(decode.IndexPath(path, i), c)
				i++
			}
		}
	}

	current := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			path, k := resolve(e.Key(), true)
			current = path
			if k != nil {
				record(path, lineOf(k))
			}
		case unstable.ArrayTable:
			path, k := resolve(e.Key(), false)
			arrays[path]++
			current = decode.IndexPath(path, arrays[path]-1)
			if k != nil {
				record(current, lineOf(k))
			}
		case unstable.KeyValue:
			keyValue(current, e)
		}
	}
}

// A table is one table of an array of tables: its index, its path and
// its keys.
type table struct {
	i    int
	path string
	m    map[string]any
}

// arrayOfTables is the array of tables [[name]] at path: each element that is a
// table; what is not is a problem (an array of something else, or a
// single table, written with single brackets).
func (r *fileResult) arrayOfTables(path, name string, v any) []table {
	a, ok := v.([]any)
	if !ok {
		hint := ""
		if _, isTable := v.(map[string]any); isTable {
			hint = " (write [[" + name + "]], with double brackets)"
		}
		r.Errorf(path, "must be an array of tables, not %s%s", r.TypeName(v), hint)
		return nil
	}
	out := make([]table, 0, len(a))
	for i, el := range a {
		p := decode.IndexPath(path, i)
		m, ok := el.(map[string]any)
		if !ok {
			r.Errorf(p, "must be a table, not %s", r.TypeName(el))
			continue
		}
		out = append(out, table{i, p, m})
	}
	return out
}
