package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// TestEndToEndTask: an agent calls server-everything's
// simulate-research-query, which requires a task (the host runs it as the
// server's task, host/task.go); the question the task asks reaches the
// run's Elicit handler, and the model gets the report, as from any tool.
func TestEndToEndTask(t *testing.T) {
	ev := interop.Everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "everything", Command: ev[0], Args: append(ev[1:], "stdio")}}, nil)
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	defer h.Close()
	const tool = "mcp_everything_simulate-research-query"
	f := llmtest.NewOpenAI(t)
	f.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_research", Name: tool, Arguments: json.RawMessage(`{"topic":"python","ambiguous":true}`)}}},
		llmtest.Turn{Text: "The report is in."},
	)
	p, err := llm.New(f.Config())
	if err != nil {
		t.Fatal(err)
	}
	var asked string
	a := &Agent{ID: "researcher", Model: "fake:test-model", MaxSteps: 5, System: "You research."}
	evs := collect(t, ctx, &RunOptions{Agent: a, Host: h, Provider: p, Prompt: "Research python.", Tools: []string{tool},
		Elicit: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked = p.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "comedy"}}, nil
		}})
	if l := last(evs); l.Type != EventRunCompleted || l.Text != "The report is in." {
		t.Fatalf("last event %+v, want run:completed", l)
	}
	if !strings.Contains(asked, `"python" could have multiple interpretations`) {
		t.Errorf("Elicit asked %q, want the task's question", asked)
	}
	c := toolResults(evs)["call_research"]
	if c == nil || !*c.Success || !strings.Contains(c.Output, "# Research Report: python (comedy)") {
		t.Fatalf("call_research result %+v, want the report with the answer", c)
	}
	reqs := f.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "Research Report: python (comedy)") {
		t.Errorf("the model's second request does not carry the report")
	}
}
