package config

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/secret"
)

func TestNetwork(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "n.toml", `[network]
allow_cidrs = ["10.20.0.0/16", "fd00:1::/48"]
deny_cidrs = ["203.0.113.0/24"]
proxy = "http://proxy.corp:3128"
`)
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Network{
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16"), netip.MustParsePrefix("fd00:1::/48")},
		DenyCIDRs:  []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
		Proxy:      "http://proxy.corp:3128",
		Source:     Position{File: file, Line: 1, Field: "network"},
	}
	if diff := cmp.Diff(want, c.Network, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("Network (-want +got):\n%s", diff)
	}
	n, err := c.Network.Resolve(nil, nil, nil)
	if err != nil || n.Proxy.String() != "http://proxy.corp:3128" || len(n.AllowCIDRs) != 2 || len(n.DenyCIDRs) != 1 {
		t.Errorf("Resolve = %+v, %v", n, err)
	}
}

// TestNetworkLayering: a later file overrides [network] key by key.
func TestNetworkLayering(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "user/switchboard/config.toml", `[network]
deny_cidrs = ["198.51.100.0/24"]
proxy = "http://proxy.corp:3128"
`)
	work := writeFile(t, root, "work/switchboard.toml", `[network]
allow_cidrs = ["10.20.0.0/16"]
proxy = "https://proxy2.corp"
`)
	c, err := Load(&LoadOptions{Dir: root + "/work", UserConfigDir: root + "/user/switchboard", Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Network{
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")},
		DenyCIDRs:  []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")},
		Proxy:      "https://proxy2.corp",
		Source:     Position{File: work, Line: 1, Field: "network"},
	}
	if diff := cmp.Diff(want, c.Network, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("Network (-want +got):\n%s", diff)
	}
}

func TestNetworkProblems(t *testing.T) {
	for _, tt := range []struct {
		name, toml string
		want       []string
	}{
		{"bad prefixes", `[network]
allow_cidrs = [
  "10.20.0.0/16",
  "10.20.0.0",
  "10.20.1.5/16",
]
deny_cidrs = ["{{env.X}}"]
`, []string{
			`n.toml:4: network.allow_cidrs[1]: invalid CIDR prefix "10.20.0.0" (want an address/bits such as "10.20.0.0/16" or "fd00:1::/48")`,
			`n.toml:5: network.allow_cidrs[2]: "10.20.1.5/16" has bits set past /16; write "10.20.0.0/16"`,
			`n.toml:7: network.deny_cidrs[0]: placeholders are not allowed here`,
		}},
		{"types and unknown keys", `[network]
allow_cidrs = "10.0.0.0/8"
deny_cidrs = [1]
proxy = true
prxy = "x"
`, []string{
			`n.toml:2: network.allow_cidrs: must be an array of strings, not a string`,
			`n.toml:3: network.deny_cidrs[0]: must be a string, not an integer`,
			`n.toml:4: network.proxy: must be a string, not a boolean`,
			`n.toml:5: network.prxy: unknown key "prxy"; did you mean proxy?`,
		}},
		{"not a table", `network = "on"
`, []string{`n.toml:1: network: must be a table, not a string`}},
		{"proxy scheme", `[network]
proxy = "socks5://proxy.corp:1080"
`, []string{`n.toml:2: network.proxy: must be an http:// or https:// proxy URL such as http://proxy.corp:3128; scheme "socks5" is not supported`}},
		{"proxy path", `[network]
proxy = "http://proxy.corp:3128/x"
`, []string{`n.toml:2: network.proxy: must be an http:// or https:// proxy URL such as http://proxy.corp:3128, without path, query or fragment`}},
		{"proxy port", `[network]
proxy = "http://proxy.corp:0"
`, []string{`n.toml:2: network.proxy: invalid port "0"`}},
		{"literal proxy password", `[network]
proxy = "http://alice:hunter2@proxy.corp:3128"
`, []string{`n.toml:2: network.proxy: ` + credentialsInProxy}},
		{"literal proxy token as user", `[network]
proxy = "http://hunter2@proxy.corp:3128"
`, []string{`n.toml:2: network.proxy: ` + credentialsInProxy}},
		{"half a placeholder password", `[network]
proxy = "http://alice:hunter2{{secrets.p}}@proxy.corp:3128"
`, []string{`n.toml:2: network.proxy: ` + credentialsInProxy}},
		{"placeholder in the host", `[network]
proxy = "http://{{env.PROXY_HOST}}:3128"
`, []string{`n.toml:2: network.proxy: placeholders are only allowed in the proxy's user and password`}},
		{"secret env var", `[network]
proxy = "http://alice:{{env.SWITCHBOARD_SECRET_P}}@proxy.corp:3128"
`, []string{`n.toml:2: network.proxy: {{env.SWITCHBOARD_SECRET_P}} reads a secret's environment variable; write {{secrets.NAME}} instead`}},
		{"placeholder credentials", `[network]
proxy = "http://{{secrets.proxy_user}}:{{secrets.proxy_password}}@proxy.corp:3128"
`, nil},
		{"literal user, placeholder password", `[network]
proxy = "https://alice:{{env.PROXY_PASSWORD}}@proxy.corp"
`, nil},
		{"an allowed range admits a configured literal", `[network]
allow_cidrs = ["10.20.0.0/16"]

[[mcp_servers]]
id = "a"
url = "http://10.20.1.5:8080/mcp"

[[mcp_servers]]
id = "b"
url = "http://10.30.1.5:8080/mcp"

[providers.local]
type = "openai"
base_url = "http://10.20.1.6:8000/v1"
`, []string{
			`n.toml:10: mcp_servers[1].url: 10.30.1.5 is a private address (RFC 1918); set allow_local_endpoint = true to allow this server to reach it`,
		}},
		{"a denied range refuses a configured literal", `[network]
deny_cidrs = ["93.184.216.0/24"]

[[mcp_servers]]
id = "a"
url = "https://93.184.216.34/mcp"
`, []string{
			`n.toml:6: mcp_servers[0].url: 93.184.216.34 is in the denied range 93.184.216.0/24`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := writeFile(t, dir, "n.toml", tt.toml)
			_, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
			if diff := cmp.Diff(tt.want, problemStrings(t, err, dir)); diff != "" {
				t.Errorf("Load(%q) problems (-want +got):\n%s", tt.toml, diff)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("a problem quotes the literal password: %v", err)
			}
		})
	}
}

// TestNetworkResolveProxy: proxy credentials come from placeholders, are
// escaped into the URL and registered with the redactor.
func TestNetworkResolveProxy(t *testing.T) {
	n := Network{Proxy: "http://{{secrets.proxy_user}}:{{env.PROXY_PASSWORD}}@proxy.corp:3128"}
	store := secret.EnvStore{LookupEnv: func(k string) (string, bool) { return "me@corp", k == "SWITCHBOARD_SECRET_PROXY_USER" }}
	env := func(k string) (string, bool) { return "p@ss:w/rd", k == "PROXY_PASSWORD" }
	red := secret.NewRedactor()
	got, err := n.Resolve(env, store, red)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if pw, _ := got.Proxy.User.Password(); got.Proxy.User.Username() != "me@corp" || pw != "p@ss:w/rd" || got.Proxy.Host != "proxy.corp:3128" {
		t.Errorf("Resolve proxy = %s, want user me@corp, password p@ss:w/rd at proxy.corp:3128", got.Proxy.Redacted())
	}
	if out := red.Redact("password p@ss:w/rd"); strings.Contains(out, "p@ss:w/rd") {
		t.Errorf("the proxy password is not redacted: %q", out)
	}
	_, err = n.Resolve(func(string) (string, bool) { return "", false }, secret.EnvStore{LookupEnv: func(string) (string, bool) { return "", false }}, nil)
	if err == nil || !strings.Contains(err.Error(), "network.proxy: {{secrets.proxy_user}}") {
		t.Errorf("Resolve without the secret: %v, want an error naming field and placeholder", err)
	}
}

// TestNetworkValidate: Validate checks a Network built in code too.
func TestNetworkValidate(t *testing.T) {
	c := &Config{Network: Network{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.20.1.5/16")}, Proxy: "ftp://x"}}
	want := []string{
		`network.allow_cidrs[0]: "10.20.1.5/16" has bits set past /16; write "10.20.0.0/16"`,
		`network.proxy: must be an http:// or https:// proxy URL such as http://proxy.corp:3128; scheme "ftp" is not supported`,
	}
	// No dir to strip: the messages hold URLs.
	if diff := cmp.Diff(want, problemStrings(t, c.Validate(), "\x00")); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}

func TestAllowCrossOriginRedirects(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "r.toml", `[[mcp_servers]]
id = "a"
url = "https://mcp.example.com/mcp"
allow_cross_origin_redirects = true

[[mcp_servers]]
id = "b"
command = "x"
allow_cross_origin_redirects = true

[[mcp_servers]]
id = "c"
url = "https://mcp.example.com/mcp"
allow_cross_origin_redirects = "yes"
`)
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	want := []string{
		`r.toml:9: mcp_servers[1].allow_cross_origin_redirects: only for network transports (http, sse, websocket), not stdio`,
		`r.toml:14: mcp_servers[2].allow_cross_origin_redirects: must be a boolean, not a string`,
	}
	if diff := cmp.Diff(want, problemStrings(t, err, dir)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	a, _ := c.Server("a")
	if !a.AllowCrossOriginRedirects {
		t.Error("a.AllowCrossOriginRedirects = false, want true")
	}
	o := a
	o.AllowCrossOriginRedirects = false
	if a.Equal(o) {
		t.Error("Equal ignores allow_cross_origin_redirects")
	}
}
