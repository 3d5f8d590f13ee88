package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestCanaryImport: a canary written out in another client's file (in an
// env value, an Authorization header, an argument, a URL's query) and on
// add's command line never reaches stdout, stderr, the config file or its
// backup, in any spelling, whatever import and add are asked; with
// --move-secrets it goes to the secret store and nowhere else.
func TestCanaryImport(t *testing.T) {
	canary := interop.NewCanary(t)
	dir := t.TempDir()
	t.Chdir(dir)
	xdg := filepath.Join(dir, "xdg")
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("SWITCHBOARD_CONFIG", "")
	t.Setenv("SWITCHBOARD_SECRETS_BACKEND", "file")

	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	claude := filepath.Join(xdg, "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(claude), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claude, []byte(`{"mcpServers": {
  "env": {"command": "srv", "env": {"TOKEN": `+q(canary)+`}},
  "hdr": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": `+q("Bearer "+canary)+`}},
  "arg": {"command": "srv", "args": ["--token", `+q(canary)+`]},
  "query": {"url": `+q("https://mcp.example.com/mcp?api_key="+url.QueryEscape(canary))+`},
  "clean": {"command": "srv"}
}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	type run struct {
		args           []string
		code           int
		stdout, stderr string
	}
	var done []run
	do := func(args ...string) run {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		code := cli.Main(ctx, args, strings.NewReader(""), &out, &errb)
		r := run{args: args, code: code, stdout: out.String(), stderr: errb.String()}
		done = append(done, r)
		return r
	}
	for _, args := range [][]string{
		{"import", "--dry-run"}, {"import", "--dry-run", "--json"}, {"-vv", "import"}, {"import", "--json"},
		{"import", "--move-secrets", "--dry-run", "--json"}, {"import", "--move-secrets"}, {"-vv", "import", "--move-secrets", "--json"},
		{"import", "--file", claude, "--rename", "env=env2", "--only", "env"},
		{"add", "a", "--env", "TOKEN=" + canary, "--", "srv"},
		{"add", "b", "https://mcp.example.com/mcp", "--header", "Authorization: Bearer " + canary, "--json"},
		{"add", "c", "--", "srv", "--token", canary},
		{"add", "d", "https://mcp.example.com/mcp?api_key=" + url.QueryEscape(canary), "--dry-run"},
		{"add", "e", "--env", "TOKEN=" + canary, "--dry-run", "--json", "--", "srv"},
		{"secrets", "list"},
	} {
		do(args...)
	}
	r := do("secrets", "list")
	if !strings.Contains(r.stdout, "env_token") || !strings.Contains(r.stdout, "hdr_authorization") {
		t.Errorf("the moved credentials are not in the secret store: %q", r.stdout)
	}
	seen := map[string]bool{"skipped (secret)": false, "→ {{secrets.": false, "look like one": false}
	for _, r := range done {
		for stream, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			for k := range seen {
				seen[k] = seen[k] || strings.Contains(text, k)
			}
			for _, leak := range interop.Leaks(text, canary) {
				t.Errorf("switchboard %s (exit %d): %s holds %s", strings.Join(r.args, " "), r.code, stream, leak)
			}
		}
	}
	for k, ok := range seen {
		if !ok {
			t.Errorf("no output mentions %q: a path was not exercised", k)
		}
	}
	files, _ := filepath.Glob(filepath.Join(xdg, "switchboard", "config.toml*"))
	if len(files) < 2 {
		t.Fatalf("import wrote %v, want the config and its backup", files)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, leak := range interop.Leaks(string(b), canary) {
			t.Errorf("%s holds %s", f, leak)
		}
	}
	if testing.Verbose() {
		for _, r := range done {
			t.Logf("switchboard %s → exit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
		}
	}
}
