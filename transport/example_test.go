package transport_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/transport"
)

// ExampleCommand runs cat, which echoes each JSON-RPC message back, as a
// stdio child. A real host passes the Command to mcp.Client.Connect instead
// of using the connection directly.
func ExampleCommand() {
	os.Setenv("EXAMPLE_API_KEY", "secret") // the host's secrets stay in the host
	tail := transport.NewTailBuffer(4 << 10)
	cmd := &transport.Command{
		Path:   "cat",
		Env:    transport.MinimalEnv(map[string]string{"GREETING": "hello"}),
		Stderr: tail, // the last 4 KiB of stderr, to explain a death
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "EXAMPLE_API_KEY=") || strings.HasPrefix(kv, "GREETING=") {
			fmt.Println("child env:", kv)
		}
	}

	conn, err := cmd.Connect(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/hello"}); err != nil {
		log.Fatal(err)
	}
	msg, err := conn.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("echoed:", msg.(*jsonrpc.Request).Method)

	// Close closes cat's stdin; cat exits by itself.
	if err := conn.Close(); err != nil {
		log.Fatal(err)
	}
	<-cmd.Exited()
	fmt.Println("exit code:", cmd.ProcessState().ExitCode())
	// Output:
	// child env: GREETING=hello
	// echoed: notifications/hello
	// exit code: 0
}

// ExampleNewWebSocketHandler mounts MCP over WebSocket at /ws.
func ExampleNewWebSocketHandler() {
	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "v0.0.1"}, nil)
	h := transport.NewWebSocketHandler(func(*http.Request) *mcp.Server { return server }, nil)
	defer h.Close() // closes every live connection

	mux := http.NewServeMux()
	mux.Handle("/ws", h)
	// http.ListenAndServe("127.0.0.1:8080", mux)

	// A client connects with:
	//	session, err := client.Connect(ctx, &transport.WebSocket{URL: "ws://127.0.0.1:8080/ws"}, nil)
}

// ExampleStrictBodies checks what the go-sdk's Streamable HTTP client
// reads: a refused message fails the call it answers, with the reason.
func ExampleStrictBodies() {
	srv := http.NewServeMux()
	srv.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		// An answer with two "result" members: the SDK alone would keep
		// the last.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"},"result":{}}`)
	})
	ts := httptest.NewServer(srv)
	defer ts.Close()

	hc := &http.Client{Transport: transport.StrictBodies(transport.LimitBodies(nil, 0), 0, func(err error) {
		fmt.Println("refused:", err)
	})}
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "v0.0.1"}, nil)
	_, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	var je *jsonrpc.Error
	if errors.As(err, &je) && transport.RefusedAnswer(je) != nil {
		fmt.Println("initialize failed:", je.Message)
	}
	// Output:
	// refused: refused the server's message: duplicate member name "result"
	// initialize failed: refused the server's message: duplicate member name "result"
}
