package gateway_test

// The endpoint under abuse (issue 11, §2): clients that trickle their
// bodies, flood sessions, or send what a session-less request may not.
// Every test here speaks HTTP by hand over a real loopback connection, so
// that it can misbehave at the byte level.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// rawConn dials the gateway at base and writes a request head: method,
// target, the given headers, and a Content-Length of length when it is not
// negative. No body follows; the caller writes it (or not).
func rawConn(t *testing.T, base, method, target string, length int, headers ...string) net.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, u.Host)
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedWithin reads c until the server closes it, and returns how long
// that took and what was read; an error says it was still open after limit.
// (It may run on a goroutine of its own: it does not fail the test.)
func closedWithin(c net.Conn, limit time.Duration) (time.Duration, string, error) {
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	got, err := io.ReadAll(c)
	took := time.Since(start)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return took, string(got), fmt.Errorf("the connection is still open after %s (read so far: %q)", limit, got)
	}
	return took, string(got), nil
}

const jsonHeaders = "Content-Type: application/json\r\nAccept: application/json, text/event-stream"

// TestRefusedBodyNotRead: a client without the token is answered 401, and
// its connection closed, without the gateway waiting for (or reading) the
// body it announced: it never sends one. (net/http would otherwise read up
// to 256 KiB of an unread body after the handler to reuse the connection.)
func TestRefusedBodyNotRead(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{Guard: guard.Options{AuthToken: "s3cret-token"}})
	for _, tc := range []struct{ name, target, header string }{
		{"no token", "/mcp", ""},
		{"no token, stateless", "/mcp", "MCP-Protocol-Version: 2026-07-28"},
		{"no token, legacy SSE", "/message?sessionid=x", ""},
		{"foreign origin", "/mcp", "Authorization: Bearer s3cret-token\r\nOrigin: https://evil.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := []string{jsonHeaders}
			if tc.header != "" {
				headers = append(headers, tc.header)
			}
			c := rawConn(t, base, "POST", tc.target, 100_000, headers...)
			_, got, err := closedWithin(c, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
			if err != nil {
				t.Fatalf("reading the answer %q: %v", got, err)
			}
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
				t.Errorf("status %d, want 401 or 403", resp.StatusCode)
			}
		})
	}
}

// TestSlowBody: a client that sends its body a byte at a time is cut off
// after about BodyTimeout on every endpoint that reads a body, many at
// once; a large body that arrives at a modest but steady rate is read
// whole even though it takes longer than BodyTimeout.
func TestSlowBody(t *testing.T) {
	const timeout = 500 * time.Millisecond
	const bound = timeout + 2*time.Second // the close itself, on a busy machine
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{Guard: guard.Options{AuthToken: "s3cret-token", BodyTimeout: timeout}})
	auth := "Authorization: Bearer s3cret-token"

	// A legacy SSE session, to trickle into its message endpoint.
	sse := rawConn(t, base, "GET", "/sse", -1, auth, "Accept: text/event-stream")
	br := bufio.NewReader(sse)
	var endpoint string
	for endpoint == "" {
		sse.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the SSE stream: %v", err)
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && strings.Contains(rest, "sessionid=") {
			endpoint = rest
		}
	}

	targets := []struct{ name, target, header string }{
		{"streamable, new session", "/mcp", ""},
		{"streamable, stateless", "/mcp", "MCP-Protocol-Version: 2026-07-28"},
		{"legacy SSE message", endpoint, ""},
	}
	const perTarget = 20
	var wg sync.WaitGroup
	for _, tc := range targets {
		for i := range perTarget {
			headers := []string{jsonHeaders, auth}
			if tc.header != "" {
				headers = append(headers, tc.header)
			}
			c := rawConn(t, base, "POST", tc.target, 100_000, headers...)
			wg.Go(func() {
				// One byte every 100 ms until the server hangs up.
				stop := make(chan struct{})
				go func() {
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					for {
						if _, err := c.Write([]byte("{")); err != nil {
							return
						}
						select {
						case <-tick.C:
						case <-stop:
							return
						}
					}
				}()
				defer close(stop)
				took, _, err := closedWithin(c, 10*time.Second)
				if err != nil {
					t.Errorf("%s #%d: %v", tc.name, i, err)
				} else if took > bound {
					t.Errorf("%s #%d: a trickling body held its connection %s, want at most %s", tc.name, i, took, bound)
				}
			})
		}
	}
	wg.Wait()

	// A 192 KiB initialize in six slices 200 ms apart: 1.2 s, longer than
	// BodyTimeout, at 160 KiB/s, well above MinBodyRate.
	pad := strings.Repeat("x", 192<<10)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow-but-steady","version":"1"},"_meta":{"pad":"` + pad + `"}}}`
	c := rawConn(t, base, "POST", "/mcp", len(body), jsonHeaders, auth)
	for i := range 6 {
		part := body[i*len(body)/6 : (i+1)*len(body)/6]
		if _, err := io.WriteString(c, part); err != nil {
			t.Fatalf("writing slice %d: %v", i, err)
		}
		time.Sleep(200 * time.Millisecond) // the misbehaviour under test: a slow sender
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to a steady large body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("a steady large body: status %d, session %q; want 200 and a session", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
}

// post sends body to base+"/mcp" as Streamable HTTP does, with the given
// session (if any) and extra header pairs, and returns the answer, its body
// read (up to the first SSE event's end for a stream).
func post(t *testing.T, hc *http.Client, base, session, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	br := bufio.NewReader(resp.Body)
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	message := false
	for {
		line, err := br.ReadString('\n')
		b.WriteString(line)
		message = message || strings.HasPrefix(line, "data: {")
		// A JSON answer ends with the body; an SSE answer's first message
		// (after the priming event) with its blank line.
		if err != nil || (sse && message && line == "\n") {
			break
		}
	}
	// The rest of the stream (it ends after the answer) is read so that the
	// request is over on the server too before the next one: a session
	// counts as busy until its request's handler has returned.
	io.Copy(io.Discard, br)
	return resp, b.String()
}

// initialize starts a 2025-11-25 (or version) session by hand and sends
// notifications/initialized; it returns the session id.
func initialize(t *testing.T, hc *http.Client, base, version string) string {
	t.Helper()
	resp, body := post(t, hc, base, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q: %s", resp.StatusCode, sid, body)
	}
	if resp, body := post(t, hc, base, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "MCP-Protocol-Version", version); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d: %s", resp.StatusCode, body)
	}
	return sid
}

