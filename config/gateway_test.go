package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/secret"
)

func TestGateway(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "g.toml", `[[mcp_servers]]
id = "a"
command = "x"

[[mcp_servers]]
id = "b"
command = "y"

[gateway]
listen = "0.0.0.0:7400"
tool_name_format = "{server}__{tool}"
servers = ["b"]
allowed_origins = ["https://app.example.com", "http://localhost:3000"]
auth_token = "{{secrets.gw}}"
json_response = true
session_timeout = "5m"
max_sessions = 100
max_client_sessions = 10
max_requests = 50
replica_address = "gw-1.internal:7400"
shutdown_grace = "30s"
shutdown_drain = "3s"
workflows = ["triage", "sums"]
workflow_tool_format = "wf-{id}"
trusted_proxies = ["10.0.0.0/8", "127.0.0.1"]
proxy_protocol = true
`)
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Gateway{
		Listen: "0.0.0.0:7400", ToolNameFormat: "{server}__{tool}", Servers: []string{"b"},
		AllowedOrigins: []string{"https://app.example.com", "http://localhost:3000"},
		AuthToken:      "{{secrets.gw}}", JSONResponse: true, SessionTimeout: 5 * time.Minute,
		MaxSessions: 100, MaxClientSessions: 10, MaxRequests: 50, ShutdownGrace: 30 * time.Second, ShutdownDrain: 3 * time.Second, ReplicaAddress: "gw-1.internal:7400",
		Workflows: []string{"triage", "sums"}, WorkflowToolFormat: "wf-{id}",
		TrustedProxies: []string{"10.0.0.0/8", "127.0.0.1"}, ProxyProtocol: true,
		Source: Position{File: file, Line: 9, Field: "gateway"},
	}
	if diff := cmp.Diff(want, c.Gateway); diff != "" {
		t.Errorf("Gateway (-want +got):\n%s", diff)
	}

	if got := c.Gateway.WorkflowToolName("triage"); got != "wf-triage" {
		t.Errorf("WorkflowToolName = %q, want wf-triage", got)
	}
	if got := (Gateway{}).WorkflowToolName("triage"); got != "workflow_triage" {
		t.Errorf("default WorkflowToolName = %q, want workflow_triage", got)
	}

	red := secret.NewRedactor()
	store := secret.EnvStore{LookupEnv: func(k string) (string, bool) { return "tok-123", k == "SWITCHBOARD_SECRET_GW" }}
	tok, err := c.Gateway.ResolveAuthToken(func(string) (string, bool) { return "", false }, store, red)
	if err != nil || tok != "tok-123" {
		t.Fatalf("ResolveAuthToken = %q, %v, want tok-123", tok, err)
	}
	if got := red.Redact("Bearer tok-123"); strings.Contains(got, "tok-123") {
		t.Errorf("the token is not redacted: %q", got)
	}
	_, err = c.Gateway.ResolveAuthToken(func(string) (string, bool) { return "", false }, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "gateway.auth_token: {{secrets.gw}} is not set") {
		t.Errorf("ResolveAuthToken without the secret: %v, want an error naming field and placeholder", err)
	}
}

// TestGatewayDefaults: no [gateway] table leaves the zero Gateway, which
// means the defaults.
func TestGatewayDefaults(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "g.toml", "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n")
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(Gateway{}, c.Gateway); diff != "" {
		t.Errorf("Gateway (-want +got):\n%s", diff)
	}
	if tok, err := c.Gateway.ResolveAuthToken(nil, nil, nil); tok != "" || err != nil {
		t.Errorf("ResolveAuthToken with none = %q, %v", tok, err)
	}
}

