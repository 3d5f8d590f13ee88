package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/secret"
)

// maxIDLen bounds a server id, which becomes part of every tool name: LLM
// providers cap tool names at 64 characters.
const maxIDLen = 32

const (
	placeholderMsg     = "placeholders are only allowed in env and headers values"
	placeholderArgsMsg = placeholderMsg + "; argv is readable by every user on this machine, pass secrets through env"
)

// Validate checks c and returns every problem at once: errors.Join of
// [*Problem]s, or nil. It does not change c. An unset Transport is inferred
// as [Load] does; unset timeouts and tool_name_format mean the defaults.
//
// Field paths use s.Source.Field when set (as for a loaded config, naming the
// declaration in its own file) and mcp_servers[i] with i the index in
// c.Servers otherwise. Lines are those of the server tables; [Load] reports
// the line of each key.
func (c *Config) Validate() error {
	v := &validator{}
	v.config(c)
	return joinProblems(v.problems)
}

// validator collects validation problems. Inside Load it knows each file's
// key lines, and which fields already had a decoding problem.
type validator struct {
	files map[string]*fileResult // nil outside Load
	// noURLPolicy leaves a server URL's address policy to the caller
	// (DecodeServer; see Config.CheckServerURL).
	noURLPolicy bool
	tnfPos      Position            // where tool_name_format was set
	merged      map[string]Position // where each key and element of a key-by-key table was set
	problems    []*Problem
	warnings    []*Problem // see Warnings
}

func (v *validator) config(c *Config) {
	if c.ToolNameFormat != "" {
		if msg := checkToolNameFormat(c.ToolNameFormat); msg != "" {
			v.problems = append(v.problems, &Problem{Pos: v.tnfPos, Field: "tool_name_format", Msg: msg})
		}
	}
	seen, folded := map[string]int{}, map[string]int{}
	for i := range c.Servers {
		v.server(c, i, seen, folded)
	}
	v.gateway(c)
	v.endpoints(c)
	v.modes(c)
	v.state(c)
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		p := c.Providers[name]
		v.provider(c, &p)
	}
	if msg := c.Telemetry.CheckEndpoint(); msg != "" {
		pos, ok := v.merged["telemetry.otlp_endpoint"]
		if !ok {
			pos = c.Telemetry.Source
		}
		v.problems = append(v.problems, &Problem{Pos: pos, Field: "telemetry.otlp_endpoint", Msg: msg})
	}
	if v.files == nil {
		// Inside Load, decoding has checked these with each key's line.
		for _, mt := range mergedTables {
			mt.checkBuilt(c, v)
		}
	}
}

// checkToolNameFormat returns what is wrong with a tool_name_format, or "".
func checkToolNameFormat(f string) string {
	if strings.Contains(f, "{{") {
		return "placeholders are not allowed here; use {server} and {tool}"
	}
	hasTool := false
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '{':
			j := strings.IndexByte(f[i:], '}')
			if j < 0 {
				return fmt.Sprintf("unterminated { at byte %d", i)
			}
			switch name := f[i+1 : i+j]; name {
			case "tool":
				hasTool = true
			case "server":
			default:
				return fmt.Sprintf("unknown {%s}; only {server} and {tool} are replaced", name)
			}
			i += j
		case '}':
			return fmt.Sprintf("unmatched } at byte %d", i)
		}
	}
	if !hasTool {
		return "must contain {tool}"
	}
	return ""
}

// serverCheck places the problems of one server.
type serverCheck struct {
	v      *validator
	s      *Server
	prefix string      // field path of the server's table
	fr     *fileResult // nil when the key lines are unknown
}

