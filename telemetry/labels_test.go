package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"

	"github.com/switchboardmcp/switchboard/telemetry"
)

// syncBuffer is a log sink the middleware's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// labelValues counts fam's series by the value of label: how many series
// carry each value, and the samples of each (a histogram's count).
func labelValues(fam *dto.MetricFamily, label string) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return out
}

// toolServer is an MCP server with n tools t000…, each answering its
// name: a server whose tools are renamed on every list has called as many
// names as it has listed.
func toolServer(n int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "renamer", Version: "1"}, nil)
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
			})
	}
	return srv
}

// connect connects a client with the sending middleware mw (none when nil)
// to srv, in memory.
func connect(t *testing.T, srv *mcp.Server, mw mcp.Middleware) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	if mw != nil {
		c.AddSendingMiddleware(mw)
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestToolLabelsBounded: the tool names a server's calls record as
// gen_ai.tool.name are at most MaxToolLabels per server, on both sides of
// the gateway; the others are folded into one "_other" value, and a
// warning says so once per server. Before, each name was a series of its
// own for good (284 → 2,035 series in 100 renames in the trial of issue
// 24): here 40 names were 40 series on each side.
func TestToolLabelsBounded(t *testing.T) {
	logs := &syncBuffer{}
	tel, err := telemetry.New(&telemetry.Options{MaxToolLabels: 10, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())

	// The host's side: the client middleware of server "renamer".
	cs := connect(t, toolServer(40), tel.ClientMiddleware("renamer"))
	// The gateway's side: its server middleware, whose published tools
	// (here, every name) belong to server "renamer".
	gw := toolServer(40)
	gw.AddReceivingMiddleware(tel.ServerMiddleware("", func(string) (string, bool) { return "renamer", true }))
	gcs := connect(t, gw, nil)
	ctx := context.Background()
	for i := range 40 {
		for _, c := range []*mcp.ClientSession{cs, gcs} {
			if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: fmt.Sprintf("t%03d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fams := families(t, tel)
	for _, fam := range []string{"mcp_client_operation_duration_seconds", "mcp_server_operation_duration_seconds"} {
		got := labelValues(fams[fam], "gen_ai_tool_name")
		if len(got) != 11 || got["_other"] != 30 || got["t000"] != 1 || got["t009"] != 1 {
			t.Errorf("%s: %d tool names %v; want t000…t009 once each and _other 30 times", fam, len(got), got)
		}
	}
	if n := strings.Count(logs.String(), "more tool names than"); n != 2 {
		t.Errorf("the fold was logged %d times, want once per side:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "server=renamer") {
		t.Errorf("the log does not name the server:\n%s", logs)
	}
}

// rawSession opens a session with srv in memory as a client that asks for
// protocol version version, pings once and closes.
func rawSession(t *testing.T, srv *mcp.Server, version string) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call := func(id float64, method, params string) {
		t.Helper()
		rid, _ := jsonrpc.MakeID(id)
		if err := conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)}); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	call(1, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"odd","version":"1"}}`)
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	call(2, "ping", `{}`)
	conn.Close()
	ss.Wait()
}

// TestOutsideLabelsBounded: the protocol version a client asks for and
// the JSON-RPC error code a server answers with become label values only
// when they are the protocol's; any other is "_OTHER". Before, each
// string a client sent as its version was a series of its own (here 20
// of them), and so was each code a server made up.
func TestOutsideLabelsBounded(t *testing.T) {
	tel, err := telemetry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())

	gw := toolServer(1)
	gw.AddReceivingMiddleware(tel.ServerMiddleware("", func(string) (string, bool) { return "", false }))
	for i := range 20 {
		rawSession(t, gw, fmt.Sprintf("1999-01-%02d", i+1))
	}
	rawSession(t, gw, "2025-06-18")

	// A server that answers each call with an error code of its own.
	odd := toolServer(1)
	code := int64(-1000)
	odd.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p.Name == "t000" {
				code--
				return nil, &jsonrpc.Error{Code: code, Message: "made up"}
			} else if ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the protocol's"}
			}
			return next(ctx, method, req)
		}
	})
	cs := connect(t, odd, tel.ClientMiddleware("odd"))
	for range 20 {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t000"}); err == nil {
			t.Fatal("a call answered with an error succeeded")
		}
	}
	// A code of the protocol's is kept.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t001"}); err == nil {
		t.Fatal("a call answered with an error succeeded")
	}

	fams := families(t, tel)
	versions := labelValues(fams["mcp_server_operation_duration_seconds"], "mcp_protocol_version")
	// initialize records the version the session speaks (the SDK's
	// choice, for a version it does not know); the ping, the one asked.
	negotiated := ""
	for v := range versions {
		if v != "_OTHER" && v != "2025-06-18" && slices.Contains(mcp.SupportedProtocolVersions(), v) {
			negotiated = v
		}
	}
	if len(versions) != 3 || versions["_OTHER"] != 20 || versions[negotiated] != 20 || versions["2025-06-18"] != 2 {
		t.Errorf("protocol versions of the gateway's operations = %v; want _OTHER 20 times (the pings), a version the SDK speaks 20 times (initialize), 2025-06-18 twice", versions)
	}
	codes := labelValues(fams["mcp_client_operation_duration_seconds"], "error_type")
	if len(codes) != 2 || codes["_OTHER"] != 20 || codes["-32602"] != 1 {
		t.Errorf("error types of the client's calls = %v; want _OTHER 20 times and -32602 once", codes)
	}
}
