package config

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/secret"
)

// DefaultGatewayListen is where `switchboard serve` listens when neither
// [gateway] listen nor --listen says otherwise: loopback only.
const DefaultGatewayListen = "127.0.0.1:7300"

// Gateway is the [gateway] table: how `switchboard serve` offers the
// configured servers as one MCP endpoint.
//
//	[gateway]
//	listen           = "127.0.0.1:7300"           # host:port; port 0 picks a free one
//	tool_name_format = "{server}__{tool}"         # the names clients see; default the top-level one
//	servers          = ["github", "search"]       # the servers to expose; default all
//	allowed_origins  = ["https://app.example.com"] # browser origins besides the gateway's own
//	auth_token       = "{{secrets.gateway_token}}" # a placeholder; a literal token is refused
//	json_response    = false                      # answer POSTs with application/json, not SSE
//	session_timeout  = "30m"                      # idle Streamable HTTP sessions end
//	max_sessions     = 256                        # sessions at once; the idlest makes room
//	max_client_sessions = 64                      # sessions one client address holds
//	shutdown_grace   = "5s"                       # SIGTERM: calls get this long, then are cancelled
//
// The zero value means the defaults. A later file's keys override an
// earlier file's one by one. Listening beyond loopback needs auth_token.
type Gateway struct {
	// Listen is host:port; "" means [DefaultGatewayListen].
	Listen string
	// ToolNameFormat names the tools clients see; "" means
	// [Config.ToolNameFormat].
	ToolNameFormat string
	// Servers lists the ids of the servers to expose; nil means all.
	Servers []string
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed
	// besides the gateway's own.
	AllowedOrigins []string
	// AuthToken is a placeholder ({{secrets.NAME}} or {{env.NAME}}) for the
	// bearer token every HTTP request must carry; "" means none. Resolve it
	// with [Gateway.ResolveAuthToken].
	AuthToken string
	// JSONResponse answers Streamable HTTP POSTs with application/json
	// instead of an SSE stream when the call needs no streaming.
	JSONResponse bool
	// SessionTimeout ends idle Streamable HTTP sessions; 0 means the
	// gateway's default.
	SessionTimeout time.Duration
	// MaxSessions bounds the downstream sessions held at once (Streamable
	// HTTP, legacy SSE, WebSocket, 2026-07-28 subscriptions/listen); 0
	// means [DefaultGatewayMaxSessions].
	MaxSessions int
	// MaxClientSessions bounds the sessions one client address holds; 0
	// means [DefaultGatewayMaxClientSessions]. It may not exceed
	// MaxSessions.
	MaxClientSessions int
	// ShutdownGrace is how long requests in flight get to finish when
	// `switchboard serve` is told to stop; past it they are cancelled
	// (upstream too) and the process exits. 0 means
	// [DefaultGatewayShutdownGrace].
	ShutdownGrace time.Duration

	// Source is where the last [gateway] table was declared; zero when none
	// was.
	Source Position
}

// The defaults of the [gateway] keys that bound the endpoint; the gateway
// package says why each is what it is (gateway.DefaultMaxSessions).
const (
	DefaultGatewayMaxSessions       = 256
	DefaultGatewayMaxClientSessions = 64
	DefaultGatewayShutdownGrace     = 5 * time.Second
)

var tomlGatewayKeys = []string{
	"listen", "tool_name_format", "servers", "allowed_origins",
	"auth_token", "json_response", "session_timeout",
	"max_sessions", "max_client_sessions", "shutdown_grace",
}

