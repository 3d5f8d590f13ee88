package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
)

func TestRegistries(t *testing.T) {
	for _, tc := range []struct {
		name, toml, want string
	}{
		{"ok", `[[registries]]
name = "internal"
url = "https://mcp.internal.example.com"
token = "{{secrets.reg}}"
`, ""},
		{"token written out", `[[registries]]
name = "internal"
url = "https://mcp.internal.example.com"
token = "abc123"
`, "registries[0].token: must be a {{secrets.NAME}} placeholder"},
		{"plain http", `[[registries]]
name = "x"
url = "http://reg.example.com"
`, "registries[0].url: plain http to a remote host"},
		{"missing url", `[[registries]]
name = "x"
`, "registries[0].url: missing"},
		{"not an array", `[registries]
name = "x"
`, "write [[registries]], with double brackets"},
		{"twice", `[[registries]]
name = "a"
url = "https://a.example.com"
[[registries]]
name = "a"
url = "https://b.example.com"
`, `registries[1].name: registry "a" is declared twice in this file (first at line 1)`},
		{"source ok", `[[mcp_servers]]
id = "e"
command = "npx"
registry = { name = "io.github.a/b", version = "1.0.0", url = "https://registry.modelcontextprotocol.io" }
`, ""},
		{"source without version", `[[mcp_servers]]
id = "e"
command = "npx"
registry = { name = "io.github.a/b", url = "https://registry.modelcontextprotocol.io" }
`, "mcp_servers[0].registry.version: missing"},
		{"source bad name", `[[mcp_servers]]
id = "e"
command = "npx"
registry = { name = "nope", version = "1", url = "https://registry.modelcontextprotocol.io" }
`, `registry.name: invalid registry server name "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(f, []byte(tc.toml), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := config.LoadFile(f)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("LoadFile: %v", err)
				}
				if strings.Contains(tc.toml, "[[registries]]") && (len(c.Registries) != 1 || c.RegistryList()[0].Name != "internal") {
					t.Errorf("Registries = %+v", c.Registries)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadFile = %v, want an error with %q", err, tc.want)
			}
		})
	}
	if got := (&config.Config{}).RegistryList(); len(got) != 1 || got[0].URL != config.DefaultRegistryURL {
		t.Errorf("RegistryList of no registries = %+v, want the official one", got)
	}
}
