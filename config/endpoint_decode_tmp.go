package config

// TEMPORARY (i26-cli): the smallest decoding of [[endpoints]] the CLI's
// tests need before i26-core's decoding is merged. On merge, delete this
// file, the endpoints field this branch added to fileResult (decode.go) and
// the merge loop it added to build (load.go), and keep i26-core's: the
// names here (tomlEndpoints, fileResult.endpoints) are the likely ones, so
// that forgetting fails to compile rather than decoding twice. Paths is
// i26-core's too (config/endpoints.go there), copied so that the CLI calls
// it already.

import (
	"fmt"
	"path"
	"regexp"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

func init() {
	tomlTop = append(tomlTop, decode.Func("endpoints", decode.TOML, (*fileResult).tomlEndpoints))
}

var tmpEndpointName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

var tmpEndpointFields = decode.Table[Endpoint]{
	decode.String("name", decode.TOML, func(e *Endpoint) *string { return &e.Name }, func(s string) string {
		if !tmpEndpointName.MatchString(s) {
			return fmt.Sprintf("invalid endpoint name %q: 1 to 64 of a-z 0-9 - _, beginning with a letter or digit", s)
		}
		return ""
	}),
	decode.String("path", decode.TOML, func(e *Endpoint) *string { return &e.Path }),
	decode.StringList("servers", decode.TOML, func(e *Endpoint) *[]string { return &e.Servers }),
	decode.StringList("tools", decode.TOML, func(e *Endpoint) *[]string { return &e.Tools }),
	decode.String("instructions", decode.TOML, func(e *Endpoint) *string { return &e.Instructions }),
	decode.StringList("workflows", decode.TOML, func(e *Endpoint) *[]string { return &e.Workflows }),
	decode.StringMap("rename", decode.TOML, func(e *Endpoint) *map[string]string { return &e.Rename }),
	decode.Value("override", decode.TOML, func(e *Endpoint) *map[string]ToolOverride { return &e.Override }, tmpReadOverride),
	decode.Value("auth_token", decode.TOML, func(e *Endpoint) *string { return &e.AuthToken }, readAuthToken, checkAuthToken),
	decode.StringList("scopes", decode.TOML, func(e *Endpoint) *[]string { return &e.Scopes }),
}

var tmpOverrideFields = decode.Table[ToolOverride]{
	decode.String("title", decode.TOML, func(o *ToolOverride) *string { return &o.Title }),
	decode.String("description", decode.TOML, func(o *ToolOverride) *string { return &o.Description }),
	decode.Value("read_only_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.ReadOnlyHint }, tmpReadHint),
	decode.Value("destructive_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.DestructiveHint }, tmpReadHint),
	decode.Value("idempotent_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.IdempotentHint }, tmpReadHint),
	decode.Value("open_world_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.OpenWorldHint }, tmpReadHint),
}

func tmpReadHint(d *decode.Decoder, field string, v any) (*bool, bool) {
	b, ok := d.Bool(field, v)
	if !ok {
		return nil, false
	}
	return &b, true
}

func tmpReadOverride(d *decode.Decoder, field string, v any) (map[string]ToolOverride, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a table, not %s", d.TypeName(v))
		return nil, false
	}
	out := map[string]ToolOverride{}
	for _, k := range d.SortedKeys(field, m) {
		f := decode.KeyPath(field, k)
		t, ok := m[k].(map[string]any)
		if !ok {
			d.Errorf(f, "must be a table, not %s", d.TypeName(m[k]))
			continue
		}
		var o ToolOverride
		tmpOverrideFields.DecodeAndCheck(d, f, t, &o)
		out[k] = o
	}
	return out, true
}

func (r *fileResult) tomlEndpoints(path string, v any) {
	a, ok := v.([]any)
	if !ok {
		r.Errorf(path, "must be an array of tables, not %s (write [[endpoints]])", r.TypeName(v))
		return
	}
	seen := map[string]int{}
	for i, x := range a {
		ep := decode.IndexPath(path, i)
		m, ok := x.(map[string]any)
		if !ok {
			r.Errorf(ep, "must be a table, not %s", r.TypeName(x))
			continue
		}
		e := Endpoint{Source: Position{File: r.File, Line: r.LineOf(ep), Field: ep}}
		tmpEndpointFields.DecodeAndCheck(r.Decoder, ep, m, &e)
		if e.Name == "" {
			if !r.Bad(decode.KeyPath(ep, "name")) {
				r.Errorf(ep, "no name")
			}
			continue
		}
		if j, dup := seen[e.Name]; dup {
			r.Errorf(decode.KeyPath(ep, "name"), "duplicate name %q (first declared as %s)", e.Name, decode.IndexPath(path, j))
			continue
		}
		seen[e.Name] = i
		r.endpoints = append(r.endpoints, e)
	}
}

// Paths returns where e is served: Streamable HTTP at mcp (Path, or
// /e/NAME/mcp), the legacy HTTP+SSE transport at sse and message, and
// WebSocket at ws, each mcp's last element replaced by sse, message and
// ws.
func (e Endpoint) Paths() (mcp, sse, message, ws string) {
	mcp = e.Path
	if mcp == "" {
		mcp = "/e/" + e.Name + "/mcp"
	}
	dir := path.Dir(mcp)
	return mcp, path.Join(dir, "sse"), path.Join(dir, "message"), path.Join(dir, "ws")
}
