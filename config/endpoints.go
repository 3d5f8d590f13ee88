package config

// Decoding and validating [[endpoints]] (see Endpoint): each table's keys
// are checked as they are read, at their lines; what needs the merged
// configuration (servers and workflows named, paths taken by another
// endpoint) once the files are merged, in validator.endpoints.

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// maxEndpointName bounds an endpoint's name: it is in paths, metrics and
// serverInfo.
const maxEndpointName = 64

// EndpointPrefix is the folder of the named endpoints' default paths:
// endpoint NAME is served at /e/NAME/mcp, /e/NAME/sse, /e/NAME/message
// and /e/NAME/ws unless its path says otherwise.
const EndpointPrefix = "/e/"

// Paths returns where e is served: Streamable HTTP at mcp (Path, or
// /e/NAME/mcp), the legacy HTTP+SSE transport at sse and message, and
// WebSocket at ws, each mcp's last element replaced by sse, message and
// ws.
func (e Endpoint) Paths() (mcp, sse, message, ws string) {
	mcp = e.Path
	if mcp == "" {
		mcp = EndpointPrefix + e.Name + "/mcp"
	}
	dir := path.Dir(mcp)
	return mcp, path.Join(dir, "sse"), path.Join(dir, "message"), path.Join(dir, "ws")
}

// reservedPaths are the paths of the default endpoint and of the daemon's
// other routes, which no named endpoint may take; a path under one ending
// in "/" is taken too.
var reservedPaths = []string{"/mcp", "/sse", "/message", "/ws", "/api/", "/healthz", "/readyz", "/metrics", "/.well-known/"}

// endpointFields declares an [[endpoints]] table.
var endpointFields = decode.Table[Endpoint]{
	decode.String("name", decode.TOML, func(e *Endpoint) *string { return &e.Name }, CheckEndpointName),
	decode.String("path", decode.TOML, func(e *Endpoint) *string { return &e.Path }, checkEndpointPath),
	decode.StringList("servers", decode.TOML, func(e *Endpoint) *[]string { return &e.Servers }, checkGatewayServer),
	decode.StringList("tools", decode.TOML, func(e *Endpoint) *[]string { return &e.Tools }, checkToolPattern),
	decode.String("instructions", decode.TOML, func(e *Endpoint) *string { return &e.Instructions }, func(s string) string {
		if hasPlaceholder(s) {
			return "placeholders are not allowed here"
		}
		return ""
	}),
	decode.StringList("workflows", decode.TOML, func(e *Endpoint) *[]string { return &e.Workflows }, checkGatewayWorkflow),
	decode.StringMap("rename", decode.TOML, func(e *Endpoint) *map[string]string { return &e.Rename }, checkRename),
	decode.Value("override", decode.TOML, func(e *Endpoint) *map[string]ToolOverride { return &e.Override }, readOverrides),
	decode.Value("auth_token", decode.TOML, func(e *Endpoint) *string { return &e.AuthToken }, readAuthToken, checkAuthToken),
	decode.StringList("scopes", decode.TOML, func(e *Endpoint) *[]string { return &e.Scopes }, checkScope),
	decode.String("mode", decode.TOML, func(e *Endpoint) *string { return &e.Mode }, checkMode),
}

