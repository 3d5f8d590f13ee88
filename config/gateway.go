package config

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/clientaddr"
	"github.com/switchboardmcp/switchboard/internal/decode"
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
//	replica_address  = "10.0.0.5:7300"            # where the other replicas reach this one
//	tool_name_format = "{server}__{tool}"         # the names clients see; default the top-level one
//	servers          = ["github", "search"]       # the servers to expose; default all
//	allowed_origins  = ["https://app.example.com"] # browser origins besides the gateway's own
//	auth_token       = "{{secrets.gateway_token}}" # a placeholder; a literal token is refused
//	json_response    = false                      # answer POSTs with application/json, not SSE
//	session_timeout  = "30m"                      # idle Streamable HTTP sessions end
//	max_sessions     = 256                        # sessions at once; the idlest makes room
//	max_client_sessions = 64                      # sessions one client address holds
//	trusted_proxies  = ["10.0.0.0/8"]             # balancers whose X-Forwarded-For / PROXY header name the client
//	proxy_protocol   = false                      # trusted proxies open each connection with a PROXY header
//	max_requests     = 1024                       # clients' requests in flight at once; more are refused
//	shutdown_grace   = "5s"                       # SIGTERM: calls get this long, then are cancelled
//	shutdown_drain   = "5s"                       # SIGTERM: first serve on this long, /readyz 503
//	workflows        = ["triage"]                 # workflows published as tools (ids); default none
//	workflow_tool_format = "workflow_{id}"        # their tool names; {id} is the workflow's id
//	mode             = "search"                   # /mcp lists "all" tools (default), or "search" or "code" tools
//	task_wait        = "1s"                       # a call still running after this becomes a task (tasks extension)
//	task_ttl         = "1h"                       # a task is kept this long after it was made
//	task_poll_interval = "1s"                     # how often clients are told to poll a task
//
//	[gateway.auth]                                # OAuth: see GatewayAuth
//
// The zero value means the defaults. A later file's keys override an
// earlier file's one by one. Listening beyond loopback needs auth_token or
// [gateway.auth].
type Gateway struct {
	// Listen is host:port; "" means [DefaultGatewayListen].
	Listen string
	// ReplicaAddress is the host:port at which the other replicas on the
	// same PostgreSQL reach this one (plain HTTP; a 2026-07-28 client's
	// retry of a call held here is forwarded to it). "" means the address
	// listened on, or, listening on every interface, this machine's
	// hostname with the port listened on.
	ReplicaAddress string
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
	// TrustedProxies are the load balancers and reverse proxies (CIDR
	// prefixes or addresses) whose word on a connection's client is
	// believed: their X-Forwarded-For, and with ProxyProtocol their PROXY
	// protocol header (package clientaddr). Behind a balancer every
	// connection has its address, and max_client_sessions would be one
	// limit for all. nil trusts none: every client is its connection's
	// address.
	TrustedProxies []string
	// ProxyProtocol: every connection from a trusted proxy starts with a
	// PROXY protocol header (v1 or v2; HAProxy's send-proxy-v2), which
	// names the client; one without is refused. Connections from other
	// peers are served as they are. Needs TrustedProxies, which then must
	// not hold the replicas' own addresses (their forwarded calls carry no
	// header).
	ProxyProtocol bool
	// MaxRequests bounds the clients' requests in flight at once, over
	// every transport; a request beyond it is refused at once. 0 means
	// [DefaultGatewayMaxRequests].
	MaxRequests int
	// ShutdownGrace is how long requests in flight get to finish when
	// `switchboard serve` is told to stop; past it they are cancelled
	// (upstream too) and the process exits. 0 means
	// [DefaultGatewayShutdownGrace].
	ShutdownGrace time.Duration
	// ShutdownDrain is how long `switchboard serve`, told to stop, first
	// serves on as before while GET /readyz answers 503, so that a load
	// balancer takes it out of rotation before it stops accepting
	// connections; then the shutdown (ShutdownGrace) begins. Set it
	// longer than the balancer takes to notice (HAProxy: fall × inter).
	// 0 means none: a replica alone, or a desktop's, stops at once.
	ShutdownDrain time.Duration
	// Workflows lists the ids of the workflows published as tools (opt-in
	// per workflow); nil means none. That each names a workflow is checked
	// where workflows are loaded (the workflow package, `switchboard
	// validate`), not here.
	Workflows []string
	// Mode is what the default endpoint (/mcp) lists of its tools:
	// [ModeAll] ("" means that), [ModeSearch] or [ModeCode]; see
	// [Endpoint.Mode].
	Mode string
	// WorkflowToolFormat names a published workflow's tool: {id} is
	// replaced by its id. "" means [DefaultWorkflowToolFormat].
	WorkflowToolFormat string
	// TaskWait is how long a call that may become a task (Server.Task
	// auto or required) runs before it does: one that ends sooner is
	// answered with its result, and no task is made. 0 means
	// [DefaultTaskWait].
	TaskWait time.Duration
	// TaskTTL is how long a task, and its result, is kept after it was
	// made; then it is removed (and a task still running is cancelled).
	// 0 means [DefaultTaskTTL].
	TaskTTL time.Duration
	// TaskPollInterval is the interval at which clients are asked to poll
	// a task (pollIntervalMs). 0 means [DefaultTaskPollInterval].
	TaskPollInterval time.Duration
	// Auth, when set, makes the gateway an OAuth protected resource
	// ([gateway.auth]): clients bring JWT access tokens of its issuer.
	// With AuthToken as well, a request bearing AuthToken is the owner's
	// (every server and tool, no policy); any other needs a valid JWT.
	Auth *GatewayAuth

	// Source is where the last [gateway] table was declared; zero when none
	// was.
	Source Position
}

