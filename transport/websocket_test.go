package transport_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/transport"
)

type echoArgs struct {
	Text   string `json:"text"`
	Repeat int    `json:"repeat,omitempty"`
}

func newMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ws-server", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, args echoArgs) (*mcp.CallToolResult, any, error) {
		n := max(args.Repeat, 1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat(args.Text, n)}}}, nil, nil
	})
	return s
}

// serveWS starts an httptest server (127.0.0.1:0) with a WebSocket handler
// for s and returns its ws:// URL and the handler. Both are closed when the
// test ends.
func serveWS(t *testing.T, s *mcp.Server, opts *transport.WebSocketHandlerOptions) (string, *transport.WebSocketHandler) {
	t.Helper()
	h := transport.NewWebSocketHandler(func(*http.Request) *mcp.Server { return s }, opts)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return "ws" + strings.TrimPrefix(ts.URL, "http"), h
}

func TestWebSocketClientServer(t *testing.T) {
	checkLeaks(t)
	s := newMCPServer()
	url, _ := serveWS(t, s, nil)

	listChanged := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case listChanged <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithCancel(t.Context())
	cs, err := client.Connect(ctx, &transport.WebSocket{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel() // the connection outlives the connect context

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Errorf("ListTools = %+v, want [echo]", tools.Tools)
	}
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Errorf("echo = %q, want hi", got)
	}

	// A server notification reaches the client.
	mcp.AddTool(s, &mcp.Tool{Name: "later"}, func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	select {
	case <-listChanged:
	case <-t.Context().Done():
		t.Fatal("no tools/list_changed notification")
	}
	if err := cs.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestWebSocketOversize(t *testing.T) {
	t.Run("client limit", func(t *testing.T) {
		checkLeaks(t)
		url, _ := serveWS(t, newMCPServer(), nil)
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
		cs, err := client.Connect(t.Context(), &transport.WebSocket{URL: url, MaxMessageBytes: 64 << 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x", "repeat": 100 << 10}})
		if err == nil {
			t.Fatal("oversize result accepted")
		}
		t.Logf("CallTool: %v", err)
		cs.Wait() // returns once the connection has closed
	})
	t.Run("server limit", func(t *testing.T) {
		checkLeaks(t)
		url, _ := serveWS(t, newMCPServer(), &transport.WebSocketHandlerOptions{MaxMessageBytes: 64 << 10})
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
		cs, err := client.Connect(t.Context(), &transport.WebSocket{URL: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strings.Repeat("x", 100<<10)}})
		if err == nil {
			t.Fatal("oversize request accepted")
		}
		t.Logf("CallTool: %v", err)
		cs.Wait() // returns once the connection has closed
	})
	t.Run("raw", func(t *testing.T) {
		checkLeaks(t)
		url, _ := rawServer(t, "mcp", func(c *websocket.Conn) {
			c.Write(context.Background(), websocket.MessageText, []byte(strings.Repeat("x", 2048)))
			c.Read(context.Background()) // until the client closes
		})
		conn, err := (&transport.WebSocket{URL: url, MaxMessageBytes: 1024}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Read(t.Context()); !errors.Is(err, transport.ErrMessageTooLarge) {
			t.Errorf("Read = %v, want ErrMessageTooLarge", err)
		}
	})
}

// rawServer serves a bare coder/websocket endpoint agreeing to proto (empty:
// none) and running serve on each connection.
func rawServer(t *testing.T, proto string, serve func(*websocket.Conn)) (string, chan struct{}) {
	t.Helper()
	done := make(chan struct{}, 10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		var protos []string
		if proto != "" {
			protos = []string{proto}
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: protos})
		if err != nil {
			return
		}
		defer c.CloseNow()
		serve(c)
	}))
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http"), done
}

func TestWebSocketSubprotocolRequired(t *testing.T) {
	t.Run("client without subprotocol", func(t *testing.T) {
		checkLeaks(t)
		url, _ := serveWS(t, newMCPServer(), nil)
		c, resp, err := websocket.Dial(t.Context(), url, nil)
		if err == nil {
			c.CloseNow()
			t.Fatal("handshake without subprotocol accepted")
		}
		if resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("response = %v, want 400", resp)
		}
	})
	t.Run("server without subprotocol", func(t *testing.T) {
		checkLeaks(t)
		url, _ := rawServer(t, "", func(c *websocket.Conn) { c.Read(context.Background()) })
		_, err := (&transport.WebSocket{URL: url}).Connect(t.Context())
		if err == nil || !strings.Contains(err.Error(), `subprotocol "mcp"`) {
			t.Errorf("Connect = %v, want an error about subprotocol mcp", err)
		}
	})
}

func TestWebSocketBinaryFrame(t *testing.T) {
	t.Run("to client", func(t *testing.T) {
		checkLeaks(t)
		url, _ := rawServer(t, "mcp", func(c *websocket.Conn) {
			c.Write(context.Background(), websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","method":"x"}`))
			c.Read(context.Background())
		})
		conn, err := (&transport.WebSocket{URL: url}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Read(t.Context()); err == nil || !strings.Contains(err.Error(), "binary") {
			t.Errorf("Read = %v, want binary frame error", err)
		}
	})
	t.Run("to server", func(t *testing.T) {
		checkLeaks(t)
		url, _ := serveWS(t, newMCPServer(), nil)
		c, _, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		if err := c.Write(t.Context(), websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
			t.Fatal(err)
		}
		_, _, err = c.Read(t.Context())
		if got := websocket.CloseStatus(err); got != websocket.StatusUnsupportedData {
			t.Errorf("after a binary frame: Read = %v (status %v), want close status %v", err, got, websocket.StatusUnsupportedData)
		}
	})
}

func TestWebSocketCloseUnblocksRead(t *testing.T) {
	t.Run("local close", func(t *testing.T) {
		checkLeaks(t)
		url, _ := rawServer(t, "mcp", func(c *websocket.Conn) { c.Read(context.Background()) })
		conn, err := (&transport.WebSocket{URL: url}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := conn.Read(context.Background())
			errc <- err
		}()
		if err := conn.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-errc; err == nil {
			t.Error("Read after Close succeeded")
		}
		if err := conn.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
	t.Run("peer close", func(t *testing.T) {
		checkLeaks(t)
		url, _ := rawServer(t, "mcp", func(c *websocket.Conn) { c.Close(websocket.StatusNormalClosure, "bye") })
		conn, err := (&transport.WebSocket{URL: url}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Read(context.Background()); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			t.Errorf("Read = %v, want normal closure", err)
		}
	})
	t.Run("handler close", func(t *testing.T) {
		checkLeaks(t)
		url, h := serveWS(t, newMCPServer(), nil)
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
		cs, err := client.Connect(t.Context(), &transport.WebSocket{URL: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cs.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("client session still alive after the handler closed")
		}
		// New connections are refused.
		if _, err := client.Connect(t.Context(), &transport.WebSocket{URL: url}, nil); err == nil {
			t.Error("Connect after handler Close succeeded")
		}
	})
}

func TestWebSocketGarbage(t *testing.T) {
	checkLeaks(t)
	url, _ := rawServer(t, "mcp", func(c *websocket.Conn) {
		c.Write(context.Background(), websocket.MessageText, []byte("not json"))
		c.Read(context.Background())
	})
	conn, err := (&transport.WebSocket{URL: url}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Read(t.Context()); err == nil {
		t.Error("Read of garbage succeeded")
	}
	// A valid message is still written fine before Close.
	if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
		t.Errorf("Write: %v", err)
	}
}
