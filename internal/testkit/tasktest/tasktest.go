// Package tasktest is how Switchboard's tests speak the MCP tasks
// extension (SEP-2663) to a gateway: as a raw 2026-07-28 client, one
// stateless POST per request, since the go-sdk's client knows no tasks.
// [Post] sends one request with the request's _meta and headers a
// 2026-07-28 client sends (Mcp-Method, and Mcp-Name from the tool's name
// or the task's id); [Await] polls tasks/get until a condition holds.
// The gateway's tests, the daemon's (a published workflow as a task), the
// API's and the replicas' (internal/testkit/replicatest) share them.
package tasktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// Caps are client capabilities declaring the tasks extension, and
// elicitation (a task of a workflow with a gate asks).
var Caps = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{gateway.TasksExtension: map[string]any{}}}

// An Answer is a JSON-RPC answer to one POST.
type Answer struct {
	// Status is the HTTP status of the POST.
	Status int            `json:"-"`
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// Must is a's result; an error fails the test.
func (a Answer) Must(t testing.TB) map[string]any {
	t.Helper()
	if a.Error != nil {
		t.Fatalf("error %d: %s", a.Error.Code, a.Error.Message)
	}
	return a.Result
}

// client bounds each POST: a gateway that never answers fails the test
// rather than hanging it.
var client = &http.Client{Timeout: 2 * time.Minute}

// Post POSTs one 2026-07-28 request to url (an MCP endpoint), statelessly,
// with caps as the request's client capabilities (nil: none declared), and
// the headers given as name, value pairs (a header set to "" is left out).
func Post(t testing.TB, url, method string, params map[string]any, caps map[string]any, header ...string) Answer {
	t.Helper()
	return Do(t, client, url, method, params, caps, header...)
}

// Do is Post through hc.
func Do(t testing.TB, hc *http.Client, url, method string, params map[string]any, caps map[string]any, header ...string) Answer {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasktest", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	} else if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s to %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The answer is the event that carries the request's id.
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				data = []byte(d)
			}
		}
	} else {
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		data = buf.Bytes()
	}
	a := Answer{Status: resp.StatusCode}
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("%s to %s: status %d, answer %q: %v", method, url, resp.StatusCode, data, err)
	}
	return a
}

// Create calls tool with args on url declaring the tasks extension; the
// call must become a task. It returns the task's id and the
// CreateTaskResult.
func Create(t testing.TB, url, tool string, args map[string]any, header ...string) (string, map[string]any) {
	t.Helper()
	a := Post(t, url, "tools/call", map[string]any{"name": tool, "arguments": args}, Caps, header...)
	id, _ := a.Result["taskId"].(string)
	if a.Error != nil || a.Result["resultType"] != "task" || id == "" {
		t.Fatalf("%s on %s: %+v %v; want a task", tool, url, a.Error, a.Result)
	}
	return id, a.Result
}

// Await polls tasks/get of task id on url until cond holds of its answer,
// for up to bound, and returns that answer; an error answer fails the
// test.
func Await(t testing.TB, url, id, what string, bound time.Duration, cond func(map[string]any) bool, header ...string) map[string]any {
	t.Helper()
	return wait.Within(t, bound, what, func() (map[string]any, bool) {
		a := Post(t, url, "tasks/get", map[string]any{"taskId": id}, Caps, header...)
		if a.Error != nil {
			t.Fatalf("tasks/get %s on %s: %+v", id, url, a.Error)
		}
		return a.Result, cond(a.Result)
	})
}

// Terminal reports whether a tasks/get answer is of a task that ended.
func Terminal(res map[string]any) bool {
	s, _ := res["status"].(string)
	return gateway.TaskTerminal(s)
}

// ResultText is the text of the first content block of a tool result
// (or of a completed task's tasks/get answer: of its result); "" for none.
func ResultText(res map[string]any) string {
	if r, ok := res["result"].(map[string]any); ok {
		res = r
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	block, _ := content[0].(map[string]any)
	s, _ := block["text"].(string)
	return s
}
