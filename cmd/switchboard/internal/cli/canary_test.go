package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestCanary drives every command and failure path it can with a canary
// secret in a stdio server's env and an HTTP server's headers, and checks
// that no byte of stdout or stderr (where the logs go) carries it, in any
// spelling or in a 12-byte fragment.
func TestCanary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	canary := interop.NewCanary(t)
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	dir := t.TempDir()
	t.Chdir(dir) // no ./switchboard.toml of the developer's
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("SWITCHBOARD_CONFIG", "")
	t.Setenv("SWITCHBOARD_SECRETS_BACKEND", "file")
	t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)

	// An HTTP MCP endpoint that refuses, echoing the credentials it got in
	// its body and headers, as careless servers do.
	var sawAuth, sawKey bool
	unauth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization"), canary) {
			sawAuth = true
		}
		if r.Header.Get("X-Api-Key") == canary {
			sawKey = true
		}
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="bad token `+r.Header.Get("X-Api-Key")+`"`)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "unauthorized: Authorization=%q X-Api-Key=%s\n", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
	}))
	defer unauth.Close()
	// One that redirects to another loopback port with the credentials in the URL.
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, unauth.URL+"/?token="+url.QueryEscape(r.Header.Get("X-Api-Key")), http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()

	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	q := strconv.Quote
	stdio := write("stdio.toml", fmt.Sprintf(`
[[mcp_servers]]
id = "sec"
command = %s
args = ["-print-env"]
env = { TOKEN = "{{secrets.canary}}", WRAPPED = "pre-{{secrets.canary}}-post" }
`, q(fixture)))
	crash := write("crash.toml", fmt.Sprintf(`
[[mcp_servers]]
id = "boom"
command = %s
args = ["-print-env", "-crash-on-call"]
env = { TOKEN = "{{secrets.canary}}" }
`, q(fixture)))
	httpCfg := write("http.toml", fmt.Sprintf(`
[[mcp_servers]]
id = "web"
url = %s
allow_local_endpoint = true
headers = { Authorization = "Bearer {{secrets.canary}}", X-Api-Key = "{{secrets.canary}}" }
connect_timeout = "10s"

[[mcp_servers]]
id = "hop"
url = %s
allow_local_endpoint = true
headers = { X-Api-Key = "{{secrets.canary}}" }
connect_timeout = "10s"
optional = true
`, q(unauth.URL+"/mcp"), q(redirect.URL+"/mcp")))
	ws := write("ws.toml", fmt.Sprintf(`
[[mcp_servers]]
id = "wsock"
transport = "websocket"
url = %s
allow_local_endpoint = true
headers = { Authorization = "Bearer {{secrets.canary}}" }
connect_timeout = "10s"
`, q("ws"+strings.TrimPrefix(unauth.URL, "http")+"/ws")))
	// A bad URL (a placeholder where none is resolved) and a config with
	// a typo around a placeholder.
	bad := write("bad.toml", `
[[mcp_servers]]
id = "badurl"
url = "https://user:{{secrets.canary}}@mcp.example.com/mcp"

[[mcp_servers]]
id = "private"
url = "http://10.0.0.7:8080/mcp"
headers = { Authorization = "Bearer {{secrets.canary}}" }

