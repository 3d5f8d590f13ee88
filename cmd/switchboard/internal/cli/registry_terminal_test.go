//go:build linux || darwin || freebsd || netbsd || openbsd

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/registry/registrytest"
)

// TestRegistryAddTerminal: add --from-registry on a terminal asks for the
// values the entry wants, a secret one without echo; the secret goes to
// the secret store and is on the screen and in the file nowhere.
func TestRegistryAddTerminal(t *testing.T) {
	recs, err := registrytest.Load(filepath.Join("..", "..", "..", "..", "registry", "testdata", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(recs)
	t.Cleanup(reg.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[[registries]]\nname = \"fixture\"\nurl = \""+reg.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "wk-canary-5f1e9a7b3c"
	tm := startTerminalEnv(t, []string{"SWITCHBOARD_SECRETS_BACKEND=file", "XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg")},
		"--config", cfg, "add", "--from-registry", "io.github.example/weather-mcp", "--id", "weather")
	tm.expect("env WEATHER_API_KEY: API key for weather service")
	tm.expect("WEATHER_API_KEY: ")
	tm.send(secret)
	tm.expect("WEATHER_UNITS: Temperature units (celsius, fahrenheit) [default celsius] (optional: Enter to skip)")
	tm.send("")
	tm.expect("secret weather_weather_api_key stored (file)")
	tm.expect("added weather to " + cfg)
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	tm.mu.Lock()
	screen := tm.out.String()
	tm.mu.Unlock()
	if strings.Contains(screen, secret) {
		t.Errorf("the secret was echoed:\n%s", screen)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`args = ["weather-mcp-server==0.5.0"]`, `WEATHER_API_KEY = "{{secrets.weather_weather_api_key}}"`, `WEATHER_UNITS = "celsius"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("config.toml:\n%s\nwant %s", data, want)
		}
	}
	if strings.Contains(string(data), secret) {
		t.Errorf("the secret is in config.toml")
	}
}
