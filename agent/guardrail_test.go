package agent

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
)

// TestRunGuardrails: an agent's tool calls go through the host's
// guardrails: the model gets the masked result, the tool_result event
// lists what the guardrails did (never the matched text), and a rejected
// call is an error result of code "guardrail" naming the rule.
func TestRunGuardrails(t *testing.T) {
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`forbidden`)}}, Action: guardrail.Reject, Direction: guardrail.Results, Name: "no-forbidden"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := startFixture(t, 10*time.Second, &host.Options{Guardrails: chain})
	const token = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask(`c1 mcp_t_echo {"text":"token `+token+`"}`, `c2 mcp_t_echo {"text":"a forbidden word"}`),
		say("done"),
	}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 5}, Host: h, Provider: p, Model: "m", Prompt: "go"})
	if l := last(evs); l.Type != EventRunCompleted {
		t.Fatalf("last event %+v", l)
	}
	res := toolResults(evs)
	if c := res["c1"]; c == nil || c.ErrorCode != "" || len(c.Guardrails) != 1 || c.Guardrails[0].Kind != "github-token" || c.Guardrails[0].Action != guardrail.Mask {
		t.Errorf("c1 result = %+v", c)
	}
	if c := res["c2"]; c == nil || c.ErrorCode != CallGuardrail || !strings.Contains(c.Output, `guardrail "no-forbidden" rejected the result`) || strings.Contains(c.Output, "forbidden word") {
		t.Errorf("c2 result = %+v", c)
	}
	for _, m := range p.requests()[1].Messages {
		if m.Role == llm.RoleTool && strings.Contains(m.Text, token) {
			t.Errorf("the model got the token: %q", m.Text)
		}
	}
}