// errorf reports a problem at field, relative to the server ("" for the
// server itself), unless decoding already reported that field.
func (sc *serverCheck) errorf(field, format string, args ...any) {
	full := sc.prefix
	if field != "" {
		full += "." + field
	}
	line := sc.s.Source.Line
	if sc.fr != nil {
		for p := full; p != "" && p != sc.prefix; p = decode.ParentPath(p) {
			if sc.fr.Bad(p) {
				return
			}
		}
		if l := sc.fr.LineOf(full); l > 0 {
			line = l
		}
	}
	sc.v.problems = append(sc.v.problems, &Problem{
		Pos:   Position{File: sc.s.Source.File, Line: line},
		Field: full,
		Msg:   fmt.Sprintf(format, args...),
	})
}

// isBad reports whether decoding already reported field (relative to the
// server).
func (sc *serverCheck) isBad(field string) bool {
	return sc.fr != nil && sc.fr.Bad(sc.prefix+"."+field)
}

func hasPlaceholder(s string) bool { return strings.Contains(s, "{{") }

func validID(id string) bool { return len(id) <= maxIDLen && decode.IsBareKey(id) }

func isNetwork(t Transport) bool {
	return t == TransportHTTP || t == TransportSSE || t == TransportWebSocket
}

// inferTransport is the transport of a server that names none: command →
// stdio, url → websocket for ws:// and wss://, http otherwise.
func inferTransport(s *Server) Transport {
	switch {
	case s.Command != "":
		return TransportStdio
	case s.URL != "":
		if isWebSocketURL(s.URL) {
			return TransportWebSocket
		}
		return TransportHTTP
	}
	return ""
}

func urlScheme(raw string) string {
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	return strings.ToLower(scheme)
}

func isWebSocketURL(raw string) bool {
	s := urlScheme(raw)
	return s == "ws" || s == "wss"
}

// server checks c.Servers[i]; seen and folded map the ids checked so far,
// as written and in lower case, to their index.
func (v *validator) server(c *Config, i int, seen, folded map[string]int) {
	s := &c.Servers[i]
	sc := &serverCheck{v: v, s: s, prefix: s.Source.Field}
	if sc.prefix == "" {
		sc.prefix = decode.IndexPath("mcp_servers", i)
	}
	if v.files != nil {
		sc.fr = v.files[s.Source.File]
	}

	switch {
	case s.ID == "":
		sc.errorf("id", "missing; every server needs an id")
	case checkServerID(s.ID) == "":
		where := func(j int) string {
			o := c.Servers[j]
			w := o.Source.Field
			if w == "" {
				w = decode.IndexPath("mcp_servers", j)
			}
			if o.Source.File != "" {
				w += " in " + o.Source.String()
			}
			return w
		}
		if j, dup := seen[s.ID]; dup {
			sc.errorf("id", "duplicate id %q (also %s)", s.ID, where(j))
		} else if j, near := folded[strings.ToLower(s.ID)]; near {
			// Tool names (mcp_GitHub_x, mcp_github_x) and what is named
			// after an id where case does not count would collide.
			sc.errorf("id", "%q differs only by case from %q (%s): tool names and other names made of ids would collide; rename one", s.ID, c.Servers[j].ID, where(j))
		} else {
			seen[s.ID], folded[strings.ToLower(s.ID)] = i, i
		}
	}

	// Each field's own checks (serverFields), then those that look at
	// several fields.
	serverFields.Check(s, func(field, msg string) { sc.errorf(field, "%s", msg) })

	t := s.Transport
	if t == "" {
		t = inferTransport(s)
	}
	switch {
	case t == "":
		if sc.isBad("command") || sc.isBad("url") || sc.isBad("transport") || sc.isBad("type") {
			break // wrongly typed: already reported
		}
		sc.errorf("", "needs command (transport stdio) or url (transport http, sse or websocket)")
	case checkTransport(t) != "":
		t = "" // reported with the transport field
	}

	switch {
	case t == TransportStdio && s.Command == "":
		sc.errorf("command", "required for transport stdio")
	case isNetwork(t) && s.URL == "":
		sc.errorf("url", "required for transport %s", t)
	}
	for _, f := range serverFields {
		if !f.IsSet(s) {
			continue
		}
		switch {
		case t == TransportStdio && f.Scope == forNetwork:
			sc.errorf(f.Key, "only for network transports (http, sse, websocket), not stdio")
		case isNetwork(t) && f.Scope == forStdio:
			sc.errorf(f.Key, "only for transport stdio, not %s", t)
		}
	}

	if t == TransportStdio {
		sc.checkEnvGuard()
	}
	sc.warnings(t)
	if s.Registry != nil {
		sc.checkRegistrySource(s.Registry)
	}
	if s.OAuth != nil && isNetwork(t) {
		sc.checkOAuth(s.OAuth)
	}

	if isNetwork(t) && s.URL != "" && !hasPlaceholder(s.URL) {
		scheme := urlScheme(s.URL)
		switch {
		case t != TransportWebSocket && (scheme == "ws" || scheme == "wss"):
			sc.errorf("url", "a %s:// URL needs transport websocket, not %s", scheme, t)
		case t == TransportWebSocket && (scheme == "http" || scheme == "https"):
			sc.errorf("url", "transport websocket needs a ws:// or wss:// URL, not %s://", scheme)
		}
		if !v.noURLPolicy {
			if msg := urlPolicy(&c.Network, s); msg != "" {
				sc.errorf("url", "%s", msg)
			}
		}
	}
}

