package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/transport"
)

// wireServer answers MCP below any SDK, so that it can send what no SDK
// would: each tools/call is answered as its tool's name says (see
// rawAnswers). It speaks protocol version version, or the client's.
type wireServer struct{ version string }

// The misbehaving answers, by tool name; ID is the call's id.
var rawCalls = map[string][]string{
	"ok":  {`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"ok"}]}}`},
	"dup": {`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"checked"}]},"result":{"content":[{"type":"text","text":"smuggled"}]}}`},
	// The same name written with an escape.
	"dup-escaped": {`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"checked"}]},"r\u0065sult":{"content":[{"type":"text","text":"smuggled"}]}}`},
	"utf8":        {"{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff byte\"}]}}"},
	"batch":       {`[{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"in a batch"}]}}]`},
	"two-ids":     {`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"two ids"}]},"id":999}`},
	// A notification the client must not see, then the answer.
	"notify": {`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"checked","data":"smuggled"}}`,
		`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"ok"}]}}`},
	// A batch of two notifications, which only sessions before
	// 2025-06-18 may have, then the answer.
	"batch-notify": {`[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"two"}}]`,
		`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"ok"}]}}`},
	// A plain notification, then the answer: the marker that notifications
	// sent before it were delivered or not.
	"marker": {`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"marker"}}`,
		`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"ok"}]}}`},
}

// answers returns the messages that answer msg (one JSON-RPC message).
func (s wireServer) answers(msg []byte) []string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name            string `json:"name"`
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID == nil {
		return nil // notifications and answers
	}
	id := string(m.ID)
	switch m.Method {
	case "initialize":
		v := s.version
		if v == "" {
			v = m.Params.ProtocolVersion
		}
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"` + v +
			`","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"raw","version":"1"}}}`}
	case "tools/call":
		var out []string
		for _, a := range rawCalls[m.Params.Name] {
			out = append(out, strings.ReplaceAll(a, "ID", id))
		}
		return out
	}
	return []string{`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"no"}}`}
}

func init() {
	// raw serves wireServer on stdio, at the version in RAW_VERSION.
	children["raw"] = func() {
		s := wireServer{version: os.Getenv("RAW_VERSION")}
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(nil, 1<<20)
		for in.Scan() {
			for _, a := range s.answers(in.Bytes()) {
				os.Stdout.WriteString(a + "\n")
			}
		}
	}
}

// serveRawWebSocket serves s over WebSocket.
func serveRawWebSocket(t *testing.T, s wireServer) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			for _, a := range s.answers(data) {
				if c.Write(r.Context(), websocket.MessageText, []byte(a)) != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// serveRawStreamable serves s over Streamable HTTP without sessions: each
// answer in an event stream, or, with jsonBody, as an application/json
// body when it is one message.
func serveRawStreamable(t *testing.T, s wireServer, jsonBody bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream here", http.StatusMethodNotAllowed)
			return
		}
		var body strings.Builder
		if _, err := bufio.NewReader(r.Body).WriteTo(&body); err != nil {
			return
		}
		answers := s.answers([]byte(body.String()))
		if len(answers) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if jsonBody && len(answers) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(answers[0]))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i, a := range answers {
			fmt.Fprintf(w, "event: message\nid: %d\ndata: %s\n\n", i, a)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveRawSSE serves s over the legacy HTTP+SSE transport.
func serveRawSSE(t *testing.T, s wireServer) string {
	var mu sync.Mutex
	streams := map[string]chan string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			ch := make(chan string, 16)
			mu.Lock()
			id := fmt.Sprint(len(streams))
			streams[id] = ch
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: endpoint\ndata: /message?session=%s\n\n", id)
			w.(http.Flusher).Flush()
			for {
				select {
				case a := <-ch:
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", a)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case http.MethodPost:
			mu.Lock()
			ch := streams[r.URL.Query().Get("session")]
			mu.Unlock()
			var body strings.Builder
			bufio.NewReader(r.Body).WriteTo(&body)
			w.WriteHeader(http.StatusAccepted)
			for _, a := range s.answers([]byte(body.String())) {
				ch <- a
			}
		}
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}

// refusals collects what a transport refused.
type refusals struct {
	mu   sync.Mutex
	errs []error
}

func (r *refusals) add(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *refusals) take() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := r.errs
	r.errs = nil
	return errs
}

// logs collects the log messages a client receives.
type logs chan string

func (l logs) handler(_ context.Context, req *mcp.LoggingMessageRequest) {
	s, _ := req.Params.Data.(string)
	l <- s
}

// until returns the log messages received up to marker.
func (l logs) until(t *testing.T, marker string) []string {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case s := <-l:
			if s == marker {
				return got
			}
			got = append(got, s)
		case <-timeout:
			t.Fatalf("no %q log message; got %q", marker, got)
		}
	}
}

