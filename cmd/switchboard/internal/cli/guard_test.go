package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
)

// TestServeOAuthManagement: `serve` beyond loopback with [gateway.auth]
// and no auth_token. An anonymous POST /api/v1/servers with command
// /bin/sh is refused (401) and nothing runs; so are the rest of the
// management faces (the API's calls and events, /metrics, the web UI:
// a page leads to /login). A token good for /mcp but without the admin
// scope is refused there (403, naming admin_scope). A token with it sees
// on the API only what the policy grants it, as on /mcp: the other
// server's tools are neither listed nor callable, and asking for them by
// name is answered as for a name that does not exist. The web UI stays
// the owner's.
func TestServeOAuthManagement(t *testing.T) {
	dir := isolate(t)
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const resource = "http://switchboard.test/mcp"
	bin := interop.Build(t, fixturePkg)
	cfg := writeConfig(t, dir, `[[mcp_servers]]
id = "fx"
command = "`+bin+`"

[[mcp_servers]]
id = "hidden"
command = "`+bin+`"

[gateway.auth]
issuer = "`+as.Issuer+`"
resource = "`+resource+`"
allow_local_issuer = true
admin_scope = "switchboard:admin"

[[gateway.auth.policy]]
servers = ["fx"]
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, code, stderr := startServe(t, ctx, "--config", cfg, "serve", "--listen", "0.0.0.0:0")
	if !strings.HasPrefix(base, "http://0.0.0.0:") && !strings.HasPrefix(base, "http://[::]:") {
		t.Fatalf("serving at %s, want beyond loopback", base)
	}
	now := time.Now()
	mint := func(scope string) string {
		tok, err := as.Mint(jwt.MapClaims{"iss": as.Issuer, "aud": resource, "sub": "alice", "scope": scope, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + tok
	}
	user, admin := mint("mcp"), mint("mcp switchboard:admin")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	do := func(method, path, auth, body string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Switchboard-CSRF", "1")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b []byte
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ = io.ReadAll(resp.Body)
		}
		return resp.StatusCode, resp.Header, string(b)
	}

	ran := filepath.Join(dir, "the-shell-ran")
	shell, _ := json.Marshal(map[string]any{"id": "sh", "command": "/bin/sh", "args": []string{"-c", "touch " + ran}})
	status, hdr, body := do("POST", "/api/v1/servers", "", string(shell))
	if status != http.StatusUnauthorized || hdr.Get("Content-Type") != "application/problem+json" ||
		!strings.HasPrefix(hdr.Get("WWW-Authenticate"), `Bearer resource_metadata="http://switchboard.test/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("an anonymous POST /api/v1/servers with /bin/sh: %d %q %s\nwant a 401 problem pointing at the metadata", status, hdr.Get("WWW-Authenticate"), body)
	}
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/api/v1/servers", ""},
		{"POST", "/api/v1/tools/mcp_hidden_echo/call", `{"arguments":{"text":"x"}}`},
		{"GET", "/api/v1/events", ""},
		{"GET", "/metrics", ""},
		{"POST", "/servers", ""},
	} {
		if status, _, body := do(rq.method, rq.path, "", rq.body); status != http.StatusUnauthorized {
			t.Errorf("anonymous %s %s: %d %s, want 401", rq.method, rq.path, status, body)
		}
	}
	if status, hdr, _ := do("GET", "/servers", "", ""); status != http.StatusSeeOther || hdr.Get("Location") != "/login" {
		t.Errorf("anonymous GET /servers: %d Location %q, want 303 to /login", status, hdr.Get("Location"))
	}
	for _, p := range []string{"/healthz", "/.well-known/oauth-protected-resource/mcp", "/login", "/static/style.css"} {
		if status, _, _ := do("GET", p, "", ""); status != http.StatusOK {
			t.Errorf("anonymous GET %s: %d, want 200 (open)", p, status)
		}
	}

	// Good for /mcp, not for the management faces.
	status, _, body = do("POST", "/api/v1/servers", user, string(shell))
	if status != http.StatusForbidden || !strings.Contains(body, "admin_scope") {
		t.Errorf("POST /api/v1/servers with a token without the admin scope: %d %s, want 403 naming admin_scope", status, body)
	}
	for _, p := range []string{"/api/v1/tools", "/metrics"} {
		if status, _, body := do("GET", p, user, ""); status != http.StatusForbidden {
			t.Errorf("GET %s with a token without the admin scope: %d %s, want 403", p, status, body)
		}
	}

	// The admin scope: what the policy grants, nothing else.
	if status, _, body := do("GET", "/api/v1/servers/sh", admin, ""); status != http.StatusNotFound {
		t.Errorf("the server posted anonymously: %d %s, want none", status, body)
	}
	var tools struct {
		Items []struct{ Name, Server string } `json:"items"`
	}
	status, _, body = do("GET", "/api/v1/tools", admin, "")
	if status != http.StatusOK || json.Unmarshal([]byte(body), &tools) != nil || len(tools.Items) == 0 {
		t.Fatalf("GET /api/v1/tools as admin: %d %s", status, body)
	}
	for _, tl := range tools.Items {
		if tl.Server != "fx" {
			t.Errorf("GET /api/v1/tools lists %s of %s; the policy grants fx only", tl.Name, tl.Server)
		}
	}
	var servers struct {
		Items []struct{ ID string } `json:"items"`
	}
	status, _, body = do("GET", "/api/v1/servers", admin, "")
	if status != http.StatusOK || json.Unmarshal([]byte(body), &servers) != nil || len(servers.Items) != 1 || servers.Items[0].ID != "fx" {
		t.Errorf("GET /api/v1/servers as admin: %d %s, want fx alone", status, body)
	}
	if status, _, body := do("POST", "/api/v1/tools/mcp_fx_echo/call", admin, `{"arguments":{"text":"granted"}}`); status != http.StatusOK || !strings.Contains(body, "granted") {
		t.Errorf("calling fx's echo as admin: %d %s", status, body)
	}
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/api/v1/tools/mcp_hidden_echo", ""},
		{"POST", "/api/v1/tools/mcp_hidden_echo/call", `{"arguments":{"text":"x"}}`},
		{"GET", "/api/v1/tools?server=hidden", ""},
		{"GET", "/api/v1/servers/hidden", ""},
		{"POST", "/api/v1/servers/hidden/restart", ""},
		{"GET", "/api/v1/prompts?server=hidden", ""},
		{"POST", "/api/v1/resources/read", `{"server":"hidden","uri":"fixture://x"}`},
		{"GET", "/api/v1/tools?server=nosuch", ""},
	} {
		status, _, body := do(rq.method, rq.path, admin, rq.body)
		if status != http.StatusNotFound || strings.Contains(body, "configured:") || strings.Contains(body, `"fx"`) {
			t.Errorf("%s %s as admin: %d %s, want a 404 that names no other server", rq.method, rq.path, status, body)
		}
	}
	if status, _, body := do("GET", "/servers", admin, ""); status != http.StatusForbidden {
		t.Errorf("the web UI with an admin token: %d %s, want 403 (the owner's)", status, body)
	}

	cancel()
	select {
	case c := <-code:
		if c != cli.ExitOK {
			t.Errorf("serve exited %d\n%s", c, stderr())
		}
	case <-time.After(testTimeout):
		t.Fatalf("serve did not return after cancel\n%s", stderr())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the shell posted anonymously ran")
	}
}
