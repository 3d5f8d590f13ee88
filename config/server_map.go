package config

import (
	"reflect"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// DecodeServer decodes one server given as generic values — an agent file's
// inline mcp_servers entry — with the keys, types, defaults and validation
// rules of an [[mcp_servers]] table, in YAML's words (a list, a mapping,
// true or false). Values are those of a decoded document: string, bool,
// int64, float64, []any, map[string]any, nil.
//
// file and field say where the entry is ("agents/calc.md",
// "mcp_servers[0]"); lines maps field paths under field (as this package
// writes them: "mcp_servers[0].env.API_KEY") to lines in file, so that each
// problem names its line. The error joins every [*Problem].
//
// The URL's address policy ([network], allow_local_endpoint) is left to the
// caller, who knows the configuration in force: [Config.CheckServerURL].
func DecodeServer(file, field string, m map[string]any, lines map[string]int) (Server, error) {
	r := newFileResult(file, decode.YAML, "")
	for k, l := range lines {
		r.Lines[k] = l
	}
	s := r.server(field, m)
	c := &Config{Servers: []Server{s}}
	c.setDefaults()
	v := &validator{files: map[string]*fileResult{file: r}, noURLPolicy: true}
	v.config(c)
	problems := append(r.problems(), v.problems...)
	sortProblems(problems, []string{file})
	return c.Servers[0], joinProblems(problems)
}

// Equal reports whether s and o declare the same server: every field but
// Source is equal (fields added later are compared too). An unset transport or timeout counts as its default.
func (s Server) Equal(o Server) bool {
	a, b := s, o
	a.Source, b.Source = Position{}, Position{}
	for _, x := range []*Server{&a, &b} {
		c := Config{Servers: []Server{*x}}
		c.setDefaults()
		*x = c.Servers[0]
	}
	return serverEqual(a, b)
}

func serverEqual(a, b Server) bool { return reflect.DeepEqual(a, b) }
