package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestResilienceFields(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.toml")
	good := `[[mcp_servers]]
id = "a"
command = "x"
lazy = true
health_interval = "off"
max_concurrency = 4
max_restarts = 3

[[mcp_servers]]
id = "b"
command = "x"
health_interval = "10s"
`
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Servers[0], cfg.Servers[1]
	if !a.Lazy || a.HealthInterval != HealthOff || a.MaxConcurrency != 4 || a.MaxRestarts != 3 {
		t.Errorf("a = lazy %v, health %v, concurrency %d, restarts %d", a.Lazy, a.HealthInterval, a.MaxConcurrency, a.MaxRestarts)
	}
	if b.HealthInterval != 10*time.Second {
		t.Errorf("b health = %v", b.HealthInterval)
	}

	bad := `[[mcp_servers]]
id = "c"
command = "x"
lazy = "yes"
health_interval = "soon"
max_concurrency = -1
max_restarts = "many"
`
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(file)
	if err == nil {
		t.Fatal("bad resilience fields loaded")
	}
	for _, want := range []string{
		`:4: mcp_servers[0].lazy: must be a boolean`,
		`:5: mcp_servers[0].health_interval: invalid duration "soon"`,
		`:6: mcp_servers[0].max_concurrency: must be between 0 and`,
		`:7: mcp_servers[0].max_restarts: must be a whole number`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems lack %q:\n%v", want, err)
		}
	}
}