// TestGatewayLayering: a later file overrides [gateway] key by key, and a
// server named by one file may be declared in another.
func TestGatewayLayering(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "user/switchboard/config.toml", `[gateway]
listen = "127.0.0.1:7500"
auth_token = "{{env.GW_TOKEN}}"
`)
	work := writeFile(t, root, "work/switchboard.toml", `[[mcp_servers]]
id = "a"
command = "x"

[gateway]
servers = ["a"]
`)
	c, err := Load(&LoadOptions{Dir: root + "/work", UserConfigDir: root + "/user/switchboard", Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Gateway{Listen: "127.0.0.1:7500", AuthToken: "{{env.GW_TOKEN}}", Servers: []string{"a"},
		Source: Position{File: work, Line: 5, Field: "gateway"}}
	if diff := cmp.Diff(want, c.Gateway); diff != "" {
		t.Errorf("Gateway (-want +got):\n%s", diff)
	}
}

func TestGatewayProblems(t *testing.T) {
	for _, tt := range []struct {
		name, toml string
		want       []string
	}{
		{"literal token", `[gateway]
auth_token = "hunter2-literal"
`, []string{
			`g.toml:2: gateway.auth_token: a literal token is not allowed: config files are shared and committed, and a token written there leaks; write "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}"`,
		}},
		// Set empty, it would override a token another file set, and a
		// loopback gateway would take anyone.
		{"empty token", `[gateway]
auth_token = ""
`, []string{
			`g.toml:2: gateway.auth_token: empty; write "{{secrets.NAME}}" or "{{env.NAME}}", or leave auth_token out for no token (loopback only)`,
		}},
		{"malformed token placeholder", `[gateway]
auth_token = "{{secret.x}}"
`, []string{
			`g.toml:2: gateway.auth_token: ` + parseErr(t, "{{secret.x}}"),
		}},
		{"workflows", `[gateway]
workflows = ["a", "b c", "a"]
`, []string{
			`g.toml:2: gateway.workflows[1]: invalid workflow id "b c": 1 to 32 characters of A-Z a-z 0-9 _ -`,
			`g.toml:2: gateway.workflows[2]: duplicate "a" (also workflows[0])`,
		}},
		{"workflow_tool_format without {id}", `[gateway]
workflow_tool_format = "wf"
`, []string{`g.toml:2: gateway.workflow_tool_format: must contain {id}`}},
		{"workflow_tool_format with a bad character", `[gateway]
workflow_tool_format = "wf.{id}"
`, []string{`g.toml:2: gateway.workflow_tool_format: "." is not allowed in a tool name (use A-Z a-z 0-9 _ - and {id})`}},
		{"workflow_tool_format too long", `[gateway]
workflow_tool_format = "a_very_long_prefix_for_every_workflow_{id}"
`, []string{`g.toml:2: gateway.workflow_tool_format: a workflow with a 32-character id would get a 70-byte tool name; at most 64`}},
		{"beyond loopback without a token", `[gateway]
listen = "0.0.0.0:7300"
`, []string{
			`g.toml:2: gateway.listen: serving beyond loopback needs auth_token or [gateway.auth]`,
		}},
		{"every interface without a token", `[gateway]
listen = ":7300"
`, []string{
			`g.toml:2: gateway.listen: serving beyond loopback needs auth_token or [gateway.auth]`,
		}},
		{"a host name is not loopback", `[gateway]
listen = "gw.example.com:7300"
`, []string{
			`g.toml:2: gateway.listen: serving beyond loopback needs auth_token or [gateway.auth]`,
		}},
		{"loopback spellings", `[gateway]
listen = "[::1]:0"
[[mcp_servers]]
id = "a"
command = "x"
`, nil},
		{"localhost", `[gateway]
listen = "localhost:7300"
`, nil},
		{"bad listen", `[gateway]
listen = "7300"
`, []string{
			`g.toml:2: gateway.listen: must be host:port, such as "127.0.0.1:7300" or "[::1]:7300", not "7300"`,
		}},
		{"bad port", `[gateway]
listen = "127.0.0.1:http"
`, []string{
			`g.toml:2: gateway.listen: invalid port "http" (want 0 to 65535; 0 picks a free one)`,
		}},
		{"unknown and duplicate servers", `[[mcp_servers]]
id = "a"
command = "x"

[gateway]
servers = [
  "a",
  "nope",
  "a",
]
`, []string{
			`g.toml:8: gateway.servers[1]: no server "nope" in the configuration (configured: a)`,
			`g.toml:9: gateway.servers[2]: duplicate "a" (also servers[0])`,
		}},
		{"origins", `[gateway]
allowed_origins = ["https://ok.example.com", "ftp://x.example.com", "https://x.example.com/path", "*"]
`, []string{
			`g.toml:2: gateway.allowed_origins[1]: must be an origin, scheme://host[:port] such as https://app.example.com: scheme "ftp" is not http or https`,
			`g.toml:2: gateway.allowed_origins[2]: must be an origin, scheme://host[:port] such as https://app.example.com, without user, path, query or fragment; not "https://x.example.com/path"`,
			`g.toml:2: gateway.allowed_origins[3]: must be an origin, scheme://host[:port] such as https://app.example.com, not "*"`,
		}},
		{"tool_name_format", `[gateway]
tool_name_format = "{server}"
`, []string{
			`g.toml:2: gateway.tool_name_format: must contain {tool}`,
		}},
		{"types and unknown keys", `[gateway]
listen = 7300
json_response = "yes"
session_timeout = "soon"
servers = "a"
auth_tokn = "{{env.X}}"
`, []string{
			`g.toml:2: gateway.listen: must be a string, not an integer`,
			`g.toml:3: gateway.json_response: must be a boolean, not a string`,
			`g.toml:4: gateway.session_timeout: invalid duration "soon" (want a Go duration such as "90s" or "2m30s")`,
			`g.toml:5: gateway.servers: must be an array of strings, not a string`,
			`g.toml:6: gateway.auth_tokn: unknown key "auth_tokn"; did you mean auth_token?`,
		}},
		{"session bounds", `[gateway]
max_sessions = 0
max_client_sessions = -3
shutdown_grace = "0s"
shutdown_drain = "-1s"
max_requests = 0
`, []string{
			`g.toml:2: gateway.max_sessions: must be at least 1, not 0`,
			`g.toml:3: gateway.max_client_sessions: must be between 0 and 1048576, not -3`,
			`g.toml:4: gateway.shutdown_grace: must be positive, not "0s"`,
			`g.toml:5: gateway.shutdown_drain: must be positive, not "-1s"`,
			`g.toml:6: gateway.max_requests: must be at least 1, not 0`,
		}},
		{"a client may not hold every session", `[gateway]
max_sessions = 10
max_client_sessions = 11
`, []string{
			`g.toml:3: gateway.max_client_sessions: 11 is more than max_sessions (10): one client could hold every session`,
		}},
		{"nor more than the default", `[gateway]
max_client_sessions = 300
`, []string{
			`g.toml:2: gateway.max_client_sessions: 300 is more than max_sessions (256): one client could hold every session`,
		}},
		{"trusted proxies", `[gateway]
trusted_proxies = ["10.0.0.1/8", "lb.internal", "10.0.0.0/8", "10.0.0.0/8"]
`, []string{
			`g.toml:2: gateway.trusted_proxies[0]: "10.0.0.1/8" has bits set beyond its /8; write "10.0.0.0/8"`,
			`g.toml:2: gateway.trusted_proxies[1]: "lb.internal" is not an address or a CIDR prefix such as "10.0.0.0/8"`,
			`g.toml:2: gateway.trusted_proxies[3]: duplicate "10.0.0.0/8" (also trusted_proxies[2])`,
		}},
		{"proxy protocol without trusted proxies", `[gateway]
proxy_protocol = true
`, []string{
			`g.toml:2: gateway.proxy_protocol: needs trusted_proxies: a PROXY header is read only from the proxies listed there`,
		}},
		{"proxy protocol trusting the replicas", `[gateway]
replica_address = "10.0.0.5:7300"
trusted_proxies = ["10.0.0.0/24"]
proxy_protocol = true
`, []string{
			`g.toml:3: gateway.trusted_proxies: includes replica_address 10.0.0.5: with proxy_protocol the calls the other replicas forward here, which carry no PROXY header, would be refused; list the balancers only`,
		}},
		{"replica address", `[gateway]
replica_address = ":7300"
`, []string{
			`g.toml:2: gateway.replica_address: must be host:port with a host and a port from 1 to 65535, such as "10.0.0.5:7300", not ":7300"`,
		}},
		{"replica address without a port", `[gateway]
replica_address = "gw-1.internal:0"
`, []string{
			`g.toml:2: gateway.replica_address: must be host:port with a host and a port from 1 to 65535, such as "10.0.0.5:7300", not "gw-1.internal:0"`,
		}},
		{"bounds of the wrong type", `[gateway]
max_sessions = "many"
shutdown_grace = 5
`, []string{
			`g.toml:2: gateway.max_sessions: must be a whole number, not a string`,
			`g.toml:3: gateway.shutdown_grace: must be a duration string such as "90s", not an integer`,
		}},
		{"not a table", `gateway = "on"
`, []string{
			`g.toml:1: gateway: must be a table, not a string`,
		}},
		{"typo at the top", `[gatway]
listen = "127.0.0.1:1"
`, []string{
			`g.toml:1: gatway: unknown key "gatway"; did you mean gateway?`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := writeFile(t, dir, "g.toml", tt.toml)
			_, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
			if diff := cmp.Diff(tt.want, problemStrings(t, err, dir)); diff != "" {
				t.Errorf("Load(%q) problems (-want +got):\n%s", tt.toml, diff)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("a problem quotes the literal token: %v", err)
			}
		})
	}
}

// TestGatewayValidate: Validate checks a Gateway built in code too.
func TestGatewayValidate(t *testing.T) {
	c := &Config{
		Servers: []Server{{ID: "a", Command: "x"}},
		Gateway: Gateway{Listen: "10.0.0.5:7300", Servers: []string{"b"}, AuthToken: "plain"},
	}
	want := []string{
		`gateway.servers[0]: no server "b" in the configuration (configured: a)`,
		`gateway.auth_token: a literal token is not allowed: config files are shared and committed, and a token written there leaks; write "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}"`,
	}
	if diff := cmp.Diff(want, problemStrings(t, c.Validate(), "")); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
	c.Gateway = Gateway{MaxSessions: -1, MaxClientSessions: 5, ShutdownGrace: -time.Second}
	want = []string{
		`gateway.max_sessions: must be at least 1, not -1`,
		`gateway.shutdown_grace: must be positive, not -1s`,
	}
	if diff := cmp.Diff(want, problemStrings(t, c.Validate(), "")); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
	c.Gateway = Gateway{Listen: "10.0.0.5:7300"}
	if diff := cmp.Diff([]string{"gateway.listen: serving beyond loopback needs auth_token or [gateway.auth]"}, problemStrings(t, c.Validate(), "")); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true, "localhost": true, "LOCALHOST": true,
		"::ffff:127.0.0.1": true,
		"":                 false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false, "localhost.example.com": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func parseErr(t *testing.T, s string) string {
	t.Helper()
	_, err := secret.Parse(s)
	if err == nil {
		t.Fatalf("secret.Parse(%q) = nil error", s)
	}
	return err.Error()
}

// TestGatewayAuth: [gateway.auth] and its policy read with their keys, and
// each problem named with file, line and field.
func TestGatewayAuth(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "g.toml", `[[mcp_servers]]
id = "github"
command = "x"

[gateway]
listen = "0.0.0.0:7400"

[gateway.auth]
issuer = "https://auth.example.com"
resource = "https://mcp.example.com/mcp"
scopes = ["mcp"]
admin_scope = "switchboard:admin"

[[gateway.auth.policy]]
scope = "github:read"
claims = { groups = "eng" }
servers = ["github"]
tools = ["github__get_*"]
`)
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &GatewayAuth{
		Issuer: "https://auth.example.com", Resource: "https://mcp.example.com/mcp", Scopes: []string{"mcp"}, AdminScope: "switchboard:admin",
		Policy: []AuthPolicy{{Scope: "github:read", Claims: map[string]string{"groups": "eng"}, Servers: []string{"github"}, Tools: []string{"github__get_*"}}},
	}
	if diff := cmp.Diff(want, c.Gateway.Auth); diff != "" {
		t.Errorf("Gateway.Auth (-want +got):\n%s", diff)
	}

	bad := writeFile(t, dir, "bad.toml", `[[mcp_servers]]
id = "a"
command = "x"

[gateway]
listen = "0.0.0.0:7300"

[gateway.auth]
jwks_url = "https://169.254.169.254/jwks"
scopes = ["a b"]
colour = "x"
admin_scope = "x y"

[[gateway.auth.policy]]
servers = ["a", "b"]
tools = ["["]
`)
	_, err = Load(&LoadOptions{File: bad, Dir: dir, Getenv: getenv(nil)})
	for _, w := range []string{
		bad + ":11: gateway.auth.colour: unknown key",
		bad + ":10: gateway.auth.scopes[0]: invalid scope",
		bad + ":12: gateway.auth.admin_scope: invalid scope \"x y\"",
		bad + ":16: gateway.auth.policy[0].tools[0]: invalid pattern",
		bad + ":15: gateway.auth.policy[0].servers[1]: no server \"b\"",
		"gateway.auth.issuer: required",
		"gateway.auth.resource: required when listening beyond loopback",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Load(bad) = %v\nwant a problem %q", err, w)
		}
	}
	every := writeFile(t, dir, "every.toml", `[gateway.auth]
issuer = "https://auth.example.com"
scopes = ["mcp", "admin"]
admin_scope = "admin"
`)
	_, err = Load(&LoadOptions{File: every, Dir: dir, Getenv: getenv(nil)})
	if w := every + `:4: gateway.auth.admin_scope: "admin" is also in scopes, which every token must carry: every client would administer the daemon`; err == nil || !strings.Contains(err.Error(), w) {
		t.Errorf("Load(every) = %v\nwant a problem %q", err, w)
	}
	local := writeFile(t, dir, "local.toml", `[gateway.auth]
issuer = "http://127.0.0.1:9000"
jwks_url = "http://169.254.169.254/jwks"
`)
	_, err = Load(&LoadOptions{File: local, Dir: dir, Getenv: getenv(nil)})
	for _, w := range []string{
		local + ":2: gateway.auth.issuer: 127.0.0.1 is a loopback address (RFC 1122); set allow_local_issuer = true",
		local + ":3: gateway.auth.jwks_url: 169.254.169.254 is a cloud metadata endpoint",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Load(local) = %v\nwant a problem %q", err, w)
		}
	}
}
