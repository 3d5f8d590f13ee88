package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLiteralsEnv: which env values look like credentials written out,
// and which do not. Every secret-looking value below is made up.
func TestLiteralsEnv(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        string // the Why; "" for no credential
	}{
		// By name.
		{"GITHUB_PERSONAL_ACCESS_TOKEN", "abc123def456", "its name says so"},
		{"API_KEY", "hunter2hunter2", "its name says so"},
		{"apiKey", "some-value-1", "its name says so"},
		{"DB_PASSWORD", "postgres", "its name says so"},
		{"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMIK7MDENGbPxRfiCY", "it looks like a random key"},
		{"CLIENT_SECRET", "s3cr3t", "its name says so"},
		{"SERVICE_AUTH", "opaque", "its name says so"},
		{"KEY", "abcdef", "its name says so"},
		// By shape, whatever the name.
		{"GH", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "it looks like a GitHub token"},
		{"X", "github_pat_11ABCDEFG0123456789_abcdefghijkl", "it looks like a GitHub token"},
		{"X", "sk-ant-api03-abcdefghijklmnop", "it looks like an Anthropic key"},
		{"X", "xoxb-123456789012-abcdefghijkl", "it looks like a Slack token"},
		{"X", "AKIAIOSFODNN7EXAMPLE1", "it looks like an AWS access key"},
		{"X", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijk", "it looks like a JSON Web Token"},
		{"DATABASE_URL", "postgres://app:pa55word@db.internal:5432/app", "it is a URL with a password"},
		{"ENDPOINT", "https://api.example.com/v1?api_key=abcdef123456", "it is a URL with a credential in its query (api_key)"},
		{"X", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----", "it is a private key"},
		{"X", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "it looks like a random key"},
		{"X", "Zk3xQ9vLp2Rt7WmN4bYc8HsJ", "it looks like a random key"},
		// Not credentials.
		{"GITHUB_TOKEN", "{{secrets.github_token}}", ""},
		{"GITHUB_TOKEN", "{{env.GITHUB_TOKEN}}", ""},
		{"AUTH", "Bearer {{secrets.t}}", ""},
		{"KEY", "${input:api-key}", ""},
		{"TOKEN", "${env:GH_TOKEN}", ""},
		{"AUTH", "{{secrets.user}}:ghp_abcdefghijklmnopqrstuvwxyz0123456789", "it looks like a GitHub token"},
		{"AUTH", "{{secrets.user}} ghp_abcdefghijklmnopqrstuvwxyz0123456789", "it looks like a GitHub token"},
		{"TOKEN_FILE", "/run/secrets/token", ""},
		{"PASSWORD_FILE", "~/.config/pw", ""},
		{"PWD", "/home/me", ""},
		{"MAX_TOKENS", "4096", ""},
		{"USE_TOKEN", "true", ""},
		{"TOKEN", "", ""},
		{"AUTH_MODE", "bearer", ""},
		{"LOG_LEVEL", "debug", ""},
		{"NODE_ENV", "production", ""},
		{"BASE_URL", "https://api.example.com/v1", ""},
		{"PROJECT", "my_server_config_2024.json", ""},
		{"PRIMARY_KEY_COLUMN", "id", ""},
		{"MONKEY", "banana-split", ""},
		{"ALLOWED_DIRS", "/home/me/src:/tmp", ""},
	} {
		s := Server{ID: "s", Command: "x", Env: map[string]string{tc.name: tc.value}}
		got := ""
		if ls := Literals(s); len(ls) > 0 {
			got = ls[0].Why
			if ls[0].Value != tc.value || ls[0].Movable == strings.Contains(tc.value, "{{") || ls[0].Field != "env."+tc.name {
				t.Errorf("Literals(env.%s) = %+v", tc.name, ls[0])
			}
		}
		if got != tc.want {
			t.Errorf("Literals(env.%s = %.20q…) = %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}

// TestLiteralsHeadersArgsURL: an Authorization header keeps its scheme;
// args and URLs are judged strictly (a false alarm there refuses the
// server), and their credentials cannot move.
func TestLiteralsHeadersArgsURL(t *testing.T) {
	s := Server{
		ID: "s",
		Headers: map[string]string{
			"Authorization": "Bearer abc.def-123",
			"X-API-Key":     "k1k2k3k4",
			"Accept":        "application/json",
			"X-Trace":       "Basic {{secrets.x}}",
		},
		Args: []string{
			"-y", "@modelcontextprotocol/server-github", "--port", "8080",
			"--api-key=abcd1234", "--token", "t0k3n-value",
			"--project-id", "550e8400-e29b-41d4-a716-446655440000",
			"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
			"src/some/path/file_2024_v2.js", "--verbose",
		},
		URL: "https://mcp.example.com/mcp/Zk3xQ9vLp2Rt7WmN4bYc8HsJqP5aTe6D/sse",
	}
	var got []string
	for _, l := range Literals(s) {
		got = append(got, l.String())
	}
	want := []string{
		"headers.Authorization: its name says so",
		"headers.X-API-Key: its name says so",
		"args[4]: it follows api-key=",
		"args[6]: it follows --token",
		"args[9]: it looks like a GitHub token",
		"url: it is a URL with a token in its path",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Literals (-want +got):\n%s", diff)
	}
	ls := Literals(s)
	if ls[0].Keep != "Bearer " || ls[0].Value != "abc.def-123" || !ls[0].Movable {
		t.Errorf("Authorization: Keep %q Value %q Movable %v", ls[0].Keep, ls[0].Value, ls[0].Movable)
	}
	if ls[2].Value != "abcd1234" || ls[2].Movable {
		t.Errorf("args[4]: Value %q Movable %v", ls[2].Value, ls[2].Movable)
	}
	for _, l := range ls {
		if strings.Contains(l.String(), l.Value) {
			t.Errorf("%s quotes its value", l)
		}
	}
}
