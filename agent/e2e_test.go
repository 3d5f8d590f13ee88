package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// TestEndToEnd runs an agent against the real server-everything, with the
// model played by llmtest's fakes (OpenAI's and Anthropic's wire formats,
// streamed, driven by the real SDKs): the model asks for get-sum, gets the
// real result, and answers with it; an invalid-arguments call reaches the
// model as an error result.
func TestEndToEnd(t *testing.T) {
	ev := interop.Everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "everything", Command: ev[0], Args: append(ev[1:], "stdio")}}, nil)
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	defer h.Close()

	for _, tc := range []struct {
		name string
		fake func(testing.TB) *llmtest.Fake
	}{
		{"openai", llmtest.NewOpenAI},
		{"anthropic", llmtest.NewAnthropic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fake(t)
			f.Script(
				llmtest.Turn{Text: "Let me add.", ToolCalls: []llm.ToolCall{
					{ID: "call_sum", Name: "mcp_everything_get-sum", Arguments: json.RawMessage(`{"a":2,"b":3}`)},
					{ID: "call_bad", Name: "mcp_everything_get-sum", Arguments: json.RawMessage(`{"a":"two"}`)},
				}},
				llmtest.Turn{Text: "The sum of 2 and 3 is 5."},
			)
			p, err := llm.New(f.Config())
			if err != nil {
				t.Fatal(err)
			}
			a := &Agent{ID: "calc", Model: "fake:test-model", MaxSteps: 5, System: "You add."}
			evs := collect(t, ctx, &RunOptions{Agent: a, Host: h, Provider: p, Prompt: "What is 2+3?", Tools: []string{"mcp_everything_get-sum"}})
			l := last(evs)
			if l.Type != EventRunCompleted || l.Text != "The sum of 2 and 3 is 5." {
				t.Fatalf("last event %+v, want run:completed with the answer", l)
			}
			res := toolResults(evs)
			if c := res["call_sum"]; c == nil || !*c.Success || !strings.Contains(c.Output, "The sum of 2 and 3 is 5") {
				t.Errorf("call_sum result %+v, want the server's sum", c)
			}
			if c := res["call_bad"]; c == nil || c.ErrorCode != CallInvalidArguments {
				t.Errorf("call_bad result %+v, want invalid_arguments", c)
			}
			tokens := 0
			for _, e := range evs {
				if e.Type == EventToken {
					tokens++
				}
			}
			if tokens < 2 {
				t.Errorf("%d agent:token events, want the answer streamed", tokens)
			}

			reqs := f.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the fake got %d requests, want 2", len(reqs))
			}
			var body map[string]any
			if err := reqs[1].Decode(&body); err != nil {
				t.Fatal(err)
			}
			sum, bad := toolResultsSent(t, tc.name, body)
			if !strings.Contains(sum.text, "The sum of 2 and 3 is 5") || sum.isError {
				t.Errorf("the model got get-sum's result %+v, want the real sum", sum)
			}
			if !strings.Contains(bad.text, "invalid arguments") && !strings.Contains(bad.text, "/a") {
				t.Errorf("the model got the invalid call's result %+v, want the schema's complaint", bad)
			}
			if tc.name == "anthropic" && !bad.isError {
				t.Errorf("the invalid call's tool_result is not is_error: %+v", bad)
			}
			// Said once: Anthropic's is_error, or one "Error: " for Chat
			// Completions, before the host's message (not "Error: error: ").
			want := map[string]string{"openai": "Error: ", "anthropic": ""}[tc.name] + `server "everything": tool "get-sum": invalid arguments: `
			if !strings.HasPrefix(bad.text, want) {
				t.Errorf("the model got the invalid call's result %q, want it to start %q", bad.text, want)
			}
			if !strings.Contains(string(reqs[0].Body), "get-sum") {
				t.Errorf("the first request does not offer get-sum: %s", reqs[0].Body)
			}
		})
	}
}

type sentResult struct {
	text    string
	isError bool
}

// toolResultsSent finds the tool results of call_sum and call_bad in a
// request body, in the provider's own format.
func toolResultsSent(t *testing.T, provider string, body map[string]any) (sum, bad sentResult) {
	t.Helper()
	found := map[string]sentResult{}
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		switch provider {
		case "openai":
			if m["role"] == "tool" {
				id, _ := m["tool_call_id"].(string)
				found[id] = sentResult{text: flatten(m["content"])}
			}
		case "anthropic":
			blocks, _ := m["content"].([]any)
			for _, b := range blocks {
				b, _ := b.(map[string]any)
				if b["type"] == "tool_result" {
					id, _ := b["tool_use_id"].(string)
					isErr, _ := b["is_error"].(bool)
					found[id] = sentResult{text: flatten(b["content"]), isError: isErr}
				}
			}
		}
	}
	if len(found) != 2 {
		t.Fatalf("%s request carries tool results %+v, want call_sum and call_bad", provider, found)
	}
	return found["call_sum"], found["call_bad"]
}

// flatten returns the text of a string or a list of text blocks.
func flatten(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				s, _ := m["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}
