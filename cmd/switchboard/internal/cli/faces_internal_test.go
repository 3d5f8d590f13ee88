package cli

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestFacesAgree: the REST API and the web UI answer the same failure of
// the same operation with the same status, the one of its kind in the
// daemon's table (daemon.StatusOf): operations both faces offer, on a
// server that answers, one that is not there, one of the configuration
// (read-only), one that never finishes its handshake, and a tool call that
// times out (504 in the API; 422 in the UI before the one table, whose
// server operations said 502 for a timeout).
func TestFacesAgree(t *testing.T) {
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	base, _, _ := serveConfig(t, "127.0.0.1:0", &config.Config{Servers: []config.Server{
		{ID: "fx", Command: fixture, Timeout: 200 * time.Millisecond},
		{ID: "hung", Command: fixture, Args: []string{"-hang-init"}, ConnectTimeout: 300 * time.Millisecond, Optional: true},
	}}, nil)
	do := func(method, path, ctype, body string) int {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Switchboard-CSRF", "1")
		req.Header.Set("Content-Type", ctype)
		resp, err := guardClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	const form = "application/x-www-form-urlencoded"
	for _, tc := range []struct {
		name                     string
		apiMethod, apiPath, body string
		uiPath, uiForm           string
		want                     daemon.Kind
	}{
		{"restart an unknown server", "POST", "/api/v1/servers/nope/restart", "", "/servers/nope/restart", "", daemon.KindUnknownServer},
		{"refresh an unknown server", "POST", "/api/v1/servers/nope/refresh", "", "/servers/nope/refresh", "", daemon.KindUnknownServer},
		{"delete a configured server", "DELETE", "/api/v1/servers/fx", "", "/servers/fx/delete", "", daemon.KindReadOnly},
		{"disable a configured server", "POST", "/api/v1/servers/fx/disable", "", "/servers/fx/disable", "", daemon.KindReadOnly},
		{"refresh a server not connected", "POST", "/api/v1/servers/hung/refresh", "", "/servers/hung/refresh", "", daemon.KindUnavailable},
		{"call a tool that times out", "POST", "/api/v1/tools/mcp_fx_slow/call", `{"arguments":{"ms":5000}}`, "/tools/mcp_fx_slow/call", "arg-0=5000", daemon.KindTimeout},
	} {
		ctype := ""
		if tc.body != "" {
			ctype = "application/json"
		}
		api, ui := do(tc.apiMethod, tc.apiPath, ctype, tc.body), do("POST", tc.uiPath, form, tc.uiForm)
		if api != ui || api != tc.want.Status() {
			t.Errorf("%s: the API answered %d, the UI %d; want %d (%s) from both", tc.name, api, ui, tc.want.Status(), tc.want)
		}
	}
}
