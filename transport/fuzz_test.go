package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzWebSocketFrames: whatever one text frame a server sends (and then a
// notification, for a frame that is refused and dropped), the client
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
		c.Write(r.Context(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"after"}`))
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
// an error through messageLines and the SDK's line framing with our bound,
// never more than the bound per message, and never a panic. A line the
// go-sdk would decode as a message is never skipped, and when every line
// is either skipped or a message, reading yields exactly those messages.
func FuzzStdioFraming(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"))
	f.Add([]byte("not json\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"))
	f.Add(bytes.Repeat([]byte("a"), 3000))
	f.Add([]byte("Server running on stdio\r\n[dotenv@17.2.1] injecting env\n{\"level\":30}\n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":1,\"message\":\"m\"}}"))
	f.Add([]byte("{\"result\":{\"t\":\"}\\\"{\"},\"jsonrpc\":\"2.0\",\"id\":2}\n{\"jsonrpc\":\"2.0\",\"id\":\n"))
	f.Add([]byte("[{\"jsonrpc\":\"2.0\",\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":[]}]\n[]\n[1]\n"))
	f.Add([]byte("{\"json\\u0072pc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":tru}\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"result\":1}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"result\":\"\xff\"}\n"))
	const bound = 1024
	f.Fuzz(func(t *testing.T, out []byte) {
		want, exact := 0, true
		for _, line := range bytes.Split(out, []byte("\n")) {
			line = bytes.TrimRight(line, "\r")
			checkAgreesWithSDK(t, line)
			if len(line) > bound {
				exact = false
				continue
			}
			if !isMessage(line) {
				continue
			}
			if _, err := jsonrpc.DecodeMessage(line); err != nil || !json.Valid(line) || bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) ||
				checkMessage(nil, line, false) != nil { // refused: replaced by as many answers as it has ids
				exact = false
			}
			want++
		}

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lines := newMessageLines(io.NopCloser(bytes.NewReader(out)), bound, nil)
		conn, err := (&mcp.IOTransport{Reader: lines, Writer: nopWriteCloser{}, MaxLineLength: bound}).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for i := 0; ; i++ {
			if _, err := conn.Read(ctx); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatal("Read hung")
				}
				if exact && (i != want || !errors.Is(err, io.EOF)) {
					t.Fatalf("read %d messages, then %v; want %d, then EOF", i, err, want)
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
