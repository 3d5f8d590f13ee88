package config

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
)

// EndpointTOML returns ep as one [[endpoints]] table of a native config
// file: every field ep sets, in the order of [Endpoint]'s fields, then
// [endpoints.rename] and one [endpoints.override.NAME] per tool overridden.
// A list set empty (servers = [], which publishes nothing) is written; an
// empty map is not. What it returns loads back as ep (see
// [EndpointEqual]); Source is not written. AuthToken is written as it is:
// a placeholder, as the configuration requires (a literal token does not
// load).
func EndpointTOML(ep Endpoint) []byte {
	var b bytes.Buffer
	b.WriteString("[[endpoints]]\n")
	str := func(k, v string) {
		if v != "" {
			b.WriteString(k + " = " + tomlString(v) + "\n")
		}
	}
	list := func(k string, v []string) {
		if v != nil {
			b.WriteString(k + " = " + tomlValue(v) + "\n")
		}
	}
	str("name", ep.Name)
	str("path", ep.Path)
	list("servers", ep.Servers)
	list("tools", ep.Tools)
	str("instructions", ep.Instructions)
	list("workflows", ep.Workflows)
	str("auth_token", ep.AuthToken)
	list("scopes", ep.Scopes)
	str("mode", ep.Mode)
	if len(ep.Rename) > 0 {
		b.WriteString("\n[endpoints.rename]\n")
		for _, k := range slices.Sorted(maps.Keys(ep.Rename)) {
			b.WriteString(tomlKey(k) + " = " + tomlString(ep.Rename[k]) + "\n")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ep.Override)) {
		o := ep.Override[k]
		fmt.Fprintf(&b, "\n[endpoints.override.%s]\n", tomlKey(k))
		str("title", o.Title)
		str("description", o.Description)
		for _, h := range []struct {
			key string
			v   *bool
		}{{"read_only_hint", o.ReadOnlyHint}, {"destructive_hint", o.DestructiveHint}, {"idempotent_hint", o.IdempotentHint}, {"open_world_hint", o.OpenWorldHint}} {
			if h.v != nil {
				b.WriteString(h.key + " = " + strconv.FormatBool(*h.v) + "\n")
			}
		}
	}
	return b.Bytes()
}

// EndpointEqual reports whether a and b are the same endpoint, wherever
// each was declared: Source is not compared, and an empty map is nil.
func EndpointEqual(a, b Endpoint) bool {
	norm := func(e Endpoint) Endpoint {
		e.Source = Position{}
		if len(e.Rename) == 0 {
			e.Rename = nil
		}
		if len(e.Override) == 0 {
			e.Override = nil
		}
		return e
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// Endpoints returns the file's endpoints as the edits so far leave them.
func (e *Edit) Endpoints() []Endpoint { return slices.Clone(e.endpoints) }

// HasEndpoint reports whether the file declares endpoint name.
func (e *Edit) HasEndpoint(name string) bool { return e.endpointIndex(name) >= 0 }

func (e *Edit) endpointIndex(name string) int {
	return slices.IndexFunc(e.endpoints, func(x Endpoint) bool { return x.Name == name })
}

// AddEndpoint appends ep as a new [[endpoints]] table, under comment (as
// [Edit.Add]). It fails when the file already declares ep.Name.
func (e *Edit) AddEndpoint(ep Endpoint, comment string) error {
	if e.HasEndpoint(ep.Name) {
		return fmt.Errorf("%s already declares endpoint %q", e.File, ep.Name)
	}
	e.appendTable(comment, EndpointTOML(ep))
	ep.Source = Position{}
	e.endpoints = append(e.endpoints, ep)
	return nil
}

// ReplaceEndpoint rewrites the table of endpoint ep.Name where it stands,
// with its sub-tables; the comment lines above it stay.
func (e *Edit) ReplaceEndpoint(ep Endpoint) error {
	i := e.endpointIndex(ep.Name)
	if i < 0 {
		return fmt.Errorf("%s declares no endpoint %q", e.File, ep.Name)
	}
	spans, err := e.endpointTables()
	if err != nil {
		return err
	}
	e.replaceSpan(spans[i], EndpointTOML(ep))
	ep.Source = Position{}
	e.endpoints[i] = ep
	return nil
}

// RemoveEndpoint cuts out the table of endpoint name, with its sub-tables
// and the comment lines just above its header.
func (e *Edit) RemoveEndpoint(name string) error {
	i := e.endpointIndex(name)
	if i < 0 {
		return fmt.Errorf("%s declares no endpoint %q", e.File, name)
	}
	spans, err := e.endpointTables()
	if err != nil {
		return err
	}
	sp := spans[i]
	head := e.text[:sp.comments]
	if sp.end == len(e.text) {
		// The last table: the blank line an add put before it goes too,
		// so that an add undone by a remove leaves the file as it was.
		for bytes.HasSuffix(head, []byte("\n\n")) {
			head = head[:len(head)-1]
		}
	}
	e.text = slices.Concat(head, e.text[sp.end:])
	e.endpoints = slices.Delete(e.endpoints, i, i+1)
	return nil
}

// endpointTables finds the span of every [[endpoints]] table, in order.
func (e *Edit) endpointTables() ([]span, error) {
	spans, err := e.arrayTables("endpoints")
	if err != nil {
		return nil, err
	}
	if len(spans) != len(e.endpoints) {
		return nil, fmt.Errorf("%s: found %d [[endpoints]] tables for %d endpoints; fix the file first (switchboard validate)", e.File, len(spans), len(e.endpoints))
	}
	return spans, nil
}

// checkEndpoints fails unless read, the endpoints the edited text
// declares, are the edits' endpoints.
func (e *Edit) checkEndpoints(read []Endpoint) error {
	if len(read) != len(e.endpoints) {
		return fmt.Errorf("%s: the edited text declares %d endpoints, not %d", e.File, len(read), len(e.endpoints))
	}
	for i := range read {
		if !EndpointEqual(read[i], e.endpoints[i]) {
			return fmt.Errorf("%s: endpoint %q does not read back as written", e.File, e.endpoints[i].Name)
		}
	}
	return nil
}
