package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestServerHistory: GET /servers/{id}/history answers a server's recent
// stderr, its secret redacted (startAPI fails the test if any answer
// holds it); 404 for an unknown server.
func TestServerHistory(t *testing.T) {
	bin := interop.Build(t, fixturePkg)
	a := startAPIWith(t, func(o *daemon.Options) {
		o.Config.Servers = append(o.Config.Servers, config.Server{ID: "p", Transport: config.TransportStdio, Command: bin,
			Args: []string{"-print-env"}, Env: map[string]string{"CANARY": "{{env.SB_API_CANARY}}"}})
	})
	var hs struct {
		Server string `json:"server"`
		Stderr []struct {
			Line string `json:"line"`
		} `json:"stderr"`
		Incidents []any `json:"incidents"`
	}
	wait.For(t, "p's stderr in its history", func() (string, bool) {
		code, _, body := a.do("GET", "/api/v1/servers/p/history", "")
		if code != 200 || json.Unmarshal(body, &hs) != nil {
			t.Fatalf("GET history: %d %s", code, body)
		}
		for _, l := range hs.Stderr {
			if l.Line == "CANARY=[REDACTED]" {
				return string(body), true
			}
		}
		return string(body), false
	})
	if hs.Server != "p" || hs.Incidents == nil {
		t.Errorf("history of p: server %q, incidents %v (want [], not null)", hs.Server, hs.Incidents)
	}
	if code, _, body := a.do("GET", "/api/v1/servers/nope/history", ""); code != 404 || !strings.Contains(string(body), "nope") {
		t.Errorf("GET history of an unknown server: %d %s", code, body)
	}
}
