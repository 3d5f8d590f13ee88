package config

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/netguard"
)

// GatewayAuth is the [gateway.auth] table: the gateway as an OAuth 2.1
// protected resource (the MCP authorization spec). Clients bring JWT access
// tokens issued by Issuer for the gateway; [[gateway.auth.policy]] says what
// each may see and call.
//
//	[gateway.auth]
//	issuer   = "https://auth.example.com"          # required: the authorization server
//	resource = "https://mcp.example.com/mcp"       # the URL clients reach /mcp at; default http://LISTEN/mcp on loopback
//	audience = "https://mcp.example.com/mcp"       # a token's aud must contain it; default resource
//	scopes   = ["mcp"]                             # every token must carry these
//	admin_scope = "switchboard:admin"              # a token with it may use the REST API and /metrics too
//	jwks_url = "https://auth.example.com/jwks"     # default: the issuer's metadata (RFC 8414, else OpenID discovery)
//	allow_local_issuer = false                     # the issuer may be on loopback or the local network
//
//	[[gateway.auth.policy]]
//	scope   = "github:read"                        # tokens with this scope (and/or these claims) ...
//	claims  = { groups = "eng" }
//	servers = ["github"]                           # ... see these servers (default every server)
//	tools   = ["github__get_*"]                    # ... and of their tools these (default every tool)
//
// A later file's [gateway.auth] replaces an earlier one whole.
type GatewayAuth struct {
	// Issuer is the authorization server's issuer identifier; tokens must
	// name it in iss.
	Issuer string
	// Resource is the gateway's resource identifier: the URL clients reach
	// its Streamable HTTP endpoint at, as they write it (behind a reverse
	// proxy, the proxy's). "" means http://ADDRESS/mcp of the listener,
	// which only a loopback listener may leave to be derived.
	Resource string
	// Audience is what a token's aud must contain; "" means Resource.
	Audience string
	// Scopes are required of every token (403 insufficient_scope without).
	Scopes []string
	// AdminScope is the scope that lets a token use the management faces
	// too (the REST API, its events, /metrics), where its policy still
	// limits which servers, tools, resources and prompts it sees. "" lets
	// no OAuth token in there: they need auth_token. The web UI is the
	// owner's (auth_token) whatever this says. It may not be one of
	// Scopes, which every token carries.
	AdminScope string
	// JWKSURL is where the issuer's signing keys are; "" means the
	// jwks_uri of its metadata.
	JWKSURL string
	// AllowLocalIssuer admits an issuer (and JWKS URL) on loopback or a
	// private network, plain http included, as allow_local_endpoint does
	// for a server.
	AllowLocalIssuer bool
	// Policy says which servers and tools each client may list and call.
	// nil: every valid token sees everything.
	Policy []AuthPolicy
}

// AuthPolicy is one [[gateway.auth.policy]] rule. A token the rule
// matches (it has Scope, when set, and every one of Claims) is granted
// Servers and, of their tools, Tools; a client gets the union of the rules
// it matches, and nothing when it matches none. A rule with neither scope
// nor claims matches every token.
type AuthPolicy struct {
	// Scope is a scope the token must carry; "" for any.
	Scope string
	// Claims are claims the token must have: a string claim equal to the
	// value, or an array claim holding it.
	Claims map[string]string
	// Servers are server ids; nil means every server.
	Servers []string
	// Tools are patterns (path.Match: * and ?) over the tool names clients
	// see; nil means every tool of Servers. Resources and prompts follow
	// Servers.
	Tools []string
}

var gatewayAuthFields = decode.Table[GatewayAuth]{
	decode.String("issuer", decode.TOML, func(a *GatewayAuth) *string { return &a.Issuer }, checkAuthURL("the issuer's URL")),
	decode.String("resource", decode.TOML, func(a *GatewayAuth) *string { return &a.Resource }, checkAuthURL("the URL clients reach the gateway's /mcp at")),
	decode.String("audience", decode.TOML, func(a *GatewayAuth) *string { return &a.Audience }, noPlaceholder),
	decode.StringList("scopes", decode.TOML, func(a *GatewayAuth) *[]string { return &a.Scopes }, checkScope),
	decode.String("admin_scope", decode.TOML, func(a *GatewayAuth) *string { return &a.AdminScope }, func(s string) string {
		if s == "" {
			return ""
		}
		return checkScope([]string{s}, 0)
	}),
	decode.String("jwks_url", decode.TOML, func(a *GatewayAuth) *string { return &a.JWKSURL }, checkAuthURL("the URL of the issuer's JSON Web Key Set")),
	decode.Bool("allow_local_issuer", decode.TOML, func(a *GatewayAuth) *bool { return &a.AllowLocalIssuer }),
	decode.List("policy", decode.TOML, func(a *GatewayAuth) *[]AuthPolicy { return &a.Policy }, readAuthPolicies),
}