[[mcp_servers]]
id = "argv"
command = "true"
args = ["--token", "{{secrets.canary}}"]
`)
	all := write("all.json", fmt.Sprintf(`{"mcpServers": {
  "sec": {"command": %s, "args": ["-print-env", "-crash-on-call"], "env": {"TOKEN": "{{secrets.canary}}"}}
}}`, q(fixture)))

	runs := [][]string{
		{"servers"}, {"servers", "--json"}, {"-vv", "servers"}, {"-vv", "servers", "--json"},
		{"tools"}, {"tools", "--json"}, {"-vv", "tools", "--json"},
		{"call", "mcp_sec_env", "--arg", "name=TOKEN"},
		{"call", "mcp_sec_env", "--arg", "name=TOKEN", "--json"},
		{"call", "mcp_sec_env", "--arg", "name=WRAPPED", "--json"},
		{"-vv", "call", "mcp_sec_env", "--args", `{"name":"SWITCHBOARD_SECRET_CANARY"}`, "--json"},
		{"call", "mcp_sec_echo", "--arg", "text=" + canary},
		{"call", "mcp_sec_echo", "--arg", "text=" + canary, "--json"},
		{"call", "mcp_sec_fail", "--json"},
		{"call", "mcp_sec_echo", "--arg", "nope=" + canary}, // invalid arguments
		{"call", "mcp_sec_nope"},
		{"resources", "--json"}, {"prompts", "--json"},
		{"read", "test://static/1", "--server", "sec", "--json"},
		{"prompt", "greet", "--arg", "name=" + canary, "--json"},
		{"validate"}, {"validate", "--json"},
	}
	type run struct {
		args           []string
		config         string
		code           int
		stdout, stderr string
	}
	var done []run
	do := func(config string, stdin string, args ...string) run {
		t.Helper()
		full := append([]string{"--config", config}, args...)
		if config == "" {
			full = args
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		code := cli.Main(ctx, full, strings.NewReader(stdin), &out, &errb)
		r := run{args: full, config: filepath.Base(config), code: code, stdout: out.String(), stderr: errb.String()}
		done = append(done, r)
		return r
	}
	for _, args := range runs {
		do(stdio, "", args...)
	}
	for _, args := range [][]string{
		{"call", "mcp_boom_echo", "--arg", "text=x"}, {"-vv", "call", "mcp_boom_echo", "--arg", "text=x", "--json"},
		{"servers", "--json"}, {"tools"},
	} {
		do(crash, "", args...)
	}
	for _, cfg := range []string{httpCfg, ws, all} {
		for _, args := range [][]string{{"servers"}, {"-vv", "servers", "--json"}, {"tools", "--json"}, {"-vv", "call", "mcp_web_x"}, {"call", "mcp_sec_echo", "--arg", "text=x", "--json"}} {
			do(cfg, "", args...)
		}
	}
	for _, args := range [][]string{{"validate"}, {"validate", "--json"}, {"servers", "--json"}, {"tools"}} {
		do(bad, "", args...)
	}
	// The secrets commands: a value set from stdin never comes back.
	do("", canary+"\n", "secrets", "set", "canary")
	do("", "", "secrets", "set", "canary", canary) // a value on argv is refused without echo
	do("", "", "secrets")
	do("", "", "secrets", "--json")
	do("", "", "secrets", "list")
	do("", "", "secrets", "list", "--json")
	// Now the file backend, not the environment, supplies the canary.
	t.Setenv("SWITCHBOARD_SECRET_CANARY", "")
	os.Unsetenv("SWITCHBOARD_SECRET_CANARY")
	r := do(stdio, "", "call", "mcp_sec_env", "--arg", "name=TOKEN", "--json")
	if !strings.Contains(r.stdout, `"set": true`) {
		t.Errorf("with the canary in the file store, env TOKEN was not set: %s%s", r.stdout, r.stderr)
	}
	do(stdio, "", "-vv", "servers", "--json")
	do(crash, "", "-vv", "call", "mcp_boom_echo", "--arg", "text=x")
	do("", "", "secrets", "rm", "canary")

	if !sawAuth || !sawKey {
		t.Errorf("the HTTP server never got the canary (Authorization %v, X-Api-Key %v): the test proves nothing for headers", sawAuth, sawKey)
	}
	// The paths must have been exercised, not short-circuited.
	mustHave := map[string]bool{"[REDACTED]": false, "unauthorized": false, "crash": false}
	for _, r := range done {
		for stream, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			for k := range mustHave {
				if strings.Contains(strings.ToLower(text), strings.ToLower(k)) {
					mustHave[k] = true
				}
			}
			for _, leak := range interop.Leaks(text, canary) {
				t.Errorf("switchboard %s (exit %d): %s holds %s", strings.Join(r.args, " "), r.code, stream, leak)
			}
		}
	}
	for k, seen := range mustHave {
		if !seen {
			t.Errorf("no output mentions %q: a failure path was not exercised", k)
		}
	}
	if testing.Verbose() {
		for _, r := range done {
			t.Logf("switchboard %s → exit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
		}
	}
}

// TestCanaryEnv: a value read through {{env.NAME}} is kept out of output
// like a secret (the README promises that no resolved value is printed):
// a server that prints its environment, echoes the value, crashes with it
// on stderr; an HTTP server that echoes the header.
func TestCanaryEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	canary := interop.NewCanary(t)
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("SWITCHBOARD_CONFIG", "")
	t.Setenv("SB_CANARY_TOKEN", canary)

	var sawKey bool
	unauth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawKey = sawKey || r.Header.Get("X-Api-Key") == canary
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "unauthorized: X-Api-Key=%s\n", r.Header.Get("X-Api-Key"))
	}))
	defer unauth.Close()
	cfg := filepath.Join(dir, "env.toml")
	q := strconv.Quote
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
[[mcp_servers]]
id = "sec"
command = %s
args = ["-print-env", "-leak", "TOKEN"]
env = { TOKEN = "{{env.SB_CANARY_TOKEN}}" }

[[mcp_servers]]
id = "boom"
command = %s
args = ["-print-env", "-crash-on-call"]
env = { TOKEN = "pre-{{env.SB_CANARY_TOKEN}}-post" }

[[mcp_servers]]
id = "web"
url = %s
allow_local_endpoint = true
headers = { X-Api-Key = "{{env.SB_CANARY_TOKEN}}" }
connect_timeout = "10s"
optional = true
`, q(fixture), q(fixture), q(unauth.URL+"/mcp"))), 0o600); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, args := range [][]string{
		{"servers"}, {"-vv", "servers", "--json"}, {"-vv", "tools", "--json"},
		{"call", "mcp_sec_env", "--arg", "name=TOKEN", "--json"},
		{"call", "mcp_sec_leak", "--json"}, {"-vv", "call", "mcp_sec_leak_error"},
		{"-vv", "call", "mcp_boom_echo", "--arg", "text=x"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		var out, errb bytes.Buffer
		code := cli.Main(ctx, append([]string{"--config", cfg}, args...), strings.NewReader(""), &out, &errb)
		cancel()
		for stream, text := range map[string]string{"stdout": out.String(), "stderr": errb.String()} {
			for _, leak := range interop.Leaks(text, canary) {
				t.Errorf("switchboard %s (exit %d): %s holds %s", strings.Join(args, " "), code, stream, leak)
			}
			all.WriteString(text)
		}
	}
	if !sawKey {
		t.Errorf("the HTTP server never got the value: the test proves nothing for headers")
	}
	for _, want := range []string{`"set": true`, "[REDACTED]", "crash"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no output holds %q: a path was not exercised", want)
		}
	}
}
