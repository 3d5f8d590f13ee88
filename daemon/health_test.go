package daemon_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// probe GETs path on the daemon with a Host a balancer might send, no
// token, and returns the status and body.
func probe(t *testing.T, url, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "10.1.2.3:8080"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHealthProbes: /healthz and /readyz answer a balancer (no token, any
// Host) while /mcp keeps its token; /readyz is 503 while a required server
// is not up and when the state database does not answer, 200 once ready;
// the answers say nothing but "ok" or "not ready".
func TestHealthProbes(t *testing.T) {
	t.Setenv("SB_PROBE_TOKEN", "probe-token-0123456789")
	check := func(url, path string, code int, body string) {
		t.Helper()
		if c, b := probe(t, url, path); c != code || b != body {
			t.Errorf("GET %s = %d %q, want %d %q", path, c, b, code, body)
		}
	}
	// One daemon at a time: each subtest's cleanup stops its daemon and
	// counts goroutines, which another daemon still starting would skew.
	t.Run("not ready", func(t *testing.T) {
		hang := fixture(t, "hanging", "-hang-init")
		hang.ConnectTimeout = time.Minute
		cfg := &config.Config{Servers: []config.Server{hang}}
		cfg.Gateway.AuthToken = "{{env.SB_PROBE_TOKEN}}"
		r := run(t, cfg, openStore(t), nil)
		check(r.url, "/healthz", 200, "ok\n")
		check(r.url, "/readyz", 503, "not ready\n")
		if c, _ := probe(t, r.url, "/mcp"); c == 200 {
			t.Errorf("GET /mcp without the token = %d", c)
		}
	})
	t.Run("ready", func(t *testing.T) {
		st := openStore(t)
		cfg := &config.Config{Servers: []config.Server{fixture(t, "a")}}
		cfg.Gateway.AuthToken = "{{env.SB_PROBE_TOKEN}}"
		r := run(t, cfg, st, nil)
		r.awaitReady(t)
		check(r.url, "/readyz", 200, "ok\n")
		check(r.url, "/healthz", 200, "ok\n")
		if c, _ := probe(t, r.url, "/readyz?x=1"); c != 200 {
			t.Errorf("GET /readyz?x=1 = %d", c)
		}
		st.Close() // the database is gone
		check(r.url, "/readyz", 503, "not ready\n")
		check(r.url, "/healthz", 200, "ok\n")
	})
}

// TestShutdownDrain: told to stop, a daemon with [gateway] shutdown_drain
// answers /readyz 503 at once and serves on as before (a session's call,
// a new client's) for the drain, so that a load balancer takes it out of
// rotation before its listener closes; then it shuts down.
func TestShutdownDrain(t *testing.T) {
	const drain = 8 * time.Second
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	cfg.Gateway.ShutdownDrain = drain
	r := run(t, cfg, openStore(t), nil)
	r.awaitReady(t)
	if c, _ := probe(t, r.url, "/readyz"); c != http.StatusOK {
		t.Fatalf("/readyz once ready: %d", c)
	}
	cs := connect(t, r.url)

	stopped := time.Now()
	r.stop()
	wait.For(t, "/readyz to answer 503 after the stop", func() (int, bool) {
		c, _ := probe(t, r.url, "/readyz")
		return c, c == http.StatusServiceUnavailable
	})
	select {
	case err := <-r.done:
		t.Fatalf("Run returned %v, %v after the stop, before its %v drain", err, time.Since(stopped), drain)
	default:
	}
	for name, s := range map[string]*mcp.ClientSession{"the open session": cs, "a new client": connect(t, r.url)} {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "draining"}})
		if err != nil || res.IsError {
			t.Errorf("%s's call while draining (%v after the stop): %+v, %v", name, time.Since(stopped), res, err)
		}
	}
	r.shutdown(t)
	if d := time.Since(stopped); d < drain {
		t.Errorf("Run returned %v after the stop; want the %v drain first", d, drain)
	}
}
