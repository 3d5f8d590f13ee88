package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWarnings: what a configuration may do but most likely should not
// is a warning of Load's, naming file, line and field, and never fails
// the load (issue 24 §2, all accepted in silence before): a credential
// written out where a placeholder belongs, PATH set in a server's env, a
// shell running a command line, a URL to the port of a service that is
// not an MCP server; an endpoint's scopes without OAuth (issue 26). No
// warning quotes a credential.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	const canary = "ghp_canary0123456789abcdefghijklmn"
	file := writeFile(t, dir, "c.toml", `[[mcp_servers]]
id = "gh"
command = "npx"
args = ["-y", "server-github", "--api-key", "sk-canary0123456789abcdef"]
env = { GITHUB_TOKEN = "`+canary+`", PATH = "/tmp/bin:/usr/bin" }

[[mcp_servers]]
id = "search"
url = "https://search.example.com/mcp"
headers = { Authorization = "Bearer xoxb-canary-0123456789-abcdefgh" }

[[mcp_servers]]
id = "shell"
command = "/bin/bash"
args = ["-lc", "cd /srv && exec node server.js"]

[[mcp_servers]]
id = "cmd"
command = "/usr/bin/env"
args = ["FOO=1", "sh", "-c", "exec server"]

[[mcp_servers]]
id = "redis"
url = "https://cache.example.com:6379/mcp"

[[mcp_servers]]
id = "ssh"
url = "wss://bastion.example.com:22/mcp"

[[mcp_servers]]
id = "docker"
url = "http://127.0.0.1:2375/mcp"
allow_local_endpoint = true

[[mcp_servers]]
id = "fine"
command = "sh"
args = ["./serve.sh"]
env = { PATH = "/opt/tools/bin:/usr/bin", TOKEN = "{{secrets.fine_token}}" }
allow_env = ["PATH"]

[[mcp_servers]]
id = "web"
url = "https://mcp.example.com:8443/mcp"
headers = { Authorization = "Bearer {{secrets.web_token}}" }

[[endpoints]]
name = "code"
scopes = ["code"]

[[endpoints]]
name = "fine"
auth_token = "{{secrets.fine_endpoint_token}}"
`)
	c, err := LoadFile(file)
	if err != nil {
		t.Fatalf("LoadFile: %v (a warning must not fail the load)", err)
	}
	var got []string
	for _, w := range c.Warnings {
		got = append(got, strings.TrimPrefix(w.Error(), dir+"/"))
	}
	want := []string{
		`c.toml:4: mcp_servers[0].args[3]: looks like a credential written out (it follows --api-key): argv is readable by every user of this machine, and a config file is shared and committed; if the server reads it from its environment, pass it in env as "{{secrets.NAME}}" (switchboard secrets set NAME)`,
		`c.toml:5: mcp_servers[0].env.PATH: sets the PATH the server's command and every program it starts are looked up in: a folder there decides which program runs; if this server needs it, add allow_env = ["PATH"]`,
		`c.toml:5: mcp_servers[0].env.GITHUB_TOKEN: looks like a credential written out (it looks like a GitHub token): a config file is shared and committed, and what is written there leaks; store it with switchboard secrets set gh_github_token, then write "{{secrets.gh_github_token}}" here`,
		`c.toml:10: mcp_servers[1].headers.Authorization: looks like a credential written out (its name says so): a config file is shared and committed, and what is written there leaks; store it with switchboard secrets set search_authorization, then write "Bearer {{secrets.search_authorization}}" here`,
		`c.toml:14: mcp_servers[2].command: runs a command line through bash -lc: the shell reads it with its quoting, expansions, ;, | and $(…), which makes what runs hard to tell; name the program in command and its arguments in args`,
		`c.toml:19: mcp_servers[3].command: runs a command line through sh -c: the shell reads it with its quoting, expansions, ;, | and $(…), which makes what runs hard to tell; name the program in command and its arguments in args`,
		`c.toml:24: mcp_servers[4].url: port 6379 is usually Redis: what is sent there would reach it, not an MCP server; check the port`,
		`c.toml:28: mcp_servers[5].url: port 22 is usually SSH: what is sent there would reach it, not an MCP server; check the port`,
		`c.toml:32: mcp_servers[6].url: port 2375 is usually the Docker API without TLS: what is sent there would reach it, not an MCP server; check the port`,
		`c.toml:49: endpoints[0].scopes: unused: only OAuth access tokens have scopes, and there is no [gateway.auth]; give the endpoint an auth_token, or configure [gateway.auth]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
	for _, w := range got {
		if strings.Contains(w, "canary") {
			t.Errorf("a warning quotes a credential: %s", w)
		}
	}
}

func TestShellLine(t *testing.T) {
	for _, tt := range []struct {
		command string
		args    []string
		want    string
	}{
		{"sh", []string{"-c", "x"}, "sh -c"},
		{"/bin/bash", []string{"-o", "pipefail", "-ec", "x"}, "bash -ec"},
		{"bash", []string{"--norc", "-c", "x"}, "bash -c"},
		{"zsh", []string{"-lc", "x"}, "zsh -lc"},
		{`C:\Windows\System32\cmd.exe`, []string{"/C", "x"}, "cmd /C"},
		{"pwsh", []string{"-NoProfile", "-Command", "x"}, "pwsh -Command"},
		{"env", []string{"-i", "A=1", "bash", "-c", "x"}, "bash -c"},
		{"sh", []string{"./serve.sh", "-c"}, ""}, // a script, whose own -c it is
		{"bash", []string{"--", "-c"}, ""},
		{"node", []string{"-c", "x"}, ""},
		{"env", []string{"A=1"}, ""},
	} {
		if got := shellLine(tt.command, tt.args); got != tt.want {
			t.Errorf("shellLine(%q, %q) = %q, want %q", tt.command, tt.args, got, tt.want)
		}
	}
}