// TestSessionRequired: a request other than initialize without
// Mcp-Session-Id is refused with 400 and a JSON-RPC error naming the
// header (the spec's Streamable HTTP transport, 2025-11-25); the SDK alone
// answers 200 with the error in the stream.
func TestSessionRequired(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, nil)
	hc := &http.Client{}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`,
	} {
		for _, version := range []string{"", "2025-11-25"} {
			var header []string
			if version != "" {
				header = []string{"MCP-Protocol-Version", version}
			}
			resp, got := post(t, hc, base, "", body, header...)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, "Mcp-Session-Id header required") {
				t.Errorf("POST %s without a session (version %q): %d %s; want 400 and a JSON-RPC error naming Mcp-Session-Id", body, version, resp.StatusCode, got)
			}
			if strings.Contains(body, `"id":7`) && !strings.HasPrefix(body, "[") && !strings.Contains(got, `"id":7`) {
				t.Errorf("POST %s without a session: the error %s does not carry the request's id", body, got)
			}
		}
	}
	// initialize still starts a session, and the session's requests work.
	sid := initialize(t, hc, base, "2025-11-25")
	if resp, got := post(t, hc, base, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "MCP-Protocol-Version", "2025-11-25"); resp.StatusCode != http.StatusOK || !strings.Contains(got, "mcp_fx_echo") {
		t.Errorf("tools/list in the session: %d %s", resp.StatusCode, got)
	}
}

// TestBatchByNegotiatedVersion: whether a JSON-RPC batch is accepted
// depends on the version the session negotiated, not on the request's
// MCP-Protocol-Version header, which a client may leave out: batches
// exist in 2025-03-26 only.
func TestBatchByNegotiatedVersion(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, nil)
	hc := &http.Client{}
	batch := `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`
	for _, tc := range []struct {
		version string
		want    int
	}{
		{"2025-11-25", http.StatusBadRequest},
		{"2025-06-18", http.StatusBadRequest},
		{"2025-03-26", http.StatusOK},
	} {
		sid := initialize(t, hc, base, tc.version)
		resp, got := post(t, hc, base, sid, "\n "+batch) // no MCP-Protocol-Version header
		if resp.StatusCode != tc.want {
			t.Errorf("a batch in a %s session without the version header: %d %s, want %d", tc.version, resp.StatusCode, got, tc.want)
		}
		if tc.want == http.StatusBadRequest && !strings.Contains(got, tc.version) {
			t.Errorf("the refusal %s does not name the session's version %s", got, tc.version)
		}
	}
}

// openStream opens the GET stream of session sid (a standalone SSE stream)
// and returns once the gateway has answered it; close the response to end
// it.
func openStream(t *testing.T, hc *http.Client, base, sid string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET stream of %s: status %d", sid, resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// alive pings session sid and reports whether it still exists (404 when
// it was closed).
func alive(t *testing.T, hc *http.Client, base, sid string) bool {
	t.Helper()
	resp, body := post(t, hc, base, sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, "MCP-Protocol-Version", "2025-11-25")
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusNotFound:
		return false
	}
	t.Fatalf("ping in %s: status %d: %s", sid, resp.StatusCode, body)
	return false
}

// TestMaxSessions: at max_sessions a new session closes the session idle
// the longest (no request in flight, not even its GET stream); when every
// session is busy it is refused with 503 and a JSON-RPC error that names
// the limit, on every endpoint that opens sessions.
func TestMaxSessions(t *testing.T) {
	g, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{MaxSessions: 4})
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	a := initialize(t, hc, base, "2025-11-25")
	b := initialize(t, hc, base, "2025-11-25")
	c := initialize(t, hc, base, "2025-11-25")
	d := initialize(t, hc, base, "2025-11-25")
	openStream(t, hc, base, a)
	openStream(t, hc, base, b)
	// c and d are idle, c the longer: c goes first, then d, then e. (A
	// ping is activity: only closed sessions are pinged until the end.)
	e := initialize(t, hc, base, "2025-11-25")
	if alive(t, hc, base, c) {
		t.Errorf("after a fifth session, c (the idlest) is still alive")
	}
	f := initialize(t, hc, base, "2025-11-25")
	if alive(t, hc, base, d) {
		t.Errorf("after a sixth session, d (now the idlest) is still alive")
	}
	if !alive(t, hc, base, e) {
		t.Errorf("after a sixth session, e was closed, not d")
	}
	// Every session busy: refused, whatever the endpoint.
	openStream(t, hc, base, e)
	streamF := openStream(t, hc, base, f)
	for _, tc := range []struct {
		name string
		do   func() (*http.Response, string)
	}{
		{"initialize", func() (*http.Response, string) {
			return post(t, hc, base, "", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
		}},
		{"legacy SSE", func() (*http.Response, string) { return get(t, hc, base+"/sse", "Accept", "text/event-stream") }},
		{"WebSocket", func() (*http.Response, string) {
			return get(t, hc, base+"/ws", "Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol", "mcp")
		}},
		{"2026-07-28 subscriptions/listen", func() (*http.Response, string) {
			return post(t, hc, base, "", `{"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
				"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen")
		}},
	} {
		resp, body := tc.do()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			!strings.Contains(body, `"code":-32000`) || !strings.Contains(body, "4 open, the most [gateway] max_sessions allows") {
			t.Errorf("%s over the limit: %d (Retry-After %q) %s; want 503 naming max_sessions and 4", tc.name, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	// A session that becomes idle makes room again.
	streamF.Body.Close()
	// The gateway learns of the closed stream when its handler returns.
	wait.For(t, "room after a stream ended", func() (string, bool) {
		resp, body := post(t, hc, base, "", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
		return fmt.Sprint(resp.StatusCode, " ", body), resp.StatusCode == http.StatusOK
	})
	if alive(t, hc, base, f) {
		t.Error("f, idle once its stream ended, was not the one closed")
	}
	// Never more server sessions than the limit (closing is asynchronous).
	wait.For(t, "at most 4 server sessions", func() (int, bool) {
		n := countSessions(g)
		return n, n <= 4
	})
}

// TestMaxSessionsFlood: a client that opens sessions and leaves them idle
// (the 3,000) never holds more than max_sessions of them.
func TestMaxSessionsFlood(t *testing.T) {
	g, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{MaxSessions: 20})
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	for range 100 {
		initialize(t, hc, base, "2025-11-25")
	}
	wait.For(t, "at most 20 server sessions after 100 idle ones were opened", func() (int, bool) {
		n := countSessions(g)
		return n, n <= 20
	})
}

// TestMaxClientSessions: one client address holds at most
// max_client_sessions; over it its own idlest session is closed, or, when
// none of its own is idle, the new one refused with 429, while another
// address still gets in. (Loopback has many addresses: 127.0.0.2 is
// another client.)
func TestMaxClientSessions(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{MaxSessions: 10, MaxClientSessions: 2})
	hc := &http.Client{Transport: &http.Transport{}}
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	defer hc.CloseIdleConnections()
	defer other.CloseIdleConnections()
	o1 := initialize(t, other, base, "2025-11-25") // the other client's idle session: never ours to close
	a := initialize(t, hc, base, "2025-11-25")
	b := initialize(t, hc, base, "2025-11-25")
	openStream(t, hc, base, b)
	initialize(t, hc, base, "2025-11-25") // closes a, our own idle one
	if alive(t, hc, base, a) || !alive(t, other, base, o1) {
		t.Errorf("a alive %v, the other client's session alive %v; want a closed and the other's kept", alive(t, hc, base, a), alive(t, other, base, o1))
	}
	// Both of ours busy: refused.
	c := initialize(t, hc, base, "2025-11-25")
	openStream(t, hc, base, c)
	resp, body := post(t, hc, base, "", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "max_client_sessions") || !strings.Contains(body, `"id":5`) {
		t.Errorf("a third busy session of one client: %d %s; want 429 naming max_client_sessions", resp.StatusCode, body)
	}
	initialize(t, other, base, "2025-11-25") // another address is not held back
}

// get sends a GET with header pairs and returns the answer and its body.
func get(t *testing.T, hc *http.Client, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, "" // a stream: its body does not end
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func countSessions(g *gateway.Gateway) int {
	n := 0
	for range g.Server().Sessions() {
		n++
	}
	return n
}

// TestMaxWaitingCalls: a 2026-07-28 client's call to an older upstream
// that asks for input waits for the client to come back, holding the
// upstream call, for up to InputTimeout. The client need not come back: a
// stateless client could leave any number waiting. At MaxWaitingCalls a
// further question is refused (the upstream's request fails, so does its
// call), and a call that has its answer makes room. (One upstream per
// waiting call: with two calls in flight, a 2025-11-25 upstream's question
// cannot be told apart, and the host declines it.)
func TestMaxWaitingCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var olds []config.Server
	for i := range 3 {
		olds = append(olds, fixture(t, fmt.Sprintf("old%d", i), "-protocol-version", "2025-11-25"))
	}
	g, err := gateway.Start(ctx, olds, nil, &gateway.Options{MaxWaitingCalls: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	defer ts.Close()
	defer g.Close()
	defer ts.CloseClientConnections()
	c := mcp.NewClient(&mcp.Implementation{Name: "leaves", Version: "1"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}, // the test answers (or not) itself
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ask := func(i int) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: fmt.Sprintf("mcp_old%d_elicit", i), Arguments: map[string]any{}})
	}
	var waiting []*mcp.CallToolResult
	for i := range 2 {
		res, err := ask(i)
		if err != nil || len(res.InputRequests) == 0 {
			t.Fatalf("call %d = %+v, %v; want an input-required result", i, res, err)
		}
		waiting = append(waiting, res)
	}
	res, err := ask(2)
	if err == nil && len(res.InputRequests) > 0 {
		t.Fatalf("a third call waits for input too; want at most 2 waiting")
	}
	if got := fmt.Sprint(err, res); !strings.Contains(got, "waiting for their clients' input") {
		t.Errorf("the third call: %s, want an error saying too many calls wait for input", got)
	}
	// Answering one makes room.
	var key string
	for k := range waiting[0].InputRequests {
		key = k
	}
	done, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old0_elicit", Arguments: map[string]any{}, RequestState: waiting[0].RequestState,
		InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "decline"}}})
	if err != nil || len(done.InputRequests) > 0 {
		t.Fatalf("answering the first = %+v, %v", done, err)
	}
	if res, err := ask(2); err != nil || len(res.InputRequests) == 0 {
		t.Errorf("after one was answered = %+v, %v; want room for another", res, err)
	}
}

