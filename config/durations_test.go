package config

import (
	"slices"
	"testing"
)

// TestDurationBounds: every duration a configuration sets has a maximum,
// and a value beyond it is refused naming the field and the maximum
// (issue 24 §2: timeout = "1000000h" was accepted). The maximum itself is
// accepted.
func TestDurationBounds(t *testing.T) {
	for _, c := range []struct {
		file, content string
		want          []string
	}{
		{"c.toml", `[[mcp_servers]]
id = "a"
command = "x"
timeout = "1000000h"
connect_timeout = "2h"
install_timeout = "90m"
health_interval = "25h"
[gateway]
session_timeout = "169h"
shutdown_grace = "61m"
shutdown_drain = "2h"
[telemetry]
otlp_interval = "48h"
`, []string{
			"c.toml:4: mcp_servers[0].timeout: must be at most 24h, not 1000000h",
			"c.toml:5: mcp_servers[0].connect_timeout: must be at most 1h, not 2h",
			"c.toml:6: mcp_servers[0].install_timeout: must be at most 1h, not 1h30m",
			"c.toml:7: mcp_servers[0].health_interval: must be at most 24h, not 25h",
			"c.toml:9: gateway.session_timeout: must be at most 168h, not 169h",
			"c.toml:10: gateway.shutdown_grace: must be at most 1h, not 1h1m",
			"c.toml:11: gateway.shutdown_drain: must be at most 1h, not 2h",
			"c.toml:13: telemetry.otlp_interval: must be at most 24h, not 48h",
		}},
		{"c.toml", `[[mcp_servers]]
id = "a"
command = "x"
timeout = "24h"
connect_timeout = "1h"
install_timeout = "1h"
health_interval = "24h"
[gateway]
session_timeout = "168h"
shutdown_grace = "1h"
shutdown_drain = "1h"
[telemetry]
otlp_interval = "24h"
`, nil},
		// The clients' JSON writes a timeout in milliseconds.
		{"c.json", `{"mcpServers": {"a": {"command": "x", "timeout": 3600000000000}}}`, []string{
			"c.json:1: mcpServers.a.timeout: must be at most 24h, not 1000000h",
		}},
	} {
		_, got := loadString(t, c.file, c.content)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n%s\nproblems %q\nwant %q", c.file, c.content, got, c.want)
		}
	}
	// An agent file's inline server has the same bounds.
	_, err := DecodeServer("agents/x.yaml", "mcp_servers[0]", map[string]any{"id": "a", "command": "x", "timeout": "1000000h"}, nil)
	if ps := Problems(err); len(ps) != 1 || ps[0].Error() != "agents/x.yaml: mcp_servers[0].timeout: must be at most 24h, not 1000000h" {
		t.Errorf("DecodeServer with timeout 1000000h: %v", err)
	}
}