// toolOverrideFields declares an [endpoints.override.NAME] table.
var toolOverrideFields = decode.Table[ToolOverride]{
	decode.String("title", decode.TOML, func(o *ToolOverride) *string { return &o.Title }, noPlaceholderHere),
	decode.String("description", decode.TOML, func(o *ToolOverride) *string { return &o.Description }, noPlaceholderHere),
	decode.Value("read_only_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.ReadOnlyHint }, readBoolPtr),
	decode.Value("destructive_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.DestructiveHint }, readBoolPtr),
	decode.Value("idempotent_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.IdempotentHint }, readBoolPtr),
	decode.Value("open_world_hint", decode.TOML, func(o *ToolOverride) **bool { return &o.OpenWorldHint }, readBoolPtr),
}

func noPlaceholderHere(s string) string {
	if hasPlaceholder(s) {
		return "placeholders are not allowed here"
	}
	return ""
}

func readBoolPtr(d *decode.Decoder, field string, v any) (*bool, bool) {
	b, ok := d.Bool(field, v)
	if !ok {
		return nil, false
	}
	return &b, true
}

// readOverrides reads [endpoints.override]: a table of tool overrides, by
// the name a client sees.
func readOverrides(d *decode.Decoder, field string, v any) (map[string]ToolOverride, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a table of [endpoints.override.TOOL] tables, not %s", d.TypeName(v))
		return nil, false
	}
	before := len(d.Problems)
	out := make(map[string]ToolOverride, len(m))
	for _, name := range d.SortedKeys(field, m) {
		f := decode.KeyPath(field, name)
		t, ok := m[name].(map[string]any)
		if !ok {
			d.Errorf(f, "must be a table, not %s", d.TypeName(m[name]))
			continue
		}
		if msg := checkClientToolName(name); msg != "" {
			d.Errorf(f, "%s", msg)
			continue
		}
		var o ToolOverride
		toolOverrideFields.DecodeAndCheck(d, f, t, &o)
		out[name] = o
	}
	return out, len(d.Problems) == before
}

// CheckEndpointName says what is wrong with name as an endpoint's name,
// or "" when nothing is ("" is not checked: a missing name is reported by
// tomlEndpoints and the validator).
func CheckEndpointName(name string) string {
	if name == "" {
		return ""
	}
	ok := len(name) <= maxEndpointName
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (i > 0 && (c == '-' || c == '_'))
	}
	if !ok {
		return fmt.Sprintf("invalid endpoint name %q: 1 to %d of a-z 0-9 - _, beginning with a letter or digit", name, maxEndpointName)
	}
	return ""
}

// checkEndpointPath checks a path on its own; that no other endpoint or
// route has it is checked once merged.
func checkEndpointPath(p string) string {
	switch {
	case p == "":
		return ""
	case hasPlaceholder(p):
		return "placeholders are not allowed here"
	case !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#% \t\r\n") || path.Clean(p) != p:
		return fmt.Sprintf("must be a clean absolute path such as \"/code/mcp\", not %q", p)
	}
	if r := reservedPath(p); r != "" {
		return fmt.Sprintf("%q collides with %s, which the daemon serves", p, r)
	}
	if strings.Count(p, "/") < 2 {
		return fmt.Sprintf("%q has one element: the legacy transports are served beside it (its last element replaced by sse, message and ws), so give it a folder, such as \"%s/mcp\"", p, p)
	}
	return ""
}

// reservedPath returns the reserved path p collides with, or "".
func reservedPath(p string) string {
	for _, r := range reservedPaths {
		if p == strings.TrimSuffix(r, "/") || (strings.HasSuffix(r, "/") && strings.HasPrefix(p, r)) {
			return r
		}
	}
	return ""
}

// checkToolPattern checks one glob of tools.
func checkToolPattern(l []string, i int) string {
	p := l[i]
	glob := strings.TrimPrefix(p, "!")
	switch {
	case hasPlaceholder(p):
		return "placeholders are not allowed here"
	case glob == "":
		return "empty pattern"
	}
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Sprintf("invalid glob %q: %v", p, err)
	}
	if j := slices.Index(l[:i], p); j >= 0 {
		return fmt.Sprintf("duplicate %q (also tools[%d])", p, j)
	}
	return ""
}

// checkClientToolName checks a name a client is to see: a tool name as
// the MCP specification allows (1 to 128 of A-Z a-z 0-9 _ - .).
func checkClientToolName(name string) string {
	ok := name != "" && len(name) <= 128
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = decode.IsIDByte(c) || c == '.'
	}
	if !ok {
		return fmt.Sprintf("invalid tool name %q: 1 to 128 of A-Z a-z 0-9 _ - .", name)
	}
	return ""
}

func checkRename(k, v string) []string {
	var msgs []string
	if msg := checkClientToolName(k); msg != "" {
		msgs = append(msgs, msg)
	}
	switch {
	case hasPlaceholder(v):
		msgs = append(msgs, "placeholders are not allowed here")
	case strings.TrimSpace(v) == "":
		msgs = append(msgs, "empty: name the published tool this name calls")
	}
	return msgs
}

// tomlEndpoints decodes the [[endpoints]] array of tables at path.
func (r *fileResult) tomlEndpoints(path string, v any) {
	seen := map[string]int{} // name → index in this file
	for _, t := range r.arrayOfTables(path, "endpoints", v) {
		i, ep, m := t.i, t.path, t.m
		e := Endpoint{Source: Position{File: r.File, Line: r.LineOf(ep), Field: ep}}
		endpointFields.DecodeAndCheck(r.Decoder, ep, m, &e)
		nf := decode.KeyPath(ep, "name")
		if r.Bad(nf) {
			continue
		}
		if e.Name == "" {
			r.Errorf(ep, "missing name")
			continue
		}
		if j, dup := seen[e.Name]; dup {
			first := decode.IndexPath(path, j)
			r.Errorf(nf, "duplicate name %q (first declared as %s on line %d)", e.Name, first, r.LineOf(first))
			continue
		}
		seen[e.Name] = i
		r.endpoints = append(r.endpoints, e)
	}
}