// The defaults of the [gateway] keys that bound the endpoint; the gateway
// package says why each is what it is (gateway.DefaultMaxSessions).
const (
	DefaultGatewayMaxSessions       = 256
	DefaultGatewayMaxClientSessions = 64
	DefaultGatewayMaxRequests       = 1024
	DefaultGatewayShutdownGrace     = 5 * time.Second
	DefaultWorkflowToolFormat       = "workflow_{id}"
	DefaultTaskWait                 = time.Second
	DefaultTaskTTL                  = time.Hour
	DefaultTaskPollInterval         = time.Second
)

// The bounds of the [gateway] task keys: a task_wait is a request held
// open, a task_ttl rows kept.
const (
	MaxTaskWait         = time.Minute
	MaxTaskTTL          = 7 * 24 * time.Hour
	MaxTaskPollInterval = time.Minute
)

// maxToolNameBytes bounds a published workflow's tool name: clients such as
// Claude Desktop and the OpenAI API refuse longer names.
const maxToolNameBytes = 64

// WorkflowToolName is the name of the tool that publishes workflow id.
func (g Gateway) WorkflowToolName(id string) string {
	f := g.WorkflowToolFormat
	if f == "" {
		f = DefaultWorkflowToolFormat
	}
	return strings.ReplaceAll(f, "{id}", id)
}

// checkWorkflowToolFormat checks a workflow_tool_format: {id} in it, no
// other placeholder, and the name of a workflow with the longest id (32
// bytes) a valid tool name of at most 64 bytes (A-Z a-z 0-9 _ -, the
// host's tool names' alphabet).
func checkWorkflowToolFormat(f string) string {
	if f == "" {
		return ""
	}
	if !strings.Contains(f, "{id}") {
		return "must contain {id}"
	}
	rest := strings.ReplaceAll(f, "{id}", "")
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !decode.IsIDByte(c) {
			return fmt.Sprintf("%q is not allowed in a tool name (use A-Z a-z 0-9 _ - and {id})", string(c))
		}
	}
	if n := len(Gateway{WorkflowToolFormat: f}.WorkflowToolName(strings.Repeat("x", 32))); n > maxToolNameBytes {
		return fmt.Sprintf("a workflow with a 32-character id would get a %d-byte tool name; at most %d", n, maxToolNameBytes)
	}
	return ""
}

// checkGatewayWorkflow checks one id of [gateway] workflows.
func checkGatewayWorkflow(ids []string, i int) string {
	id := ids[i]
	if len(id) > 32 || !decode.IsBareKey(id) {
		return fmt.Sprintf("invalid workflow id %q: 1 to 32 characters of A-Z a-z 0-9 _ -", id)
	}
	if j := slices.Index(ids[:i], id); j >= 0 {
		return fmt.Sprintf("duplicate %q (also workflows[%d])", id, j)
	}
	return ""
}

