package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// Endpoints move between configurations as a file of their own (switchboard
// endpoints export and import): TOML, [[endpoints]] tables as in a config
// file, or JSON, {"endpoints": [...]} with the same keys. Neither holds a
// secret: an endpoint's auth_token is a placeholder, written as it is and
// never resolved, and a literal token is refused on reading, as a config
// file refuses it.

// EndpointsTOML returns eps as [[endpoints]] tables (see [EndpointTOML]),
// one blank line between them.
func EndpointsTOML(eps []Endpoint) []byte {
	var b bytes.Buffer
	for i, ep := range eps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.Write(EndpointTOML(ep))
	}
	return b.Bytes()
}

// endpointJSON is an endpoint in the JSON form, keyed as in TOML. A list
// set empty is kept (servers = [] publishes nothing; left out, all).
type endpointJSON struct {
	Name         string                      `json:"name"`
	Path         string                      `json:"path,omitempty"`
	Servers      []string                    `json:"servers,omitzero"`
	Tools        []string                    `json:"tools,omitzero"`
	Instructions string                      `json:"instructions,omitempty"`
	Workflows    []string                    `json:"workflows,omitzero"`
	Rename       map[string]string           `json:"rename,omitempty"`
	Override     map[string]toolOverrideJSON `json:"override,omitempty"`
	AuthToken    string                      `json:"auth_token,omitempty"`
	Scopes       []string                    `json:"scopes,omitzero"`
}

type toolOverrideJSON struct {
	Title           string `json:"title,omitempty"`
	Description     string `json:"description,omitempty"`
	ReadOnlyHint    *bool  `json:"read_only_hint,omitempty"`
	DestructiveHint *bool  `json:"destructive_hint,omitempty"`
	IdempotentHint  *bool  `json:"idempotent_hint,omitempty"`
	OpenWorldHint   *bool  `json:"open_world_hint,omitempty"`
}

// EndpointsJSON returns eps as {"endpoints": [...]}, indented, ending in a
// newline.
func EndpointsJSON(eps []Endpoint) []byte {
	out := struct {
		Endpoints []endpointJSON `json:"endpoints"`
	}{Endpoints: []endpointJSON{}}
	for _, ep := range eps {
		j := endpointJSON{Name: ep.Name, Path: ep.Path, Servers: ep.Servers, Tools: ep.Tools, Instructions: ep.Instructions,
			Workflows: ep.Workflows, Rename: ep.Rename, AuthToken: ep.AuthToken, Scopes: ep.Scopes}
		for k, o := range ep.Override {
			if j.Override == nil {
				j.Override = map[string]toolOverrideJSON{}
			}
			j.Override[k] = toolOverrideJSON(o)
		}
		out.Endpoints = append(out.Endpoints, j)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		panic(err) // strings, lists and maps of them
	}
	return append(b, '\n')
}

// ReadEndpoints reads a file of endpoints in either form (JSON when its
// name ends in .json or its text begins with {), checking each as a config
// file's [[endpoints]] table is checked. It fails, with every problem as a
// [*Problem] naming the file, line and field, for anything else in the
// file, a literal token, or an endpoint declared twice. That the servers
// and workflows it names exist is for the configuration it joins to say.
func ReadEndpoints(file string, data []byte) ([]Endpoint, error) {
	var r *fileResult
	var doc map[string]any
	if isJSON(file, data) {
		r = newFileResult(file, decode.JSON, "")
		v, _, line, err := parseJSON(r, standardJSON(data))
		if err != nil {
			return nil, &Problem{Pos: Position{File: file, Line: line}, Msg: "not valid JSON: " + err.Error()}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &Problem{Pos: Position{File: file, Line: 1}, Msg: `must be an object, {"endpoints": [...]}`}
		}
		doc = m
		// The JSON form has the TOML keys.
		r.Format = decode.TOML
	} else {
		r = newFileResult(file, decode.TOML, "")
		if err := toml.Unmarshal(data, &doc); err != nil {
			p := &Problem{Pos: Position{File: file}, Msg: err.Error()}
			var de *toml.DecodeError
			if errors.As(err, &de) {
				p.Pos.Line, _ = de.Position()
				p.Msg = strings.TrimPrefix(de.Error(), "toml: ")
			}
			return nil, p
		}
		indexTOML(data, r.Lines)
	}
	for _, k := range r.SortedKeys("", doc) {
		if k != "endpoints" {
			// An array of tables has its line at its first element.
			line := cmp.Or(r.LineOf(k), r.LineOf(decode.IndexPath(k, 0)))
			r.ErrorAt(line, k, "an endpoints file holds endpoints only (found %s)", k)
		}
	}
	if v, ok := doc["endpoints"]; ok {
		tomlTop.Decode(r.Decoder, "", map[string]any{"endpoints": v}, r)
	}
	if ps := r.problems(); len(ps) > 0 {
		return nil, joinProblems(ps)
	}
	return r.endpoints, nil
}
