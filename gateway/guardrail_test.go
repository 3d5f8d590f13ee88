package gateway_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
)

// TestGuardrails: the host's guardrails reach a client of the gateway over
// every transport, on the default endpoint and a named one, whose scoped
// rule applies to its calls alone.
func TestGuardrails(t *testing.T) {
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`forbidden`)}}, Action: guardrail.Reject, Direction: guardrail.Results},
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`internal`)}}, Action: guardrail.Flag, Direction: guardrail.Results, Endpoints: []string{"support"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, base := serveWith(t, []config.Server{fixture(t, "fx")}, &host.Options{Guardrails: chain},
		&gateway.Options{Endpoints: []gateway.Endpoint{{}, namedEndpoint("support", []string{"fx"})}}, nil)
	const token = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	for _, kind := range []string{"streamable", "sse", "ws"} {
		for _, prefix := range []string{"", "/e/support"} {
			cs, err := connectAt(t, base, prefix, kind, "")
			if err != nil {
				t.Fatalf("%s %s: %v", kind, prefix, err)
			}
			echo := func(text string) *mcp.CallToolResult {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": text}})
				if err != nil {
					t.Fatalf("%s %s: %v", kind, prefix, err)
				}
				return res
			}
			if got := textOf(echo("token " + token)); got != "token [masked:github-token]" {
				t.Errorf("%s %s: masked result = %q", kind, prefix, got)
			}
			res := echo("a forbidden word")
			if got := textOf(res); !res.IsError || !strings.Contains(got, `guardrail "deny" rejected the result`) || strings.Contains(got, "forbidden word") {
				t.Errorf("%s %s: rejected call = %v %q", kind, prefix, res.IsError, got)
			}
			res = echo("internal note")
			b, _ := json.Marshal(res.Meta[guardrail.MetaKey])
			flagged := strings.Contains(string(b), `"action":"flag"`)
			if flagged != (prefix != "") || textOf(res) != "internal note" {
				t.Errorf("%s %s: flag records %s, text %q", kind, prefix, b, textOf(res))
			}
			if strings.Contains(string(b), "internal note") {
				t.Errorf("the record holds the matched text: %s", b)
			}
		}
	}
}

// TestGuardrailsInTasks: a call that outlives its request (a task, or a
// 2026-07-28 client's bridged call) still knows its endpoint and caller:
// a rule scoped to endpoint b rejects the result of b's task, and the
// same task through the default endpoint completes with it.
func TestGuardrailsInTasks(t *testing.T) {
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`internal`)}}, Action: guardrail.Reject, Direction: guardrail.Results, Endpoints: []string{"b"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := fixture(t, "tk", "-tasks-fixtures")
	srv.ToolTasks = map[string]string{"slow_compute": config.TaskAlways}
	_, base := serveWith(t, []config.Server{srv}, &host.Options{Guardrails: chain},
		&gateway.Options{Tasks: newMemTasks(), TaskTTL: time.Hour, Endpoints: []gateway.Endpoint{gateway.DefaultEndpoint, namedEndpoint("b", nil)}}, nil)
	for _, c := range []struct {
		url    string
		reject bool
	}{{base + "/mcp", false}, {base + "/e/b/mcp", true}} {
		id := createTask(t, c.url, "mcp_tk_slow_compute", map[string]any{"seconds": 0, "label": "internal"})
		res := awaitTask(t, c.url, id, "the task to end", tasktest.Terminal)
		result, _ := res["result"].(map[string]any)
		text := contentText(t, result)
		rejected := result["isError"] == true && strings.Contains(text, `guardrail "deny" rejected the result`)
		if res["status"] != "completed" || rejected != c.reject || rejected == strings.Contains(text, "computed internal") {
			t.Errorf("%s: task = %v; want it completed, rejected by b's rule: %v", c.url, res, c.reject)
		}
	}
}