// tomlGateway decodes the [gateway] table at field path path ("gateway").
func (r *fileResult) tomlGateway(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		r.errorf(path, "must be a table, not %s", r.typeName(v))
		return
	}
	g := &Gateway{Source: Position{File: r.file, Line: r.lineOf(path), Field: path}}
	set := map[string]bool{}
	for _, k := range r.sortedKeys(path, m) {
		v, f := m[k], keyPath(path, k)
		ok := false
		switch k {
		case "listen":
			g.Listen, ok = r.str(f, v)
		case "tool_name_format":
			g.ToolNameFormat, ok = r.str(f, v)
		case "servers":
			g.Servers, ok = r.strList(f, v)
		case "allowed_origins":
			g.AllowedOrigins, ok = r.strList(f, v)
		case "auth_token":
			g.AuthToken, ok = r.str(f, v)
			if ok && strings.TrimSpace(g.AuthToken) == "" {
				// Set empty, it would also override a token an earlier
				// file set, and a loopback gateway would take anyone.
				r.errorf(f, `empty; write "{{secrets.NAME}}" or "{{env.NAME}}", or leave auth_token out for no token (loopback only)`)
				ok = false
			}
		case "json_response":
			g.JSONResponse, ok = r.boolean(f, v)
		case "session_timeout":
			g.SessionTimeout, ok = r.duration(f, v)
		case "max_sessions":
			g.MaxSessions, ok = r.atLeastOne(f, v)
		case "max_client_sessions":
			g.MaxClientSessions, ok = r.atLeastOne(f, v)
		case "shutdown_grace":
			g.ShutdownGrace, ok = r.duration(f, v)
		default:
			r.errorf(f, "%s", unknownKey(k, tomlGatewayKeys))
		}
		if ok {
			set[k] = true
		}
	}
	r.gateway, r.gatewaySet = g, set
}

// mergeGateway applies the keys a file's [gateway] table set over dst, and
// records where each came from for validation.
func mergeGateway(dst *Gateway, r *fileResult, v *validator) {
	src := r.gateway
	dst.Source = src.Source
	if v.gwPos == nil {
		v.gwPos = map[string]Position{}
	}
	for k := range r.gatewaySet {
		f := keyPath("gateway", k)
		// A list set here replaces the earlier one whole, with its lines.
		for p := range v.gwPos {
			if strings.HasPrefix(p, f+"[") {
				delete(v.gwPos, p)
			}
		}
		v.gwPos[f] = Position{File: r.file, Line: r.lineOf(f)}
		var list []string
		switch k {
		case "listen":
			dst.Listen = src.Listen
		case "tool_name_format":
			dst.ToolNameFormat = src.ToolNameFormat
		case "servers":
			dst.Servers, list = src.Servers, src.Servers
		case "allowed_origins":
			dst.AllowedOrigins, list = src.AllowedOrigins, src.AllowedOrigins
		case "auth_token":
			dst.AuthToken = src.AuthToken
		case "json_response":
			dst.JSONResponse = src.JSONResponse
		case "session_timeout":
			dst.SessionTimeout = src.SessionTimeout
		case "max_sessions":
			dst.MaxSessions = src.MaxSessions
		case "max_client_sessions":
			dst.MaxClientSessions = src.MaxClientSessions
		case "shutdown_grace":
			dst.ShutdownGrace = src.ShutdownGrace
		}
		for i := range list {
			e := indexPath(f, i)
			v.gwPos[e] = Position{File: r.file, Line: r.lineOf(e)}
		}
	}
	for f := range r.bad {
		if f == "gateway" || strings.HasPrefix(f, "gateway.") {
			if v.gwBad == nil {
				v.gwBad = map[string]bool{}
			}
			v.gwBad[f] = true
		}
	}
}

