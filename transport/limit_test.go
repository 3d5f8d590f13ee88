package transport_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/transport"
)

func TestLimitBodies(t *testing.T) {
	const max = 1024
	bodies := map[string]struct {
		contentType string
		body        string
		chunked     bool // no Content-Length: the limit must hold while reading
	}{
		"/small":      {"application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		"/exact":      {"application/json", strings.Repeat("x", max), true},
		"/huge":       {"application/json", strings.Repeat("x", 10*max), false},
		"/huge-chunk": {"application/json; charset=utf-8", strings.Repeat("x", 10*max), true},
		"/untyped":    {"", strings.Repeat("x", 10*max), true},
		"/sse":        {"text/event-stream", "data: " + strings.Repeat("x", 10*max) + "\n\n", true},
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		w.Header()["Content-Type"] = []string{b.contentType} // an empty one stays empty, not sniffed
		if b.chunked {
			bw := bufio.NewWriterSize(w, 100)
			io.Copy(bw, strings.NewReader(b.body))
			bw.Flush()
			return
		}
		io.WriteString(w, b.body)
	}))
	defer ts.Close()
	client := &http.Client{Transport: transport.LimitBodies(ts.Client().Transport, max)}

	for _, tc := range []struct {
		path    string
		wantErr bool
	}{
		{"/small", false},
		{"/exact", false},
		{"/huge", true},
		{"/huge-chunk", true},
		{"/untyped", true},
		{"/sse", false},
	} {
		resp, err := client.Get(ts.URL + tc.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.wantErr {
			if !errors.Is(err, transport.ErrMessageTooLarge) {
				t.Errorf("GET %s: read err = %v, want ErrMessageTooLarge", tc.path, err)
			}
			if len(got) > max {
				t.Errorf("GET %s: read %d bytes, more than the limit %d", tc.path, len(got), max)
			}
			continue
		}
		if err != nil {
			t.Errorf("GET %s: read err = %v, want nil", tc.path, err)
		}
		if want := bodies[tc.path].body; string(got) != want {
			t.Errorf("GET %s: body of %d bytes, want %d", tc.path, len(got), len(want))
		}
	}
}

// TestLimitBodiesStreamable checks the bound where it matters: the go-sdk's
// Streamable HTTP client reading a JSON response.
func TestLimitBodiesStreamable(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"padding":"`+strings.Repeat("x", 1<<20)+`"}}`)
	}))
	defer ts.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
	_, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   ts.URL,
		HTTPClient: &http.Client{Transport: transport.LimitBodies(ts.Client().Transport, 64<<10)},
		MaxRetries: -1,
	}, nil)
	if err == nil || !strings.Contains(err.Error(), transport.ErrMessageTooLarge.Error()) {
		t.Errorf("Connect = %v, want an error containing %q", err, transport.ErrMessageTooLarge)
	}
}
