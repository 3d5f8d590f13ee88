package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

// TestAcceptHeader: the MCP endpoint answers 406 Not Acceptable, with a
// JSON-RPC error saying what the Accept header lacks, to a POST that does
// not list both application/json and text/event-stream and to a GET that
// does not list text/event-stream, in every generation: the Streamable
// HTTP transport requires them of every client (2025-03-26 through
// 2026-07-28). Before, curl's default "Accept: */*" got 200 and an event
// stream, and a request without Accept got the go-sdk's 400.
func TestAcceptHeader(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "fx")}, nil, nil)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	send := func(method string, accept []string, body string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for _, a := range accept {
			req.Header.Add("Accept", a)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.Header.Get("Content-Type") == "text/event-stream" {
			// A POST's stream: its status is the answer. It is read to
			// its end, the request's answer: a client that hangs up on
			// initialize's answer leaves a session the server may close
			// (this test's DELETE then found none, 1 run in 20).
			io.Copy(io.Discard, resp.Body)
			return resp, ""
		}
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	check := func(name string, resp *http.Response, body string, want int, lacks string) {
		t.Helper()
		if resp.StatusCode != want {
			t.Errorf("%s: %d %q, want %d", name, resp.StatusCode, body, want)
			return
		}
		if want != http.StatusNotAcceptable {
			return
		}
		var msg struct {
			ID    any `json:"id"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(body), &msg) != nil || msg.ID != nil || !strings.Contains(msg.Error.Message, "it lacks "+lacks+")") {
			t.Errorf("%s: %q, want a JSON-RPC error without id saying it lacks %s", name, body, lacks)
		}
	}
	for _, tc := range []struct {
		name   string
		accept []string
		want   int
		lacks  string
	}{
		{"no Accept", nil, 406, "application/json and text/event-stream"},
		{"curl's */*", []string{"*/*"}, 406, "application/json and text/event-stream"},
		{"wildcards", []string{"application/*, text/*"}, 406, "application/json and text/event-stream"},
		{"JSON only", []string{"application/json"}, 406, "text/event-stream"},
		{"event stream only", []string{"text/event-stream"}, 406, "application/json"},
		{"JSON refused by q=0", []string{"application/json;q=0, text/event-stream"}, 406, "application/json"},
		{"both", []string{"application/json, text/event-stream"}, 200, ""},
		{"both, in capitals, with parameters", []string{"Application/JSON; q=0.9, TEXT/event-stream;charset=utf-8"}, 200, ""},
		{"both, on two lines", []string{"text/event-stream", "application/json"}, 200, ""},
	} {
		resp, body := send("POST", tc.accept, initialize)
		check("initialize, "+tc.name, resp, body, tc.want, tc.lacks)
		resp, body = send("POST", tc.accept, discover, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover")
		check("2026-07-28 server/discover, "+tc.name, resp, body, tc.want, tc.lacks)
	}

	resp, _ := send("POST", []string{"application/json, text/event-stream"}, initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	resp, body := send("POST", []string{"application/json, text/event-stream"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	check("initialized", resp, body, http.StatusAccepted, "")
	resp, body = send("POST", []string{"*/*"}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	check("tools/list in a session, */*", resp, body, 406, "application/json and text/event-stream")
	resp, body = send("GET", nil, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	check("GET stream, no Accept", resp, body, 406, "text/event-stream")
	resp, body = send("GET", []string{"*/*"}, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	check("GET stream, */*", resp, body, 406, "text/event-stream")
	resp, body = send("DELETE", nil, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	check("DELETE, no Accept", resp, body, http.StatusNoContent, "")
}

// TestRefusedAnswerThroughGateway: an upstream's answer with two "result"
// members reaches a client of the gateway as a failed call naming the
// server, the tool and what was wrong; before, the client got the last
// result ("smuggled") as the tool's.
func TestRefusedAnswerThroughGateway(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "srv", "-bad-answer", "duplicate-result")}, nil, nil)
	cs := connect(t, base, clientOpts{})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_srv_bad", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	got := textOf(res)
	if !res.IsError || !strings.Contains(got, `server "srv": tool "bad": refused the server's message: duplicate member name "result"`) || strings.Contains(got, "smuggled") {
		t.Errorf("CallTool(mcp_srv_bad) = %q (isError %v); want a tool error naming the server, the tool and the repeated member", got, res.IsError)
	}
	if res := call(t, cs, "mcp_srv_echo", map[string]any{"text": "up"}); textOf(res) != "up" {
		t.Errorf("echo after = %q", textOf(res))
	}
}