var authPolicyFields = decode.Table[AuthPolicy]{
	decode.String("scope", decode.TOML, func(p *AuthPolicy) *string { return &p.Scope }, func(s string) string {
		if s == "" {
			return ""
		}
		return checkScope([]string{s}, 0)
	}),
	decode.StringMap("claims", decode.TOML, func(p *AuthPolicy) *map[string]string { return &p.Claims }, func(k, v string) []string {
		if hasPlaceholder(v) {
			return []string{placeholderMsg}
		}
		return nil
	}),
	decode.StringList("servers", decode.TOML, func(p *AuthPolicy) *[]string { return &p.Servers }, checkGatewayServer),
	decode.StringList("tools", decode.TOML, func(p *AuthPolicy) *[]string { return &p.Tools }, func(l []string, i int) string {
		if _, err := path.Match(l[i], ""); err != nil || l[i] == "" {
			return fmt.Sprintf("invalid pattern %q: a tool name, with * and ? as wildcards", l[i])
		}
		return ""
	}),
}

// readGatewayAuth reads [gateway.auth], each key checked at its line.
func readGatewayAuth(d *decode.Decoder, field string, v any) (*GatewayAuth, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a table ([gateway.auth] with issuer = \"https://…\"), not %s", d.TypeName(v))
		return nil, false
	}
	a := new(GatewayAuth)
	gatewayAuthFields.DecodeAndCheck(d, field, m, a)
	return a, true
}

// readAuthPolicies reads [[gateway.auth.policy]].
func readAuthPolicies(d *decode.Decoder, field string, v any) ([]AuthPolicy, bool) {
	l, ok := v.([]any)
	if !ok {
		d.Errorf(field, "must be an array of tables ([[gateway.auth.policy]]), not %s", d.TypeName(v))
		return nil, false
	}
	out := make([]AuthPolicy, 0, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			d.Errorf(decode.IndexPath(field, i), "must be a table, not %s", d.TypeName(e))
			return nil, false
		}
		var p AuthPolicy
		authPolicyFields.DecodeAndCheck(d, decode.IndexPath(field, i), m, &p)
		out = append(out, p)
	}
	return out, true
}

// checkAuthURL checks the form of an http(s) URL of [gateway.auth]; what it
// may reach is checked against [network] once merged.
func checkAuthURL(what string) func(string) string {
	return func(s string) string {
		if s == "" {
			return ""
		}
		if hasPlaceholder(s) {
			return placeholderMsg
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Sprintf("must be %s: http(s)://host[/path], without user, query or fragment", what)
		}
		return ""
	}
}

// gatewayAuth checks [gateway.auth] once merged: the servers its policy
// names, the issuer and JWKS URL against [network], and what needs several
// keys.
func (v *validator) gatewayAuth(c *Config, report func(field, msg string), loopback bool) {
	a := c.Gateway.Auth
	if a == nil {
		return
	}
	gatewayAuthFields.Check(a, func(field, msg string) { report(decode.JoinPath("auth", field), msg) })
	for i := range a.Policy {
		authPolicyFields.Check(&a.Policy[i], func(field, msg string) {
			report(decode.JoinPath(decode.IndexPath("auth.policy", i), field), msg)
		})
	}
	if a.Issuer == "" {
		report("auth.issuer", `required: the authorization server whose tokens the gateway accepts (issuer = "https://…")`)
	}
	for _, f := range []struct{ key, url string }{{"issuer", a.Issuer}, {"jwks_url", a.JWKSURL}} {
		if f.url == "" || checkAuthURL("")(f.url) != "" {
			continue
		}
		if err := c.Network.guard().CheckURL(f.url, a.AllowLocalIssuer); err != nil {
			report("auth."+f.key, strings.ReplaceAll(netguardReason(err), "allow_local_endpoint", "allow_local_issuer"))
		}
	}
	if a.AdminScope != "" && slices.Contains(a.Scopes, a.AdminScope) {
		report("auth.admin_scope", fmt.Sprintf("%q is also in scopes, which every token must carry: every client would administer the daemon", a.AdminScope))
	}
	if a.Resource == "" && !loopback {
		report("auth.resource", "required when listening beyond loopback: the URL clients reach the gateway's /mcp at (the gateway cannot tell its public name)")
	}
	for i, p := range a.Policy {
		for j, id := range p.Servers {
			if checkGatewayServer(p.Servers, j) != "" {
				continue
			}
			if _, ok := c.Server(id); !ok {
				report(decode.IndexPath(decode.KeyPath(decode.IndexPath("auth.policy", i), "servers"), j),
					fmt.Sprintf("no server %q in the configuration (%s)", id, serverIDList(c)))
			}
		}
		if p.Servers != nil && len(p.Servers) == 0 {
			report(decode.KeyPath(decode.IndexPath("auth.policy", i), "servers"), "empty: grants nothing (leave servers out for every server)")
		}
	}
}

// netguardReason is the reason of a URL check's refusal, without the URL
// (the problem names the field).
func netguardReason(err error) string {
	var ne *netguard.Error
	if errors.As(err, &ne) {
		return ne.Reason
	}
	return err.Error()
}