// gateway validates c.Gateway against the merged configuration (servers
// may be declared in another file than the [gateway] table naming them).
func (v *validator) gateway(c *Config) {
	g := &c.Gateway
	errorf := func(field, format string, args ...any) {
		full := "gateway." + field // fields here are bare keys and indexes
		pos := g.Source
		for p := full; p != ""; p = parentPath(p) {
			if q, ok := v.gwPos[p]; ok {
				pos = q
				break
			}
		}
		v.problems = append(v.problems, &Problem{Pos: Position{File: pos.File, Line: pos.Line}, Field: full, Msg: fmt.Sprintf(format, args...)})
	}

	loopback := true
	if g.Listen != "" {
		var msg string
		loopback, msg = checkListen(g.Listen)
		if msg != "" {
			errorf("listen", "%s", msg)
		}
	}
	if g.ToolNameFormat != "" {
		if msg := checkToolNameFormat(g.ToolNameFormat); msg != "" {
			errorf("tool_name_format", "%s", msg)
		}
	}
	seen := map[string]int{}
	for i, id := range g.Servers {
		f := indexPath("servers", i)
		switch {
		case hasPlaceholder(id):
			errorf(f, "placeholders are not allowed here")
		case id == "":
			errorf(f, "empty server id")
		default:
			if j, dup := seen[id]; dup {
				errorf(f, "duplicate %q (also servers[%d])", id, j)
				continue
			}
			seen[id] = i
			if _, ok := c.Server(id); !ok {
				errorf(f, "no server %q in the configuration (%s)", id, serverIDList(c))
			}
		}
	}
	for i, o := range g.AllowedOrigins {
		if msg := checkOrigin(o); msg != "" {
			errorf(indexPath("allowed_origins", i), "%s", msg)
		}
	}
	if g.AuthToken != "" {
		ps, err := secret.Parse(g.AuthToken)
		switch {
		case err != nil:
			errorf("auth_token", "%v", err)
		case len(ps) == 0:
			// Never quote the value: it is a token.
			errorf("auth_token", `a literal token is not allowed: config files are shared and committed, and a token written there leaks; write "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}"`)
		}
	}
	if g.MaxSessions < 0 {
		errorf("max_sessions", "must be at least 1, not %d", g.MaxSessions)
	}
	switch total := cmp.Or(g.MaxSessions, DefaultGatewayMaxSessions); {
	case g.MaxClientSessions < 0:
		errorf("max_client_sessions", "must be at least 1, not %d", g.MaxClientSessions)
	case total > 0 && g.MaxClientSessions > total:
		errorf("max_client_sessions", "%d is more than max_sessions (%d): one client could hold every session", g.MaxClientSessions, total)
	}
	if g.ShutdownGrace < 0 {
		errorf("shutdown_grace", "must be positive, not %s", g.ShutdownGrace)
	}
	if !loopback && g.AuthToken == "" && !v.gwBad["gateway.auth_token"] {
		errorf("listen", "serving beyond loopback needs auth_token")
	}
}

// checkListen checks a host:port to listen on and reports whether it is
// loopback only. A host name other than localhost is not loopback: it may
// resolve anywhere.
func checkListen(addr string) (loopback bool, msg string) {
	if hasPlaceholder(addr) {
		return true, "placeholders are not allowed here"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return true, fmt.Sprintf(`must be host:port, such as "127.0.0.1:7300" or "[::1]:7300", not %q`, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return true, fmt.Sprintf("invalid port %q (want 0 to 65535; 0 picks a free one)", port)
	}
	return IsLoopbackHost(host), ""
}

// IsLoopbackHost reports whether listening on host reaches this machine
// only: "localhost" or a loopback IP. The empty host (every interface) is
// not.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// checkOrigin returns what is wrong with an allowed origin, or "".
func checkOrigin(o string) string {
	const want = "must be an origin, scheme://host[:port] such as https://app.example.com"
	if hasPlaceholder(o) {
		return "placeholders are not allowed here"
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Sprintf("%s, not %q", want, o)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("%s: scheme %q is not http or https", want, u.Scheme)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Sprintf("%s, without user, path, query or fragment; not %q", want, o)
	}
	return ""
}

func serverIDList(c *Config) string {
	if len(c.Servers) == 0 {
		return "none configured"
	}
	ids := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		ids[i] = s.ID
	}
	return "configured: " + strings.Join(ids, ", ")
}

// ResolveAuthToken expands g.AuthToken's placeholders, registering the
// token with red (when non-nil) so that it never reaches output. It returns
// "" when no token is configured; an unresolved placeholder is an error
// naming it, never a value.
func (g Gateway) ResolveAuthToken(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (string, error) {
	if g.AuthToken == "" {
		return "", nil
	}
	tok, err := secret.Expand(g.AuthToken, getenv, secrets, red)
	if err != nil {
		return "", fmt.Errorf("gateway.auth_token: %w", err)
	}
	if tok == "" {
		return "", fmt.Errorf("gateway.auth_token: %s resolved to the empty string", g.AuthToken)
	}
	if red != nil {
		// {{env.X}} values are not secrets in general; this one is.
		red.Add(tok)
	}
	return tok, nil
}
