package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzWebSocketFrames: whatever one text frame a server sends, the client
// connection returns a message or an error, bounded in size and time, and
// never panics.
func FuzzWebSocketFrames(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":`))
	f.Add([]byte("\xff\xfe"))
	f.Add(bytes.Repeat([]byte("["), 5000))

	frames := make(chan []byte)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.Write(r.Context(), websocket.MessageText, <-frames)
		// Keep the connection until the client has read.
		c.Read(r.Context())
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	f.Fuzz(func(t *testing.T, frame []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := (&WebSocket{URL: url, MaxMessageBytes: 4096}).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		frames <- frame
		msg, err := conn.Read(ctx)
		if err == nil && msg == nil {
			t.Fatal("no message and no error")
		}
		if len(frame) > 4096 && err == nil {
			t.Fatalf("a %d-byte frame passed a 4096-byte bound", len(frame))
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("Read hung")
		}
	})
}

// FuzzStdioFraming: a child's stdout, however malformed, yields messages or
// an error through the SDK's line framing with our bound, never more than
// the bound per message, and never a panic.
func FuzzStdioFraming(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"))
	f.Add([]byte("not json\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"))
	f.Add(bytes.Repeat([]byte("a"), 3000))
	f.Fuzz(func(t *testing.T, out []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := (&mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(out)), Writer: nopWriteCloser{}, MaxLineLength: 1024}).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for i := 0; ; i++ {
			if _, err := conn.Read(ctx); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatal("Read hung")
				}
				return
			}
			if i > len(out) {
				t.Fatalf("more messages than bytes")
			}
		}
	})
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }
