package config

import (
	"strings"
	"testing"
	"time"
)

func TestModes(t *testing.T) {
	cfg, problems := loadString(t, "c.toml", `
[gateway]
mode = "search"

[search]
kind = "ollama"
model = "nomic-embed-text"
allow_local_endpoint = true

[code]
cpu_time = "2s"
memory = 33554432

[[endpoints]]
name = "code"
mode = "code"
`)
	if problems != nil {
		t.Fatal(problems)
	}
	if cfg.Gateway.Mode != ModeSearch || cfg.Endpoints[0].Mode != ModeCode {
		t.Errorf("modes = %q, %q; want search, code", cfg.Gateway.Mode, cfg.Endpoints[0].Mode)
	}
	if got := cfg.Search.Endpoint(); got != DefaultOllamaURL {
		t.Errorf("Search.Endpoint() = %q, want %q", got, DefaultOllamaURL)
	}
	code := cfg.Code.WithDefaults()
	if code.CPUTime != 2*time.Second || code.WallTime != DefaultCodeWallTime || code.Memory != 32<<20 || code.Output != DefaultCodeOutput {
		t.Errorf("Code.WithDefaults() = %+v", code)
	}
}

func TestModesInvalid(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[gateway]\nmode = \"lazy\"\n", `gateway.mode: unknown mode "lazy"`},
		{"[[endpoints]]\nname = \"a\"\nmode = \"everything\"\n", `endpoints[0].mode: unknown mode "everything"`},
		{"[search]\nmodel = \"m\"\n", "search.kind: missing"},
		{"[search]\nkind = \"openai\"\n", "search.model: missing"},
		{"[search]\nkind = \"bert\"\nmodel = \"m\"\n", `search.kind: unknown kind "bert"`},
		{"[search]\nkind = \"ollama\"\nmodel = \"m\"\n", "search.url:"},
		{"[search]\nkind = \"openai\"\nmodel = \"m\"\napi_key = \"sk-123\"\n", "search.api_key: a literal key is not allowed"},
		{"[code]\ncpu_time = \"1h\"\n", "code.cpu_time: must be at most 5m"},
		{"[code]\nmemory = 10\n", "code.memory: must be between"},
		{"[code]\ncpu_time = \"1m\"\nwall_time = \"10s\"\n", "code.cpu_time: 1m is more than wall_time (10s)"},
	} {
		_, problems := loadString(t, "c.toml", c.toml)
		if got := strings.Join(problems, "\n"); !strings.Contains(got, c.want) {
			t.Errorf("LoadFile(%q) = %q, want a problem holding %q", c.toml, got, c.want)
		}
	}
}
