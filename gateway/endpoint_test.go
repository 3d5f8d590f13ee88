package gateway_test

// The endpoint under abuse (issue 11, §2): clients that trickle their
// bodies, flood sessions, or send what a session-less request may not.
// Every test here speaks HTTP by hand over a real loopback connection, so
// that it can misbehave at the byte level.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
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
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{AuthToken: "s3cret-token"})
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
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, &gateway.HTTPOptions{AuthToken: "s3cret-token", BodyTimeout: timeout})
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
