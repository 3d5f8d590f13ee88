package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/telemetry"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// TestHostMetrics: the host watcher counts a server's restart (its child
// killed) and its circuit breaker opening (five timeouts in a row), by
// server, and records the upstream session the kill ended, as lost.
func TestHostMetrics(t *testing.T) {
	bin := interop.Build(t, fixturePkg)
	tel, err := telemetry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	hung := config.Server{ID: "hung", Transport: config.TransportStdio, Command: bin, Args: []string{"-hang"}, Timeout: 50 * time.Millisecond}
	fx := config.Server{ID: "fx", Transport: config.TransportStdio, Command: bin}
	h, err := host.New([]config.Server{fx, hung}, &host.Options{ClientMiddleware: tel.ClientMiddleware})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tel.Watch(h) // before the start: the watcher sees it
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}

	for i := range 5 {
		if _, err := h.CallTool(ctx, "mcp_hung_echo", json.RawMessage(`{"text":"x"}`), nil); !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("call %d: %v, want a timeout", i, err)
		}
	}
	var pid int
	for _, st := range h.Servers() {
		if st.ID == "fx" {
			pid = st.PID
		}
	}
	if pid == 0 {
		t.Fatal("no pid for fx")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	want := []struct {
		fam    string
		labels map[string]string
		count  bool
	}{
		{"switchboard_server_circuit_opens_total", map[string]string{"switchboard_server": "hung"}, false},
		{"switchboard_server_restarts_total", map[string]string{"switchboard_server": "fx"}, false},
		{"mcp_client_session_duration_seconds", map[string]string{"switchboard_server": "fx", "error_type": "connection_lost"}, true},
	}
	// The watcher reads the host's events on its own goroutine: poll the
	// scrape, bounded.
	wait.For(t, "every series to be 1", func() (string, bool) {
		fams := families(t, tel)
		for _, w := range want {
			v, n, ok := series(fams[w.fam], w.labels)
			if w.count {
				v = float64(n)
			}
			if !ok || v != 1 {
				return w.fam + " is not", false
			}
		}
		return "", true
	})
	if _, _, ok := series(families(t, tel)["switchboard_server_restarts_total"], map[string]string{"switchboard_server": "hung"}); ok {
		t.Error("a restart counted for hung, which did not restart")
	}
}