// endpoints checks c.Endpoints against the merged configuration: names
// unique, servers configured, workflows published, paths of one endpoint
// alone, a tool renamed once. Outside Load (an endpoint built in Go) each
// field's own checks run too.
func (v *validator) endpoints(c *Config) {
	names := map[string]int{}
	taken := map[string]int{} // path → index in c.Endpoints
	for i := range c.Endpoints {
		e := &c.Endpoints[i]
		prefix := e.Source.Field
		if prefix == "" {
			prefix = decode.IndexPath("endpoints", i)
		}
		fr := v.files[e.Source.File]
		report := func(field, msg string) {
			full := decode.JoinPath(prefix, field)
			line := e.Source.Line
			if fr != nil {
				if fr.Bad(full) {
					return
				}
				if l := fr.LineOf(full); l > 0 {
					line = l
				}
			}
			v.problems = append(v.problems, &Problem{Pos: Position{File: e.Source.File, Line: line}, Field: full, Msg: msg})
		}
		if len(e.Scopes) > 0 && c.Gateway.Auth == nil {
			// Only OAuth tokens have scopes: without [gateway.auth] the
			// endpoint is open to whatever the listener lets in.
			line := e.Source.Line
			if fr != nil {
				line = cmp.Or(fr.LineOf(decode.JoinPath(prefix, "scopes")), line)
			}
			v.warnings = append(v.warnings, &Problem{Pos: Position{File: e.Source.File, Line: line}, Field: decode.JoinPath(prefix, "scopes"),
				Msg: "unused: only OAuth access tokens have scopes, and there is no [gateway.auth]; give the endpoint an auth_token, or configure [gateway.auth]"})
		}
		if fr == nil {
			endpointFields.Check(e, report)
			for _, name := range slices.Sorted(maps.Keys(e.Override)) {
				o := e.Override[name]
				if msg := checkClientToolName(name); msg != "" {
					report(decode.KeyPath("override", name), msg)
					continue
				}
				toolOverrideFields.Check(&o, func(field, msg string) { report(decode.JoinPath(decode.KeyPath("override", name), field), msg) })
			}
		}
		switch j, dup := names[e.Name]; {
		case e.Name == "":
			report("name", "missing")
			continue
		case CheckEndpointName(e.Name) != "":
			continue // reported as it is
		case dup:
			report("name", fmt.Sprintf("duplicate name %q (also endpoints[%d])", e.Name, j))
			continue
		}
		names[e.Name] = i
		for k, id := range e.Servers {
			if checkGatewayServer(e.Servers, k) == "" {
				if _, ok := c.Server(id); !ok {
					report(decode.IndexPath("servers", k), fmt.Sprintf("no server %q in the configuration (%s)", id, serverIDList(c)))
				} else if gs := c.Gateway.Servers; gs != nil && !slices.Contains(gs, id) {
					report(decode.IndexPath("servers", k), fmt.Sprintf("server %q is not served: [gateway] servers leaves it out (%s)", id, strings.Join(gs, ", ")))
				}
			}
		}
		for k, id := range e.Workflows {
			if checkGatewayWorkflow(e.Workflows, k) == "" && !slices.Contains(c.Gateway.Workflows, id) {
				report(decode.IndexPath("workflows", k), fmt.Sprintf("workflow %q is not published: list it in [gateway] workflows first (published: %s)", id, listOrNone(c.Gateway.Workflows)))
			}
		}
		targets := map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(e.Rename)) {
			t := e.Rename[k]
			if other, dup := targets[t]; dup {
				report(decode.KeyPath("rename", k), fmt.Sprintf("%q is renamed twice (also to %q): a tool is offered under one name", t, other))
			}
			targets[t] = k
		}
		if checkEndpointPath(e.Path) != "" {
			continue // reported as it is
		}
		mcp, sse, msg, ws := e.Paths()
		field := "path"
		if e.Path == "" {
			field = "name"
		}
		for _, p := range []string{mcp, sse, msg, ws} {
			if r := reservedPath(p); r != "" {
				report(field, fmt.Sprintf("endpoint %q would be served at %s, which collides with %s, which the daemon serves", e.Name, p, r))
				break
			}
			if e.Path != "" && strings.HasPrefix(p, EndpointPrefix) && !strings.HasPrefix(p, EndpointPrefix+e.Name+"/") {
				report(field, fmt.Sprintf("%s is under %s, where each endpoint has its default paths (%sNAME/); use %s%s/ or a folder of its own", p, EndpointPrefix, EndpointPrefix, EndpointPrefix, e.Name))
				break
			}
			if j, dup := taken[p]; dup {
				report(field, fmt.Sprintf("endpoint %q would be served at %s, as endpoint %q is", e.Name, p, c.Endpoints[j].Name))
				break
			}
			taken[p] = i
		}
	}
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// Endpoint returns the endpoint named name.
func (c *Config) Endpoint(name string) (Endpoint, bool) {
	for _, e := range c.Endpoints {
		if e.Name == name {
			return e, true
		}
	}
	return Endpoint{}, false
}