// gatewayTable declares [gateway]. Its fields are checked once merged:
// servers names servers any file may declare.
var gatewayTable = mergedTable[Gateway]{
	key: "gateway",
	fields: decode.Table[Gateway]{
		decode.String("listen", decode.TOML, func(g *Gateway) *string { return &g.Listen }, func(addr string) string {
			if addr == "" {
				return ""
			}
			_, msg := checkListen(addr)
			return msg
		}),
		decode.String("replica_address", decode.TOML, func(g *Gateway) *string { return &g.ReplicaAddress }, checkReplicaAddress),
		decode.String("tool_name_format", decode.TOML, func(g *Gateway) *string { return &g.ToolNameFormat }, func(f string) string {
			if f == "" {
				return ""
			}
			return checkToolNameFormat(f)
		}),
		decode.StringList("servers", decode.TOML, func(g *Gateway) *[]string { return &g.Servers }, checkGatewayServer),
		decode.StringList("allowed_origins", decode.TOML, func(g *Gateway) *[]string { return &g.AllowedOrigins }, func(l []string, i int) string {
			return checkOrigin(l[i])
		}),
		decode.Value("auth_token", decode.TOML, func(g *Gateway) *string { return &g.AuthToken }, readAuthToken, checkAuthToken),
		decode.Bool("json_response", decode.TOML, func(g *Gateway) *bool { return &g.JSONResponse }),
		decode.Duration("session_timeout", decode.TOML, func(g *Gateway) *time.Duration { return &g.SessionTimeout }, MaxSessionTimeout),
		decode.AtLeastOne("max_sessions", decode.TOML, func(g *Gateway) *int { return &g.MaxSessions }),
		decode.AtLeastOne("max_client_sessions", decode.TOML, func(g *Gateway) *int { return &g.MaxClientSessions }),
		decode.StringList("trusted_proxies", decode.TOML, func(g *Gateway) *[]string { return &g.TrustedProxies }, checkTrustedProxy),
		decode.Bool("proxy_protocol", decode.TOML, func(g *Gateway) *bool { return &g.ProxyProtocol }),
		decode.AtLeastOne("max_requests", decode.TOML, func(g *Gateway) *int { return &g.MaxRequests }),
		decode.Duration("shutdown_grace", decode.TOML, func(g *Gateway) *time.Duration { return &g.ShutdownGrace }, MaxShutdownGrace),
		decode.Duration("shutdown_drain", decode.TOML, func(g *Gateway) *time.Duration { return &g.ShutdownDrain }, MaxShutdownDrain),
		decode.StringList("workflows", decode.TOML, func(g *Gateway) *[]string { return &g.Workflows }, checkGatewayWorkflow),
		decode.String("workflow_tool_format", decode.TOML, func(g *Gateway) *string { return &g.WorkflowToolFormat }, checkWorkflowToolFormat),
		decode.Value("auth", decode.TOML, func(g *Gateway) **GatewayAuth { return &g.Auth }, readGatewayAuth),
		decode.String("mode", decode.TOML, func(g *Gateway) *string { return &g.Mode }, checkMode),
		decode.Duration("task_wait", decode.TOML, func(g *Gateway) *time.Duration { return &g.TaskWait }, MaxTaskWait),
		decode.Duration("task_ttl", decode.TOML, func(g *Gateway) *time.Duration { return &g.TaskTTL }, MaxTaskTTL),
		decode.Duration("task_poll_interval", decode.TOML, func(g *Gateway) *time.Duration { return &g.TaskPollInterval }, MaxTaskPollInterval),
	},
	config: func(c *Config) *Gateway { return &c.Gateway },
	source: func(g *Gateway) *Position { return &g.Source },
}

// readAuthToken refuses an empty token when reading: set empty, it would
// also override a token an earlier file set, and a loopback gateway would
// take anyone.
var readAuthToken = readNonEmpty(`empty; write "{{secrets.NAME}}" or "{{env.NAME}}", or leave auth_token out for no token (loopback only)`)

func checkAuthToken(tok string) string {
	return checkCredential(tok, false, `a literal token is not allowed: config files are shared and committed, and a token written there leaks; write "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}"`)
}

// readNonEmpty reads a string that may not be empty (or blank), refusing
// it with empty: set empty, it would also override what an earlier file
// set.
func readNonEmpty(empty string) func(d *decode.Decoder, field string, v any) (string, bool) {
	return func(d *decode.Decoder, field string, v any) (string, bool) {
		s, ok := d.String(field, v)
		if ok && strings.TrimSpace(s) == "" {
			d.Errorf(field, "%s", empty)
			return "", false
		}
		return s, ok
	}
}

