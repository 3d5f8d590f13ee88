package config

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strings"

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
	gwPos       map[string]Position // where each [gateway] key and element was set
	gwBad       map[string]bool     // [gateway] fields decoding already reported
	problems    []*Problem
}

func (v *validator) config(c *Config) {
	if c.ToolNameFormat != "" {
		if msg := checkToolNameFormat(c.ToolNameFormat); msg != "" {
			v.problems = append(v.problems, &Problem{Pos: v.tnfPos, Field: "tool_name_format", Msg: msg})
		}
	}
	seen := map[string]int{}
	for i := range c.Servers {
		v.server(c, i, seen)
	}
	v.gateway(c)
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		p := c.Providers[name]
		v.provider(c, &p)
	}
	if v.files == nil {
		// Inside Load, decoding has checked [network] with each key's line.
		v.network(&c.Network)
	}
}

// network checks a [network] built in Go rather than loaded.
func (v *validator) network(n *Network) {
	errorf := func(field, format string, args ...any) {
		v.problems = append(v.problems, &Problem{Pos: Position{File: n.Source.File, Line: n.Source.Line}, Field: "network." + field, Msg: fmt.Sprintf(format, args...)})
	}
	for _, l := range []struct {
		name string
		ps   []netip.Prefix
	}{{"allow_cidrs", n.AllowCIDRs}, {"deny_cidrs", n.DenyCIDRs}} {
		for i, p := range l.ps {
			if !p.IsValid() || p != p.Masked() {
				errorf(indexPath(l.name, i), "invalid CIDR prefix %s", p)
			}
		}
	}
	if n.Proxy != "" {
		if msg := checkProxy(n.Proxy); msg != "" {
			errorf("proxy", "%s", msg)
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
		for p := full; p != "" && p != sc.prefix; p = parentPath(p) {
			if sc.fr.bad[p] {
				return
			}
		}
		if l := sc.fr.lineOf(full); l > 0 {
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
	return sc.fr != nil && sc.fr.bad[sc.prefix+"."+field]
}

func hasPlaceholder(s string) bool { return strings.Contains(s, "{{") }

func validID(id string) bool { return len(id) <= maxIDLen && isBareKey(id) }

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

func (v *validator) server(c *Config, i int, seen map[string]int) {
	s := &c.Servers[i]
	sc := &serverCheck{v: v, s: s, prefix: s.Source.Field}
	if sc.prefix == "" {
		sc.prefix = indexPath("mcp_servers", i)
	}
	if v.files != nil {
		sc.fr = v.files[s.Source.File]
	}

	switch {
	case s.ID == "":
		sc.errorf("id", "missing; every server needs an id")
	case hasPlaceholder(s.ID):
		sc.errorf("id", placeholderMsg)
	case !validID(s.ID):
		sc.errorf("id", "invalid id %q: use 1 to %d characters of A-Z a-z 0-9 _ -", s.ID, maxIDLen)
	default:
		if j, dup := seen[s.ID]; dup {
			o := c.Servers[j]
			where := o.Source.Field
			if where == "" {
				where = indexPath("mcp_servers", j)
			}
			if o.Source.File != "" {
				where += " in " + o.Source.String()
			}
			sc.errorf("id", "duplicate id %q (also %s)", s.ID, where)
		} else {
			seen[s.ID] = i
		}
	}

	t := s.Transport
	if t == "" {
		t = inferTransport(s)
	}
	switch {
	case t == "":
		if sc.isBad("command") || sc.isBad("url") {
			break // wrongly typed: already reported
		}
		sc.errorf("", "needs command (transport stdio) or url (transport http, sse or websocket)")
	case hasPlaceholder(string(t)):
		sc.errorf("transport", placeholderMsg)
		t = ""
	case t != TransportStdio && !isNetwork(t):
		sc.errorf("transport", "unknown transport %q (want stdio, http, sse or websocket)", string(t))
		t = ""
	}

	if t == TransportStdio {
		if s.Command == "" {
			sc.errorf("command", "required for transport stdio")
		}
		const netOnly = "only for network transports (http, sse, websocket), not stdio"
		if s.URL != "" {
			sc.errorf("url", netOnly)
		}
		if s.Headers != nil {
			sc.errorf("headers", netOnly)
		}
		if s.AllowLocalEndpoint {
			sc.errorf("allow_local_endpoint", netOnly)
		}
		if s.AllowCrossOriginRedirects {
			sc.errorf("allow_cross_origin_redirects", netOnly)
		}
	}
	if isNetwork(t) {
		if s.URL == "" {
			sc.errorf("url", "required for transport %s", t)
		}
		stdioOnly := "only for transport stdio, not " + string(t)
		if s.Command != "" {
			sc.errorf("command", "%s", stdioOnly)
		}
		if s.Args != nil {
			sc.errorf("args", "%s", stdioOnly)
		}
		if s.Env != nil {
			sc.errorf("env", "%s", stdioOnly)
		}
		if s.AllowEnv != nil {
			sc.errorf("allow_env", "%s", stdioOnly)
		}
		if s.Cwd != "" {
			sc.errorf("cwd", "%s", stdioOnly)
		}
	}

	// Placeholders are resolved only where Resolve looks (env and headers
	// values), so anywhere else one would be passed on literally.
	for _, f := range []struct{ name, value string }{
		{"description", s.Description},
		{"command", s.Command},
		{"cwd", s.Cwd},
		{"url", s.URL},
	} {
		if hasPlaceholder(f.value) {
			sc.errorf(f.name, placeholderMsg)
		}
	}
	for i, a := range s.Args {
		if hasPlaceholder(a) {
			sc.errorf(indexPath("args", i), placeholderArgsMsg)
		}
	}

	for _, k := range sortedMapKeys(s.Env) {
		f := keyPath("env", k)
		switch {
		case hasPlaceholder(k):
			sc.errorf(f, "%s, not in names", placeholderMsg)
		case !validEnvName(k):
			sc.errorf(f, "invalid variable name: use A-Z a-z 0-9 _, not starting with a digit")
		}
		checkPlaceholders(sc, f, s.Env[k])
	}
	if t == TransportStdio {
		sc.checkEnvGuard()
	}
	for _, k := range sortedMapKeys(s.Headers) {
		f := keyPath("headers", k)
		switch {
		case hasPlaceholder(k):
			sc.errorf(f, "%s, not in names", placeholderMsg)
		case !validHeaderName(k):
			sc.errorf(f, "invalid header name: must be an HTTP token (letters, digits and !#$%%&'*+-.^_`|~)")
		}
		val := s.Headers[k]
		if strings.ContainsAny(val, "\r\n\x00") {
			// Header injection: a newline would start another header.
			sc.errorf(f, "value must not contain CR, LF or NUL")
		}
		checkPlaceholders(sc, f, val)
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

	tools := map[string]int{}
	for i, name := range s.ToolsAllowlist {
		f := indexPath("tools_allowlist", i)
		switch {
		case hasPlaceholder(name):
			sc.errorf(f, placeholderMsg)
		case name == "":
			sc.errorf(f, "empty tool name")
		default:
			if j, dup := tools[name]; dup {
				sc.errorf(f, "duplicate %q (also tools_allowlist[%d])", name, j)
			} else {
				tools[name] = i
			}
		}
	}

	for i, r := range s.Roots {
		f := indexPath("roots", i)
		if hasPlaceholder(r) {
			sc.errorf(f, placeholderMsg)
		} else if msg := checkRoot(r); msg != "" {
			sc.errorf(f, "%s", msg)
		}
	}

	if s.Timeout < 0 {
		sc.errorf("timeout", "must be positive, not %v", s.Timeout)
	}
	if s.ConnectTimeout < 0 {
		sc.errorf("connect_timeout", "must be positive, not %v", s.ConnectTimeout)
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

// checkPlaceholders reports a malformed placeholder, and an {{env.NAME}}
// that reads a secret's environment variable: resolved as env, its value
// would not be registered as a secret (and so not redacted), and it would
// sidestep the secret store.
func checkPlaceholders(sc *serverCheck, field, value string) {
	ps, err := secret.Parse(value)
	if err != nil {
		sc.errorf(field, "%v", err)
		return
	}
	for _, p := range ps {
		if p.Kind == "env" && isSecretEnvVar(p.Name) {
			sc.errorf(field, "%s reads a secret's environment variable; write {{secrets.NAME}} instead", p)
		}
	}
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
