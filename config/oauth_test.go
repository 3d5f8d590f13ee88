package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOAuthProblems: each problem of a server's oauth table is reported at
// its file, line and field, all at once.
func TestOAuthProblems(t *testing.T) {
	const f = "switchboard.toml"
	for _, tc := range []struct {
		name string
		toml string
		want []string
	}{
		{
			name: "valid",
			toml: `
[[mcp_servers]]
id = "github"
url = "https://api.githubcopilot.com/mcp/"
oauth = { client_id = "Iv1.abc", client_secret = "{{secrets.github_oauth}}", scopes = ["repo", "read:org"] }
`,
		},
		{
			name: "literal secret, bad grant, bad scope",
			toml: `
[[mcp_servers]]
id = "a"
url = "https://a.example/mcp"
oauth = { client_id = "x", client_secret = "hunter2", grant = "password", scopes = ["a b"] }
`,
			want: []string{
				`switchboard.toml:5: mcp_servers[0].oauth.client_secret: must be a {{secrets.NAME}} placeholder (switchboard secrets set NAME), not the secret itself`,
				`switchboard.toml:5: mcp_servers[0].oauth.grant: unknown grant "password" (want authorization_code or client_credentials)`,
				`switchboard.toml:5: mcp_servers[0].oauth.scopes[0]: invalid scope "a b": one scope per entry, without spaces or quotes`,
			},
		},
		{
			name: "client credentials need a client",
			toml: `
[[mcp_servers]]
id = "m2m"
url = "https://a.example/mcp"

[mcp_servers.oauth]
grant = "client_credentials"
`,
			want: []string{
				`switchboard.toml:6: mcp_servers[0].oauth.client_id: required for grant client_credentials`,
				`switchboard.toml:6: mcp_servers[0].oauth.client_secret: required for grant client_credentials: a {{secrets.NAME}} placeholder (or private_key)`,
			},
		},
		{
			name: "private key",
			toml: `
[[mcp_servers]]
id = "jwt"
url = "https://a.example/mcp"
oauth = { grant = "client_credentials", client_id = "m2m", private_key = "{{secrets.m2m_key}}" }

[[mcp_servers]]
id = "both"
url = "https://a.example/mcp"
oauth = { grant = "client_credentials", client_id = "m2m", client_secret = "{{secrets.s}}", private_key = "{{secrets.k}}" }

[[mcp_servers]]
id = "literal"
url = "https://a.example/mcp"
oauth = { grant = "client_credentials", client_id = "m2m", private_key = "-----BEGIN EC PRIVATE KEY-----" }

[[mcp_servers]]
id = "code"
url = "https://a.example/mcp"
oauth = { client_id = "c", private_key = "{{secrets.k}}" }
`,
			want: []string{
				`switchboard.toml:10: mcp_servers[1].oauth.private_key: set with client_secret: use one or the other`,
				`switchboard.toml:15: mcp_servers[2].oauth.private_key: must be a {{secrets.NAME}} placeholder (switchboard secrets set NAME), not the secret itself`,
				`switchboard.toml:15: mcp_servers[2].oauth.client_secret: required for grant client_credentials: a {{secrets.NAME}} placeholder (or private_key)`,
				`switchboard.toml:20: mcp_servers[3].oauth.private_key: only for grant client_credentials`,
			},
		},
		{
			name: "stdio, unknown key, header",
			toml: `
[[mcp_servers]]
id = "s"
command = "srv"
oauth = { clientid = "x" }

[[mcp_servers]]
id = "h"
url = "https://h.example/mcp"
headers = { authorization = "Bearer {{secrets.t}}" }
oauth = { client_metadata_url = "http://h.example/c.json" }
`,
			want: []string{
				`switchboard.toml:5: mcp_servers[0].oauth.clientid: unknown key "clientid"; did you mean client_id?`,
				`switchboard.toml:5: mcp_servers[0].oauth: only for network transports (http, sse, websocket), not stdio`,
				`switchboard.toml:11: mcp_servers[1].oauth.client_metadata_url: must be an https URL with a path (a client ID metadata document)`,
				`switchboard.toml:11: mcp_servers[1].oauth: set with an Authorization header: use one or the other`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := loadString(t, f, tc.toml)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
