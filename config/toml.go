package config

import (
	"errors"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// TOML keys, for strictness and "did you mean" suggestions.
var (
	tomlTopKeys    = []string{"tool_name_format", "mcp_servers", "providers", "gateway", "network", "limits"}
	tomlServerKeys = []string{
		"id", "description", "transport",
		"command", "args", "env", "allow_env", "cwd",
		"url", "headers", "allow_local_endpoint", "allow_cross_origin_redirects",
		"tools_allowlist", "timeout", "connect_timeout", "optional",
		"progress_resets_timeout", "roots",
		"lazy", "health_interval", "max_concurrency", "max_restarts",
	}
)

// decodeTOML decodes a native config file. go-toml decodes into generic
// values, which checks the syntax and TOML's own rules (no key defined
// twice); the typing is done here rather than by go-toml's strict struct
// decoding, because that stops at the first wrong type and we report every
// problem at once. A second pass over go-toml's AST gives every key a line.
func decodeTOML(file string, data []byte) *fileResult {
	r := newFileResult(file)
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		p := &Problem{Pos: Position{File: file}, Msg: err.Error()}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			p.Pos.Line, _ = de.Position()
			p.Msg = strings.TrimPrefix(de.Error(), "toml: ")
		}
		r.problems = append(r.problems, p)
		return r
	}
	indexTOML(data, r.lines)

	for _, k := range r.sortedKeys("", doc) {
		v := doc[k]
		switch k {
		case "tool_name_format":
			if s, ok := r.str(k, v); ok {
				r.toolNameFormat = s
				r.toolNameFormatLine = max(r.lineOf(k), 1)
			}
		case "mcp_servers":
			a, ok := v.([]any)
			if !ok {
				hint := ""
				if _, isTable := v.(map[string]any); isTable {
					hint = " (write [[mcp_servers]], with double brackets)"
				}
				r.errorf(k, "must be an array of tables, not %s%s", r.typeName(v), hint)
				continue
			}
			seen := map[string]int{} // id → index in this file
			for i, e := range a {
				path := indexPath(k, i)
				m, ok := e.(map[string]any)
				if !ok {
					r.errorf(path, "must be a table, not %s", r.typeName(e))
					continue
				}
				s := r.tomlServer(path, m)
				if s.ID != "" && !r.bad[keyPath(path, "id")] {
					if j, dup := seen[s.ID]; dup {
						first := indexPath(k, j)
						r.errorf(keyPath(path, "id"), "duplicate id %q (first declared as %s on line %d)", s.ID, first, r.lineOf(first))
						continue
					}
					seen[s.ID] = i
				}
				r.servers = append(r.servers, s)
			}
		case "providers":
			r.tomlProviders(k, v)
		case "gateway":
			r.tomlGateway(k, v)
		case "network":
			r.tomlNetwork(k, v)
		case "limits":
			r.tomlLimits(k, v)
		default:
			r.errorf(k, "%s", unknownKey(k, tomlTopKeys))
		}
	}
	return r
}

// tomlServer decodes one [[mcp_servers]] table at field path path.
func (r *fileResult) tomlServer(path string, m map[string]any) Server {
	s := Server{Source: Position{File: r.file, Line: r.lines[path], Field: path}}
	for _, k := range r.sortedKeys(path, m) {
		v, f := m[k], keyPath(path, k)
		switch k {
		case "id":
			s.ID, _ = r.str(f, v)
		case "description":
			s.Description, _ = r.str(f, v)
		case "transport":
			t, _ := r.str(f, v)
			s.Transport = Transport(t)
		case "command", "args", "env", "allow_env", "cwd", "url", "headers", "allow_local_endpoint", "allow_cross_origin_redirects":
			r.launchField(&s, k, f, v)
		case "tools_allowlist":
			s.ToolsAllowlist, _ = r.strList(f, v)
		case "timeout":
			s.Timeout, _ = r.duration(f, v)
		case "connect_timeout":
			s.ConnectTimeout, _ = r.duration(f, v)
		case "optional":
			s.Optional, _ = r.boolean(f, v)
		case "progress_resets_timeout":
			s.ProgressResetsTimeout, _ = r.boolean(f, v)
		case "roots":
			s.Roots, _ = r.strList(f, v)
		case "lazy":
			s.Lazy, _ = r.boolean(f, v)
		case "health_interval":
			s.HealthInterval, _ = r.interval(f, v)
		case "max_concurrency":
			s.MaxConcurrency, _ = r.count(f, v)
		case "max_restarts":
			s.MaxRestarts, _ = r.count(f, v)
		default:
			r.errorf(f, "%s", unknownKey(k, tomlServerKeys))
		}
	}
	return s
}

// launchField decodes one of the launch keys that the TOML and the
// mcpServers JSON formats share, so that both read them the same way.
func (r *fileResult) launchField(s *Server, k, f string, v any) {
	switch k {
	case "command":
		s.Command, _ = r.str(f, v)
	case "args":
		s.Args, _ = r.strList(f, v)
	case "env":
		s.Env, _ = r.strMap(f, v)
	case "allow_env":
		s.AllowEnv, _ = r.strList(f, v)
	case "cwd":
		s.Cwd, _ = r.str(f, v)
	case "url":
		s.URL, _ = r.str(f, v)
	case "headers":
		s.Headers, _ = r.strMap(f, v)
	case "allow_local_endpoint":
		s.AllowLocalEndpoint, _ = r.boolean(f, v)
	case "allow_cross_origin_redirects":
		s.AllowCrossOriginRedirects, _ = r.boolean(f, v)
	}
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
			path = keyPath(path, string(n.Data))
			if it.IsLast() && !last {
				break
			}
			if c, ok := arrays[path]; ok {
				path = indexPath(path, c-1)
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
			path = keyPath(path, string(k.Data))
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
					record(indexPath(path, i), lineOf(c))
				}
				value(indexPath(path, i), c)
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
			current = indexPath(path, arrays[path]-1)
			if k != nil {
				record(current, lineOf(k))
			}
		case unstable.KeyValue:
			keyValue(current, e)
		}
	}
}
