package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/transport"
)

// Variables that make a server's program load other code than its command
// says are refused in env unless the server lists them in allow_env, in
// every format a server can be declared in (issue 11 §5).
func TestEnvGuard(t *testing.T) {
	const why = "gives node options such as --require and --import, which run the code they name, so a config that sets it can make the server run other code than its command says; if this server needs it, add "
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"toml", "switchboard.toml", `[[mcp_servers]]
id = "a"
command = "npx"
env = { NODE_OPTIONS = "--require /tmp/x.js", TOKEN = "{{secrets.t}}" }

[[mcp_servers]]
id = "b"
command = "python3"
env.LD_PRELOAD = "/tmp/x.so"
env.ld_library_path = "/tmp"
env.DYLD_INSERT_LIBRARIES = "/tmp/x.dylib"
env.PYTHONPATH = "/tmp"
env.BASH_ENV = "/tmp/x.sh"
env.npm_config_registry = "https://registry.evil.example"
env.PATH = "/usr/bin"
`, []string{
			`switchboard.toml:4: mcp_servers[0].env.NODE_OPTIONS: NODE_OPTIONS ` + why + `allow_env = ["NODE_OPTIONS"]`,
			`switchboard.toml:9: mcp_servers[1].env.LD_PRELOAD: LD_PRELOAD is read by the dynamic loader, which loads a library it names (LD_PRELOAD, LD_AUDIT) or looks for libraries where it says (LD_LIBRARY_PATH), so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env = ["LD_PRELOAD"]`,
			`switchboard.toml:10: mcp_servers[1].env.ld_library_path: ld_library_path is read by the dynamic loader, which loads a library it names (LD_PRELOAD, LD_AUDIT) or looks for libraries where it says (LD_LIBRARY_PATH), so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env = ["ld_library_path"]`,
			`switchboard.toml:11: mcp_servers[1].env.DYLD_INSERT_LIBRARIES: DYLD_INSERT_LIBRARIES is read by the macOS dynamic loader, which loads a library it names or looks for libraries where it says, so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env = ["DYLD_INSERT_LIBRARIES"]`,
			`switchboard.toml:12: mcp_servers[1].env.PYTHONPATH: PYTHONPATH changes where python imports modules from, so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env = ["PYTHONPATH"]`,
			`switchboard.toml:13: mcp_servers[1].env.BASH_ENV: BASH_ENV names a file bash runs at start, so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env = ["BASH_ENV"]`,
			`switchboard.toml:14: mcp_servers[1].env.npm_config_registry: npm_config_registry configures npm and npx, including the registry they install the server's code from and the shell they run scripts with, so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env = ["npm_config_registry"]`,
		}},
		{"toml allowed", "switchboard.toml", `[[mcp_servers]]
id = "a"
command = "node"
env = { NODE_OPTIONS = "--max-old-space-size=4096", LD_LIBRARY_PATH = "/opt/lib" }
allow_env = ["NODE_OPTIONS", "LD_LIBRARY_PATH"]
`, nil},
		{"toml allow_env problems", "switchboard.toml", `[[mcp_servers]]
id = "a"
command = "node"
env = { NODE_OPTIONS = "--max-old-space-size=4096" }
allow_env = ["NODE_OPTIONS", "TOKEN", "LD_PRELOAD", "NODE_OPTIONS", "{{env.X}}"]

[[mcp_servers]]
id = "b"
url = "https://mcp.example.com/mcp"
allow_env = ["NODE_OPTIONS"]
`, []string{
			`switchboard.toml:5: mcp_servers[0].allow_env[1]: TOKEN needs no allowing: allow_env lists only variables that make a program load other code, such as NODE_OPTIONS, and PATH`,
			`switchboard.toml:5: mcp_servers[0].allow_env[2]: LD_PRELOAD is not set in env`,
			`switchboard.toml:5: mcp_servers[0].allow_env[3]: duplicate "NODE_OPTIONS"`,
			`switchboard.toml:5: mcp_servers[0].allow_env[4]: placeholders are only allowed in env and headers values`,
			`switchboard.toml:10: mcp_servers[1].allow_env: only for transport stdio, not http`,
		}},
		{"mcpServers json", "claude_desktop_config.json", `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "{{secrets.gh}}", "NODE_OPTIONS": "--require /tmp/x.js"}
    },
    "allowed": {
      "command": "node",
      "env": {"NODE_OPTIONS": "--max-old-space-size=4096"},
      "allow_env": ["NODE_OPTIONS"]
    }
  }
}`, []string{
			`claude_desktop_config.json:6: mcpServers.github.env.NODE_OPTIONS: NODE_OPTIONS ` + why + `"allow_env": ["NODE_OPTIONS"]`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := loadString(t, tc.file, tc.src)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// An agent's inline server is decoded by DecodeServer, with the same rule.
func TestEnvGuardDecodeServer(t *testing.T) {
	m := map[string]any{"id": "calc", "command": "node", "env": map[string]any{"NODE_OPTIONS": "--require /tmp/x.js", "JAVA_TOOL_OPTIONS": "-javaagent:/tmp/a.jar"},
		"allow_env": []any{"JAVA_TOOL_OPTIONS"}}
	lines := map[string]int{"mcp_servers[0]": 3, "mcp_servers[0].env.NODE_OPTIONS": 6}
	_, err := DecodeServer("agents/calc.md", "mcp_servers[0]", m, lines)
	var got []string
	for _, p := range Problems(err) {
		got = append(got, p.Error())
	}
	want := []string{
		`agents/calc.md:6: mcp_servers[0].env.NODE_OPTIONS: NODE_OPTIONS gives node options such as --require and --import, which run the code they name, so a config that sets it can make the server run other code than its command says; if this server needs it, add allow_env: [NODE_OPTIONS]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// The variables the host passes to every child from its own environment
// (transport.MinimalEnv) are never such variables, whatever the host's
// environment holds.
func TestMinimalEnvCarriesNoInjection(t *testing.T) {
	for _, k := range []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "PYTHONPATH",
		"PYTHONSTARTUP", "BASH_ENV", "ENV", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "npm_config_registry", "GCONV_PATH"} {
		t.Setenv(k, "/tmp/injected")
	}
	t.Setenv("LC_ALL", "C")
	for _, kv := range transport.MinimalEnv(nil) {
		k, _, _ := strings.Cut(kv, "=")
		if why := injectionEnv(k); why != "" {
			t.Errorf("MinimalEnv passes %s, which %s", k, why)
		}
		if strings.Contains(kv, "/tmp/injected") {
			t.Errorf("MinimalEnv passes %s", kv)
		}
	}
	// And nothing the host uses is refused in a server's env by itself.
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TERM", "LANG", "LANGUAGE", "TZ", "LC_ALL", "NODE_EXTRA_CA_CERTS", "GITHUB_TOKEN"} {
		if why := injectionEnv(k); why != "" {
			t.Errorf("injectionEnv(%q) = %q, want \"\"", k, why)
		}
	}
}
