package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanField: a server's scan action, in TOML and in an mcpServers
// entry; a bad one is refused naming the field.
func TestScanField(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.toml")
	good := `[[mcp_servers]]
id = "a"
command = "x"
scan = "drop"

[[mcp_servers]]
id = "b"
command = "x"
`
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Scan; got != ScanDrop {
		t.Errorf("a scan = %q, want drop", got)
	}
	if got := cfg.Servers[1].Scan; got != "" {
		t.Errorf("b scan = %q, want \"\" (warn)", got)
	}

	js := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(js, []byte(`{"mcpServers": {"c": {"command": "x", "scan": "hold"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = LoadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Scan; got != ScanHold {
		t.Errorf("c scan = %q, want hold", got)
	}

	bad := `[[mcp_servers]]
id = "d"
command = "x"
scan = "block"
`
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(file)
	if err == nil || !strings.Contains(err.Error(), `:4: mcp_servers[0].scan: invalid scan "block": want warn, hold or drop`) {
		t.Errorf("LoadFile(scan = \"block\") = %v, want the field named", err)
	}
}

// TestPinField: a server's pin setting, in TOML and in an mcpServers entry;
// a bad one is refused naming the field.
func TestPinField(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.toml")
	if err := os.WriteFile(file, []byte("[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\npin = \"approve\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Pin; got != PinApprove {
		t.Errorf("a pin = %q, want approve", got)
	}
	js := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(js, []byte(`{"mcpServers": {"c": {"command": "x", "pin": "first-use"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = LoadFile(js); err != nil || cfg.Servers[0].Pin != PinFirstUse {
		t.Errorf("mcpServers pin: %v, %+v", err, cfg)
	}
	if err := os.WriteFile(file, []byte("[[mcp_servers]]\nid = \"d\"\ncommand = \"x\"\npin = \"always\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(file)
	if err == nil || !strings.Contains(err.Error(), `:4: mcp_servers[0].pin: invalid pin "always": want off, first-use or approve`) {
		t.Errorf("LoadFile(pin = \"always\") = %v, want the field named", err)
	}
}