// checkRoot returns what is wrong with a root URI, or "".
func checkRoot(r string) string {
	u, err := url.Parse(r)
	if err != nil || u.Scheme != "file" {
		return fmt.Sprintf("must be a file:// URI, not %q", r)
	}
	if u.Host != "" && u.Host != "localhost" {
		return fmt.Sprintf("must be a local file:// URI, not one on host %q", u.Host)
	}
	if !strings.HasPrefix(u.Path, "/") {
		return fmt.Sprintf("must be an absolute file:// URI such as file:///home/me/project, not %q", r)
	}
	return ""
}

// placeholderProblems returns what is wrong with the placeholders of an
// env or headers value: a malformed placeholder, or an {{env.NAME}} that
// reads a secret's environment variable (resolved as env, its value would
// not be registered as a secret, and so not redacted, and it would
// sidestep the secret store).
func placeholderProblems(value string) []string {
	ps, err := secret.Parse(value)
	if err != nil {
		return []string{err.Error()}
	}
	var msgs []string
	for _, p := range ps {
		if p.Kind == "env" && isSecretEnvVar(p.Name) {
			msgs = append(msgs, fmt.Sprintf("%s reads a secret's environment variable; write {{secrets.NAME}} instead", p))
		}
	}
	return msgs
}

// isSecretEnvVar reports whether name is where secret.EnvStore looks.
func isSecretEnvVar(name string) bool {
	return strings.HasPrefix(strings.ToUpper(name), "SWITCHBOARD_SECRET_")
}

func validEnvName(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func sortedMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// urlPolicy says why n refuses s's URL; "" when it does not.
func urlPolicy(n *Network, s *Server) string {
	err := n.guard().CheckURL(s.URL, s.AllowLocalEndpoint)
	if err == nil {
		return ""
	}
	// The field path already says which URL: keep only the reason.
	var ne *netguard.Error
	if errors.As(err, &ne) {
		return ne.Reason
	}
	return err.Error()
}

// CheckServerURL applies c's network policy ([network] and the server's
// allow_local_endpoint) to the URL of a server that was decoded on its own
// (DecodeServer, an agent's inline server), as Load applies it to the
// configured ones. The problem names the server's file, line and field.
func (c *Config) CheckServerURL(s Server) error {
	if !isNetwork(inferTransport(&s)) || s.URL == "" || hasPlaceholder(s.URL) {
		return nil
	}
	msg := urlPolicy(&c.Network, &s)
	if msg == "" {
		return nil
	}
	field := s.Source.Field
	if field == "" {
		field = s.ID
	}
	return &Problem{Pos: s.Source, Field: field + ".url", Msg: msg}
}
