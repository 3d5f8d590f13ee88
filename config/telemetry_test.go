package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTelemetryProblems: each problem of [telemetry] names the file, the
// line and the field, and a password in the collector's URL is never
// echoed; a later file's allow_local_endpoint admits an earlier file's
// local endpoint (checked once merged).
func TestTelemetryProblems(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name, body string
		want       []string // substrings of the error
	}{
		{"type", "[telemetry]\notlp_endpoint = 4318\n", []string{"t.toml:2", "telemetry.otlp_endpoint"}},
		{"bool", "[telemetry]\nrecord_payloads = \"yes\"\n", []string{"t.toml:2", "telemetry.record_payloads"}},
		{"unknown", "[telemetry]\nendpoint = \"https://c.example.com\"\n", []string{"t.toml:2", "telemetry.endpoint"}},
		{"placeholder", "[telemetry]\notlp_endpoint = \"{{secrets.URL}}\"\n", []string{"t.toml:2", "telemetry.otlp_endpoint", "placeholders are not allowed"}},
		{"local", "[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\n", []string{"t.toml:2", "telemetry.otlp_endpoint", "allow_local_endpoint"}},
		{"password", "[telemetry]\notlp_endpoint = \"https://user:hunter2@collector.example.com\"\n", []string{"t.toml:2", "telemetry.otlp_endpoint", "credentials"}},
		{"interval", "[telemetry]\notlp_interval = \"10ms\"\n", []string{"t.toml:2", "telemetry.otlp_interval", "at least 1s"}},
		{"interval type", "[telemetry]\notlp_interval = 30\n", []string{"t.toml:2", "telemetry.otlp_interval"}},
		{"scheme", "[telemetry]\notlp_endpoint = \"ftp://collector.example.com\"\n", []string{"t.toml:2", "telemetry.otlp_endpoint", "scheme"}},
		{"tool labels", "[telemetry]\nmax_tool_labels = 5\n", []string{"t.toml:2", "telemetry.max_tool_labels", "must be between 16 and 10000, not 5"}},
		{"tool labels type", "[telemetry]\nmax_tool_labels = \"all\"\n", []string{"t.toml:2", "telemetry.max_tool_labels", "whole number"}},
	} {
		file := writeFile(t, root, c.name+"/t.toml", c.body)
		_, err := LoadFile(file)
		if err == nil {
			t.Errorf("%s: %q loaded, want an error", c.name, c.body)
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not say %q", c.name, msg, w)
			}
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("%s: the error echoes the password: %q", c.name, msg)
		}
	}

	// Merged: the project's allow_local_endpoint admits the user's endpoint.
	user := writeFile(t, root, "user/switchboard/config.toml", "[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\n")
	writeFile(t, root, "work/switchboard.toml", "[telemetry]\nallow_local_endpoint = true\notlp_interval = \"15s\"\nmax_tool_labels = 500\n[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n")
	cfg, err := Load(&LoadOptions{Dir: filepath.Join(root, "work"), UserConfigDir: filepath.Dir(user), Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load with allow_local_endpoint in the later file: %v", err)
	}
	if cfg.Telemetry.OTLPEndpoint != "http://127.0.0.1:4318" || !cfg.Telemetry.AllowLocalEndpoint || cfg.Telemetry.OTLPInterval != 15*time.Second || cfg.Telemetry.MaxToolLabels != 500 {
		t.Errorf("Telemetry = %+v", cfg.Telemetry)
	}
}