// TestRefusedMessages: over each transport, a server's message that the
// protocol does not allow is refused with a reason, and does not reach
// the client as the SDK would read it: the call it answers fails at once
// (before, the last "result" won, invalid UTF-8 became U+FFFD and a batch
// was taken for the answer), a notification in it is dropped, and the
// connection stays up for the next call.
func TestRefusedMessages(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	refused := &refusals{}
	strict := &http.Client{Transport: transport.StrictBodies(nil, 0, refused.add)}
	s := wireServer{}
	for _, tc := range []struct {
		name string
		tr   func() mcp.Transport
	}{
		{"stdio", func() mcp.Transport {
			return &transport.Command{Path: exe, Env: transport.MinimalEnv(map[string]string{childEnv: "raw"}), RefusedMessage: refused.add}
		}},
		{"websocket", func() mcp.Transport {
			return &transport.WebSocket{URL: serveRawWebSocket(t, s), RefusedMessage: refused.add}
		}},
		{"streamable-sse", func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: serveRawStreamable(t, s, false), HTTPClient: strict, DisableStandaloneSSE: true}
		}},
		{"streamable-json", func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: serveRawStreamable(t, s, true), HTTPClient: strict, DisableStandaloneSSE: true}
		}},
		{"sse", func() mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: serveRawSSE(t, s) + "/sse", HTTPClient: strict}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			l := make(logs, 16)
			c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{LoggingMessageHandler: l.handler})
			cs, err := c.Connect(ctx, tc.tr(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			call := func(tool string) (*mcp.CallToolResult, error) {
				return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
			}
			for _, bad := range []struct{ tool, reason string }{
				{"dup", `duplicate member name "result"`},
				{"dup-escaped", `duplicate member name "result"`},
				{"utf8", `invalid UTF-8 in result.content[0].text at byte`},
				{"batch", "a JSON-RPC batch"},
				{"two-ids", `duplicate member name "id"`},
			} {
				res, err := call(bad.tool)
				var je *jsonrpc.Error
				if !errors.As(err, &je) || transport.RefusedAnswer(je) == nil {
					t.Errorf("%s: CallTool = %+v, %v; want an error answer with code %d", bad.tool, res, err, transport.CodeRefusedMessage)
				} else if !strings.Contains(je.Message, bad.reason) || !strings.HasPrefix(je.Message, "refused the server's message: ") {
					t.Errorf("%s: the error says %q, want it to say why (%s)", bad.tool, je.Message, bad.reason)
				}
				if errs := refused.take(); len(errs) != 1 || !errors.Is(errs[0], transport.ErrRefusedMessage) || !strings.Contains(errs[0].Error(), bad.reason) {
					t.Errorf("%s: refused %v, want one refusal saying %s", bad.tool, errs, bad.reason)
				}
				if res, err := call("ok"); err != nil || res.IsError {
					t.Fatalf("after %s, the next call: %+v, %v; want the connection up", bad.tool, res, err)
				}
			}
			for _, tool := range []string{"notify", "batch-notify", "marker"} {
				if res, err := call(tool); err != nil || res.IsError {
					t.Fatalf("%s: CallTool = %+v, %v; want its answer", tool, res, err)
				}
			}
			if got := l.until(t, "marker"); len(got) != 0 {
				t.Errorf("log messages before the marker: %q, want none (both were refused)", got)
			}
			if errs := refused.take(); len(errs) != 2 {
				t.Errorf("refused %v, want the notification and the batch", errs)
			}
		})
	}
}

// TestBatchesOfOldSessions: a session that settled on 2025-03-26, when
// batches were part of the protocol, takes a server's batch of
// notifications; one of 2025-06-18 refuses it.
func TestBatchesOfOldSessions(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version     string
		want        int // log messages before the marker
		wantRefused int
	}{{"2025-03-26", 2, 0}, {"2025-06-18", 0, 1}} {
		t.Run(tc.version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			refused := &refusals{}
			l := make(logs, 16)
			c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{LoggingMessageHandler: l.handler})
			cmd := &transport.Command{Path: exe, Env: transport.MinimalEnv(map[string]string{childEnv: "raw", "RAW_VERSION": tc.version}),
				RefusedMessage: refused.add}
			cs, err := c.Connect(ctx, cmd, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, tool := range []string{"batch-notify", "marker"} {
				if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool}); err != nil || res.IsError {
					t.Fatalf("%s: CallTool = %+v, %v", tool, res, err)
				}
			}
			if got := l.until(t, "marker"); len(got) != tc.want {
				t.Errorf("log messages before the marker: %q, want %d", got, tc.want)
			}
			if errs := refused.take(); len(errs) != tc.wantRefused {
				t.Errorf("refused %v, want %d refusals", errs, tc.wantRefused)
			}
			// A batch holding an answer is refused in any session.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "batch"})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || transport.RefusedAnswer(je) == nil {
				t.Errorf("batch: CallTool = %+v, %v; want it refused", res, err)
			}
		})
	}
}
