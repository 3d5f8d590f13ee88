package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// DefaultRegistryURL is the official MCP registry, searched when no file
// declares [[registries]].
const DefaultRegistryURL = "https://registry.modelcontextprotocol.io"

// A Registry is one [[registries]] table: an MCP registry (the official
// one, or a sub-registry that implements its API) that `switchboard
// search` and `switchboard add --from-registry` read.
type Registry struct {
	// Name is how commands name it ("official" for the default one).
	Name string
	// URL is its base URL, without /v0.1.
	URL string
	// Token, when set, is sent as a bearer token: a {{secrets.NAME}} or
	// {{env.NAME}} placeholder, never the token itself.
	Token  string
	Source Position
}

// RegistrySource is where a server added with `switchboard add
// --from-registry` came from: the server's name in the registry, the
// version pinned and the registry's base URL. `switchboard outdated`
// compares Version with the registry's latest.
type RegistrySource struct {
	Name    string
	Version string
	URL     string
}

var registryFields = decode.Table[Registry]{
	decode.String("name", decode.TOML, func(r *Registry) *string { return &r.Name }, checkRegistryName),
	decode.String("url", decode.TOML, func(r *Registry) *string { return &r.URL }, checkRegistryURL),
	decode.String("token", decode.TOML, func(r *Registry) *string { return &r.Token }, checkClientSecret),
}

var registrySourceFields = decode.Table[RegistrySource]{
	decode.String("name", every, func(r *RegistrySource) *string { return &r.Name }, checkRegistryServerName),
	decode.String("version", every, func(r *RegistrySource) *string { return &r.Version }, checkRegistryVersion),
	decode.String("url", every, func(r *RegistrySource) *string { return &r.URL }, checkRegistryURL),
}

// RegistryList returns the registries the configuration declares, or the
// official one alone when it declares none.
func (c *Config) RegistryList() []Registry {
	if len(c.Registries) > 0 {
		return c.Registries
	}
	return []Registry{{Name: "official", URL: DefaultRegistryURL}}
}

func checkRegistryName(s string) string {
	if s != "" && !validID(s) {
		return fmt.Sprintf("invalid name %q: use 1 to %d characters of A-Z a-z 0-9 _ -", s, maxIDLen)
	}
	return ""
}

// checkRegistryURL admits an http(s) URL without credentials, query or
// fragment; plain http only to a loopback host (a local sub-registry),
// since the answers become command lines.
func checkRegistryURL(s string) string {
	if s == "" {
		return ""
	}
	if hasPlaceholder(s) {
		return placeholderMsg
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return "must be an http(s) URL, such as " + DefaultRegistryURL
	case u.User != nil:
		return "must not hold credentials: use token = \"{{secrets.NAME}}\""
	case u.RawQuery != "" || u.Fragment != "":
		return "must not have a query or fragment"
	case u.Scheme == "http" && !isLoopbackHost(u.Hostname()):
		return "plain http to a remote host: use https"
	}
	return ""
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1" || strings.HasSuffix(h, ".localhost")
}

// checkRegistryServerName checks a server name as the registry spells it:
// reverse-DNS namespace, a slash, a name.
func checkRegistryServerName(s string) string {
	if s == "" {
		return ""
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.ContainsAny(s, " \t\r\n\"{}") || len(s) > 200 {
		return fmt.Sprintf("invalid registry server name %q: want NAMESPACE/NAME, such as io.github.user/server", s)
	}
	return ""
}

func checkRegistryVersion(s string) string {
	if strings.ContainsAny(s, " \t\r\n\"{}/") || len(s) > 255 {
		return fmt.Sprintf("invalid version %q", s)
	}
	return ""
}

// readRegistrySource decodes a server's registry = { name, version, url }.
func readRegistrySource(d *decode.Decoder, field string, v any) (*RegistrySource, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a table (registry = { name = \"…\", version = \"…\", url = \"…\" }), not %s", d.TypeName(v))
		return nil, false
	}
	r := new(RegistrySource)
	registrySourceFields.DecodeAndCheck(d, field, m, r)
	return r, true
}

// checkRegistrySource checks what needs all of the table's keys.
func (sc *serverCheck) checkRegistrySource(r *RegistrySource) {
	registrySourceFields.Check(r, func(field, msg string) { sc.errorf(decode.KeyPath("registry", field), "%s", msg) })
	for _, k := range []struct{ key, v string }{{"name", r.Name}, {"version", r.Version}, {"url", r.URL}} {
		if k.v == "" {
			sc.errorf("registry."+k.key, "missing: a server added from a registry records its name, version and the registry's url")
		}
	}
}

func registrySourceTOML(r *RegistrySource) string {
	var parts []string
	for _, f := range registrySourceFields {
		if f.IsSet(r) {
			parts = append(parts, tomlKey(f.Key)+" = "+tomlValue(f.Get(r)))
		}
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// tomlRegistries decodes [[registries]].
func (r *fileResult) tomlRegistries(p string, v any) {
	for _, t := range r.arrayOfTables(p, "registries", v) {
		f, m := t.path, t.m
		g := Registry{Source: Position{File: r.File, Line: r.LineOf(f), Field: f}}
		before := len(r.Problems)
		registryFields.DecodeAndCheck(r.Decoder, f, m, &g)
		if g.Name == "" && !r.Bad(decode.KeyPath(f, "name")) {
			r.Errorf(decode.KeyPath(f, "name"), "missing: how commands name this registry (search --registry NAME)")
		}
		if g.URL == "" && !r.Bad(decode.KeyPath(f, "url")) {
			r.Errorf(decode.KeyPath(f, "url"), "missing: the registry's base URL, such as %s", DefaultRegistryURL)
		}
		for _, x := range r.registries {
			if x.Name == g.Name {
				r.Errorf(decode.KeyPath(f, "name"), "registry %q is declared twice in this file (first at line %d)", g.Name, x.Source.Line)
			}
		}
		if len(r.Problems) > before {
			continue
		}
		r.registries = append(r.registries, g)
	}
}

// mergeRegistries adds a file's registries to c: a later file's registry
// of the same name replaces the earlier one, in its place.
func mergeRegistries(c *Config, rs []Registry) {
	for _, g := range rs {
		i := -1
		for j, x := range c.Registries {
			if x.Name == g.Name {
				i = j
			}
		}
		if i >= 0 {
			c.Registries[i] = g
			continue
		}
		c.Registries = append(c.Registries, g)
	}
}

// ServerEntry returns s as the generic values of one entry, as
// [DecodeServer] and the REST API's server entries read them: the keys of
// an [[mcp_servers]] table, written by [ServerTOML] and read back.
func ServerEntry(s Server) (map[string]any, error) {
	var doc struct {
		Servers []map[string]any `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(ServerTOML(s), &doc); err != nil {
		return nil, fmt.Errorf("server %s: %w", s.ID, err)
	}
	if len(doc.Servers) != 1 {
		return nil, fmt.Errorf("server %s: no entry written", s.ID)
	}
	return doc.Servers[0], nil
}
