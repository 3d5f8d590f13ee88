package replicatest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testhaproxy"
)

// TestClientLimitBehindBalancer (issue 31): behind HAProxy every
// connection comes from the balancer, and without [gateway]
// trusted_proxies every client shares one max_client_sessions. Trusting
// the balancer, the limit applies per client: named by X-Forwarded-For
// (examples/haproxy/haproxy.cfg as shipped, `option forwardfor`) or by the
// PROXY protocol (its server lines with send-proxy-v2 or send-proxy, and
// proxy_protocol = true). The clients are two loopback addresses,
// 127.0.0.2 and 127.0.0.3, through one HAProxy to one serve allowing each
// client 2 sessions.
func TestClientLimitBehindBalancer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gateway string // more [gateway] keys
		server  string // appended to the HAProxy config's server lines
		shared  bool   // every client is the balancer
	}{
		{name: "not trusted", shared: true},
		{name: "X-Forwarded-For", gateway: `trusted_proxies = ["127.0.0.1"]`},
		// Every connection from a trusted proxy must carry the header, its
		// health checks too (check-send-proxy). HAProxy connects from
		// 127.0.0.4 (source), the one address trusted: the test's own
		// readiness poll, from 127.0.0.1, is any client's, served as it is.
		{name: "PROXY protocol v2", gateway: "trusted_proxies = [\"127.0.0.4\"]\nproxy_protocol = true", server: " send-proxy-v2 check-send-proxy source 127.0.0.4"},
		{name: "PROXY protocol v1", gateway: "trusted_proxies = [\"127.0.0.4\"]\nproxy_protocol = true", server: " send-proxy check-send-proxy source 127.0.0.4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startServe(t, "max_sessions = 16\nmax_client_sessions = 2\n"+tc.gateway)
			cfg := shippedConfig(t, []string{strings.TrimPrefix(r.url, "http://")})
			if tc.server != "" {
				var lines []string
				for _, l := range strings.Split(cfg, "\n") {
					if strings.HasPrefix(strings.TrimSpace(l), "server ") {
						l += tc.server
					}
					lines = append(lines, l)
				}
				cfg = strings.Join(lines, "\n")
			}
			lb := testhaproxy.Start(t, cfg)
			a, b := clientAt(t, "127.0.0.2"), clientAt(t, "127.0.0.3")

			busySession(t, a, lb.URL)
			busySession(t, a, lb.URL)
			// A's third, both of its own busy: refused, and a claim of
			// another address in its own X-Forwarded-For does not help
			// (HAProxy appends the address it saw; the walk from the
			// right stops there).
			who := "127.0.0.2"
			if tc.shared {
				who = "127.0.0.1" // HAProxy's
			}
			for _, forged := range []string{"", "198.51.100.9"} {
				status, body := initializeAt(t, a, lb.URL, forged)
				if status != http.StatusTooManyRequests || !strings.Contains(body, "this client ("+who+")") {
					t.Errorf("client A's third session (X-Forwarded-For %q): %d %s; want 429 naming client %s", forged, status, body, who)
				}
			}
			status, body := initializeAt(t, b, lb.URL, "")
			switch {
			case tc.shared && status != http.StatusTooManyRequests:
				t.Errorf("client B, the balancer untrusted: %d %s; want 429, every client sharing the balancer's limit", status, body)
			case !tc.shared && status != http.StatusOK:
				t.Errorf("client B's first session: %d %s; want 200, A's limit not B's", status, body)
			}
			if !tc.shared {
				busySession(t, b, lb.URL)
				busySession(t, b, lb.URL)
			}
			if t.Failed() {
				t.Logf("haproxy's output:\n%s", lb.Output())
			}
		})
	}
}

// startServe starts one `switchboard serve` on loopback (its state in
// SQLite: one replica needs no PostgreSQL) with gateway as more keys of
// its [gateway] table, and waits until it is ready.
func startServe(t *testing.T, gateway string) *replica {
	t.Helper()
	c := &cluster{
		bin:     interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard"),
		fixture: interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver"),
		dir:     t.TempDir(),
	}
	write(t, filepath.Join(c.dir, "switchboard.toml"), fmt.Sprintf(`[gateway]
auth_token = "{{env.SB_TOKEN}}"
%s

[[mcp_servers]]
id = "fx"
command = %q
`, gateway, c.fixture))
	c.startReplicas(t, 1)
	return c.replicas[0]
}

// clientAt is an HTTP client whose connections come from the loopback
// address local (Linux routes all of 127.0.0.0/8 to lo).
func clientAt(t *testing.T, local string) *http.Client {
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// initializeAt sends a 2025-11-25 initialize to base's /mcp through hc,
// with X-Forwarded-For xff when not empty, and returns the status and
// body (up to its first SSE message, for a stream).
func initializeAt(t *testing.T, hc *http.Client, base, xff string) (int, string) {
	status, body, _ := initializeSession(t, hc, base, xff)
	return status, body
}

// initializeSession is initializeAt, with the new session's id.
func initializeSession(t *testing.T, hc *http.Client, base, xff string) (int, string, string) {
	t.Helper()
	status, body, sid := mcpPost(t, hc, base, "", xff, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"replicatest","version":"1"}}}`)
	return status, body, sid
}

// mcpPost posts body to base's /mcp in session sid ("" for none) and
// returns the answer's status, its body up to its first message, and its
// Mcp-Session-Id.
func mcpPost(t *testing.T, hc *http.Client, base, sid, xff, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// An SSE answer's body ends with the stream; its first message is
	// the answer.
	var b strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(b.String(), "\"jsonrpc\"") || (strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && !strings.Contains(b.String(), "}\n\n")) {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String(), resp.Header.Get("Mcp-Session-Id")
}

// busySession opens a session through hc and its GET stream, which keeps
// it busy (never the idlest to close for room) until the test ends.
func busySession(t *testing.T, hc *http.Client, base string) {
	t.Helper()
	status, body, sid := initializeSession(t, hc, base, "")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q: %s", status, sid, body)
	}
	if status, body, _ := mcpPost(t, hc, base, sid, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", status, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("GET stream of %s: %d %s", sid, resp.StatusCode, b)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
}
