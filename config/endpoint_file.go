package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"
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
	Mode         string                      `json:"mode,omitempty"`
}

type toolOverrideJSON struct {
	Title           string `json:"title,omitempty"`
	Description     string `json:"description,omitempty"`
	ReadOnlyHint    *bool  `json:"read_only_hint,omitempty"`
	DestructiveHint *bool  `json:"destructive_hint,omitempty"`
	IdempotentHint  *bool  `json:"idempotent_hint,omitempty"`
	OpenWorldHint   *bool  `json:"open_world_hint,omitempty"`
}

func toEndpointJSON(ep Endpoint) endpointJSON {
	j := endpointJSON{Name: ep.Name, Path: ep.Path, Servers: ep.Servers, Tools: ep.Tools, Instructions: ep.Instructions,
		Workflows: ep.Workflows, Rename: ep.Rename, AuthToken: ep.AuthToken, Scopes: ep.Scopes, Mode: ep.Mode}
	for k, o := range ep.Override {
		if j.Override == nil {
			j.Override = map[string]toolOverrideJSON{}
		}
		j.Override[k] = toolOverrideJSON(o)
	}
	return j
}

// EndpointsJSON returns eps as {"endpoints": [...]}, indented, ending in a
// newline.
func EndpointsJSON(eps []Endpoint) []byte {
	out := struct {
		Endpoints []endpointJSON `json:"endpoints"`
	}{Endpoints: []endpointJSON{}}
	for _, ep := range eps {
		out.Endpoints = append(out.Endpoints, toEndpointJSON(ep))
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

// EndpointJSON returns ep as one JSON object, keyed as in TOML (an element
// of [EndpointsJSON]'s list), compact: what the state store keeps of an
// endpoint added at run time, and what the REST API shows.
func EndpointJSON(ep Endpoint) []byte {
	b, err := json.Marshal(toEndpointJSON(ep))
	if err != nil {
		panic(err) // strings, lists and maps of them
	}
	return b
}

// DecodeEndpoint reads one endpoint as a JSON object with the keys of an
// [[endpoints]] table ([EndpointJSON]'s form), checking it as
// [ReadEndpoints] does: its fields, and its auth_token a placeholder, never
// a token written out. Every problem is a [*Problem] whose Field is
// relative to the endpoint ("servers[0]", "auth_token") and whose line is
// data's. That the servers and workflows it names exist, and that no
// other endpoint has its name or paths, is [Config.CheckEndpoint]'s to
// say.
func DecodeEndpoint(data []byte) (Endpoint, error) {
	const prefix = "endpoints[0]"
	wrapped := append(append([]byte(`{"endpoints":[`), data...), "]}"...)
	eps, err := ReadEndpoints("endpoint.json", wrapped)
	if err != nil {
		var out []error
		for _, p := range Problems(err) {
			q := *p
			q.Pos.File = ""
			q.Field = strings.TrimPrefix(strings.TrimPrefix(q.Field, prefix), ".")
			out = append(out, &q)
		}
		if len(out) == 0 {
			return Endpoint{}, err
		}
		return Endpoint{}, errors.Join(out...)
	}
	if len(eps) != 1 {
		return Endpoint{}, &Problem{Msg: "must be one JSON object (an [[endpoints]] table)"}
	}
	ep := eps[0]
	ep.Source = Position{}
	return ep, nil
}

// CheckEndpoint checks e, an endpoint to be served beside c's own and
// others (endpoints served already, not in c), against c as [Config.Validate]
// checks c's endpoints: the servers and workflows it names are c's, its name
// and paths are no other endpoint's and no other route's, a tool is renamed
// once; and its fields, as e may not come from a file. Every problem is a
// [*Problem] whose Field is relative to e ("servers[0]", "path").
func (c *Config) CheckEndpoint(e Endpoint, others []Endpoint) error {
	cc := *c
	e.Source = Position{}
	cc.Endpoints = append(append(slices.Clone(c.Endpoints), others...), e)
	v := &validator{}
	v.endpoints(&cc)
	prefix := decode.IndexPath("endpoints", len(cc.Endpoints)-1)
	var out []error
	for _, p := range v.problems {
		rest, ok := strings.CutPrefix(p.Field, prefix)
		if !ok || rest != "" && rest[0] != '.' && rest[0] != '[' {
			continue // another endpoint's
		}
		q := *p
		q.Pos = Position{}
		q.Field = strings.TrimPrefix(rest, ".")
		out = append(out, &q)
	}
	return errors.Join(out...)
}
