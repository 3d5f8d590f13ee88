package llm_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// A model call that streams its answer, asks for a tool, and gets the
// result back. The fake OpenAI server stands in for the real API; with
// llm.Defaults(os.Getenv)["openai"] the same code talks to OpenAI.
func Example() {
	f := llmtest.NewOpenAI(nil) // a test passes its t instead of calling Close
	defer f.Close()
	f.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get-sum", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}},
		llmtest.Turn{Text: "2 + 3 = 5."},
	)
	p, err := llm.New(f.Config())
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	req := &llm.Request{
		Model:    "gpt-4.1-mini",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is 2 + 3?"}},
		Tools: []llm.Tool{{
			Name:        "get-sum",
			Description: "Adds two numbers",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		}},
	}
	resp, err := p.Complete(ctx, req, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	call := resp.Message.ToolCalls[0]
	fmt.Printf("tool call: %s %s\n", call.Name, call.Arguments)

	// Run the tool (here: pretend), then send the result back.
	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Text: "The sum of 2 and 3 is 5."})
	resp, err = p.Complete(ctx, req, func(delta string) { fmt.Printf("delta: %q\n", delta) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("answer:", resp.Message.Text)
	fmt.Printf("usage: %+v\n", resp.Usage)
	// Output:
	// tool call: get-sum {"a":2,"b":3}
	// delta: "2 "
	// delta: "+ "
	// delta: "3 "
	// delta: "= "
	// delta: "5."
	// answer: 2 + 3 = 5.
	// usage: {InputTokens:10 OutputTokens:5}
}