// TestEndpointSecurityEverywhere: the Host, Origin and token checks of
// /mcp hold on every endpoint: the legacy SSE stream and its message
// endpoint, and the WebSocket handshake.
func TestEndpointSecurityEverywhere(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{Guard: guard.Options{AuthToken: "s3cret-token"}})
	auth := "Bearer s3cret-token"
	ws := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol", "mcp"}
	for _, tc := range []struct {
		name, method, path string
		header             []string
		host               string
		want               int
	}{
		{"sse without token", "GET", "/sse", []string{"Accept", "text/event-stream"}, "", http.StatusUnauthorized},
		{"sse foreign origin", "GET", "/sse", []string{"Accept", "text/event-stream", "Authorization", auth, "Origin", "https://evil.example"}, "", http.StatusForbidden},
		{"sse rebinding host", "GET", "/sse", []string{"Accept", "text/event-stream", "Authorization", auth}, "127.0.0.1:1.evil.example", http.StatusForbidden},
		{"message without token", "POST", "/message?sessionid=x", []string{"Content-Type", "application/json"}, "", http.StatusUnauthorized},
		{"message foreign origin", "POST", "/message?sessionid=x", []string{"Content-Type", "application/json", "Authorization", auth, "Origin", "https://evil.example"}, "", http.StatusForbidden},
		{"ws without token", "GET", "/ws", ws, "", http.StatusUnauthorized},
		{"ws foreign origin", "GET", "/ws", append([]string{"Authorization", auth, "Origin", "https://evil.example"}, ws...), "", http.StatusForbidden},
		{"ws rebinding host", "GET", "/ws", append([]string{"Authorization", auth}, ws...), "evil.example", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
