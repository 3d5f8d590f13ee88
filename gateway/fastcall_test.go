package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
)

// TestFastCallSameAnswers: a 2026-07-28 client's tools/call gets the
// same answer from the fast path (fastcall.go) as from the go-sdk's
// stateless handler, request by request, for what the fast path serves
// (results of every content kind, tool errors, invalid arguments, an
// unknown tool, an input-required result, string and number ids, a
// fractional id and a name given twice, read as the SDK reads them, the
// JSON response) and for what it leaves to the SDK (a progress token, a
// log level, a task, other params, a name that disagrees with Mcp-Name,
// missing or invalid _meta, a batch, bad JSON), which it must not serve.
func TestFastCallSameAnswers(t *testing.T) {
	t.Cleanup(func() { gateway.FastCalls(true) })
	servers := []config.Server{fixture(t, "fx")}
	_, base := serve(t, servers, nil, nil)

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"},"io.modelcontextprotocol/clientCapabilities":{%s}%s}`
	call := func(id, name, args, caps, more string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s,`+meta+`}}`, id, name, args, caps, more)
	}
	for _, tc := range []struct {
		name, body, mcpName string
		json, fast          bool
	}{
		{"echo", call("1", "mcp_fx_echo", `{"text":"hello"}`, "", ""), "mcp_fx_echo", false, true},
		{"string id", call(`"abc"`, "mcp_fx_echo", `{"text":"hello"}`, "", ""), "mcp_fx_echo", false, true},
		{"every content kind", call("2", "mcp_fx_content", `{}`, "", ""), "mcp_fx_content", false, true},
		{"tool error", call("3", "mcp_fx_fail", `{}`, "", ""), "mcp_fx_fail", false, true},
		{"invalid arguments", call("4", "mcp_fx_add", `{"a":"x","b":1}`, "", ""), "mcp_fx_add", false, true},
		{"unknown tool", call("5", "mcp_fx_nope", `{}`, "", ""), "mcp_fx_nope", false, true},
		{"input required", call("6", "mcp_fx_elicit", `{}`, `"elicitation":{}`, ""), "mcp_fx_elicit", false, true},
		{"progress token", call("8", "mcp_fx_progress", `{"steps":2}`, "", `,"progressToken":"p"`), "mcp_fx_progress", false, false},
		{"log level", call("9", "mcp_fx_echo", `{"text":"hello"}`, "", `,"io.modelcontextprotocol/logLevel":"debug"`), "mcp_fx_echo", false, false},
		{"tasks declared", call("10", "mcp_fx_echo", `{"text":"hello"}`, `"extensions":{"`+gateway.TasksExtension+`":{}}`, ""), "mcp_fx_echo", false, false},
		{"Mcp-Name disagrees", call("11", "mcp_fx_echo", `{"text":"hello"}`, "", ""), "mcp_fx_add", false, false},
		{"other params", strings.Replace(call("12", "mcp_fx_echo", `{"text":"hello"}`, "", ""), `"name"`, `"task":{},"name"`, 1), "mcp_fx_echo", false, false},
		{"a name twice", strings.Replace(call("13", "mcp_fx_echo", `{"text":"hello"}`, "", ""), `"name"`, `"name":"mcp_fx_add","name"`, 1), "mcp_fx_echo", false, true},
		{"no capabilities", strings.Replace(call("14", "mcp_fx_echo", `{"text":"hello"}`, "", ""), `,"io.modelcontextprotocol/clientCapabilities":{}`, "", 1), "mcp_fx_echo", false, false},
		{"capabilities not an object", call("15", "mcp_fx_echo", `{"text":"hello"}`, `"elicitation":5`, ""), "mcp_fx_echo", false, false},
		{"capabilities of the wrong type", call("20", "mcp_fx_echo", `{"text":"hello"}`, `"roots":{"listChanged":"yes"}`, ""), "mcp_fx_echo", false, false},
		{"fractional id", call("16.5", "mcp_fx_echo", `{"text":"hello"}`, "", ""), "mcp_fx_echo", false, true},
		{"batch", "[" + call("17", "mcp_fx_echo", `{"text":"hello"}`, "", "") + "]", "mcp_fx_echo", false, false},
		{"nested deeper than the SDK takes", call("21", "mcp_fx_echo", `{"text":"hello","deep":`+strings.Repeat("[", 1000)+strings.Repeat("]", 1000)+`}`, "", ""), "mcp_fx_echo", false, false},
		{"bad JSON", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{`, "mcp_fx_echo", false, false},
		{"JSON response", call("7", "mcp_fx_echo", `{"text":"hello"}`, "", ""), "mcp_fx_echo", true, true},
		{"JSON response, unknown tool", call("19", "mcp_fx_nope", `{}`, "", ""), "mcp_fx_nope", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := base
			if tc.json {
				// A gateway of its own, which ends with the subtest.
				_, url = serve(t, servers, nil, &gateway.HTTPOptions{JSONResponse: true})
			}
			before := gateway.FastCalls(true)
			fastStatus, fastType, fastBody := post2026(t, url, tc.body, tc.mcpName)
			if served := gateway.FastCalls(false) - before; served != int64(boolInt(tc.fast)) {
				t.Errorf("the fast path served %d requests, want %d", served, boolInt(tc.fast))
			}
			sdkStatus, sdkType, sdkBody := post2026(t, url, tc.body, tc.mcpName)
			if fastStatus != sdkStatus || fastType != sdkType {
				t.Errorf("fast path: %d %s, SDK: %d %s", fastStatus, fastType, sdkStatus, sdkType)
			}
			if f, s := normalize(fastBody), normalize(sdkBody); !reflect.DeepEqual(f, s) {
				t.Errorf("fast path answered\n%s\nthe SDK\n%s", fastBody, sdkBody)
			}
		})
	}
}

// post2026 posts body to the gateway as a 2026-07-28 client's tools/call,
// and returns the status, the content type and the answer: the data of an
// event stream's one event, or the body.
func post2026(t *testing.T, base, body, name string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, ct, string(b)
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	return resp.StatusCode, ct, strings.Join(data, "\n")
}

// volatile are the values that differ from call to call whichever path
// serves it: an input-required result's requestState and its questions'
// keys, which are the gateway's random ids.
var (
	volatileState = regexp.MustCompile(`"requestState":"[^"]*"`)
	volatileKey   = regexp.MustCompile(`"[0-9a-f]{32}":`)
)

// normalize is an answer as JSON values, for comparing: the same answer
// in another member order or spacing is equal.
func normalize(s string) any {
	s = volatileState.ReplaceAllString(s, `"requestState":"X"`)
	s = volatileKey.ReplaceAllString(s, `"K":`)
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return strings.TrimSpace(s) // not JSON: compared as text
	}
	return v
}