// checkCredential checks a value that may be written only with
// placeholders, returning literal for one without any (with whole, for
// one that is not a single placeholder alone). It never quotes the value:
// it may be a credential.
func checkCredential(v string, whole bool, literal string) string {
	if v == "" {
		return ""
	}
	ps, err := secret.Parse(v)
	switch {
	case err != nil:
		return err.Error()
	case len(ps) == 0, whole && (len(ps) != 1 || ps[0].Start != 0 || ps[0].End != len(v)):
		return literal
	}
	return ""
}

// checkGatewayServer checks one id of [gateway] servers on its own; that
// it names a configured server is checked by validator.gateway.
func checkGatewayServer(ids []string, i int) string {
	id := ids[i]
	switch {
	case hasPlaceholder(id):
		return "placeholders are not allowed here"
	case id == "":
		return "empty server id"
	}
	if j := slices.Index(ids[:i], id); j >= 0 {
		return fmt.Sprintf("duplicate %q (also servers[%d])", id, j)
	}
	return ""
}

// gateway validates c.Gateway against the merged configuration (servers
// may be declared in another file than the [gateway] table naming them).
func (v *validator) gateway(c *Config) {
	g := &c.Gateway
	report := func(field, msg string) {
		full := decode.JoinPath("gateway", field)
		v.problems = append(v.problems, &Problem{Pos: v.mergedPos(full, g.Source), Field: full, Msg: msg})
	}
	errorf := func(field, format string, args ...any) { report(field, fmt.Sprintf(format, args...)) }

	for i, id := range g.Servers {
		if checkGatewayServer(g.Servers, i) != "" {
			continue // reported as it is
		}
		if _, ok := c.Server(id); !ok {
			errorf(decode.IndexPath("servers", i), "no server %q in the configuration (%s)", id, serverIDList(c))
		}
	}
	gatewayTable.fields.Check(g, report)
	if total := cmp.Or(g.MaxSessions, DefaultGatewayMaxSessions); total > 0 && g.MaxClientSessions > total {
		errorf("max_client_sessions", "%d is more than max_sessions (%d): one client could hold every session", g.MaxClientSessions, total)
	}
	if g.ProxyProtocol && len(g.TrustedProxies) == 0 {
		errorf("proxy_protocol", "needs trusted_proxies: a PROXY header is read only from the proxies listed there")
	}
	if g.ProxyProtocol && g.ReplicaAddress != "" && !v.reported("gateway.trusted_proxies") {
		// The other replicas forward calls to replica_address without a
		// PROXY header: from a trusted address they would be refused.
		host, _, _ := net.SplitHostPort(g.ReplicaAddress)
		if a, err := netip.ParseAddr(host); err == nil {
			if t, err := clientaddr.ParseTrusted(g.TrustedProxies); err == nil && t.Contains(a) {
				errorf("trusted_proxies", "includes replica_address %s: with proxy_protocol the calls the other replicas forward here, which carry no PROXY header, would be refused; list the balancers only", host)
			}
		}
	}
	loopback := true
	if g.Listen != "" {
		loopback, _ = checkListen(g.Listen)
	}
	if !loopback && g.AuthToken == "" && g.Auth == nil && !v.reported("gateway.auth_token") {
		errorf("listen", "serving beyond loopback needs auth_token or [gateway.auth]")
	}
	v.gatewayAuth(c, report, loopback)
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

// checkTrustedProxy checks one entry of trusted_proxies: an address or a
// CIDR prefix, parsed as package clientaddr parses it.
func checkTrustedProxy(list []string, i int) string {
	if hasPlaceholder(list[i]) {
		return "placeholders are not allowed here"
	}
	if _, err := clientaddr.ParsePrefix(list[i]); err != nil {
		return err.Error()
	}
	if j := slices.Index(list[:i], list[i]); j >= 0 {
		return fmt.Sprintf("duplicate %q (also trusted_proxies[%d])", list[i], j)
	}
	return ""
}

// checkReplicaAddress checks a replica_address: host:port, a host and a
// port other than 0.
func checkReplicaAddress(addr string) string {
	if addr == "" {
		return ""
	}
	if hasPlaceholder(addr) {
		return "placeholders are not allowed here"
	}
	host, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		return fmt.Sprintf(`must be host:port with a host and a port from 1 to 65535, such as "10.0.0.5:7300", not %q`, addr)
	}
	return ""
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
	tok, err := expandCredential("gateway.auth_token", g.AuthToken, getenv, secrets, red)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", fmt.Errorf("gateway.auth_token: %s resolved to the empty string", g.AuthToken)
	}
	return tok, nil
}
