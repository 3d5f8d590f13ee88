package agent

import (
	"context"
	"encoding/json"
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

// TestToolCallArgumentsGuarded: an AWS key the model puts in a tool's
// arguments, under a credentials rule that masks arguments, is in no event
// of the run: the tool_call event has the arguments the server is sent
// (masked), before the call's tool_result; a call a guardrail rejects, or
// whose arguments are invalid, has none; a run_code program's call is
// reported masked too (the program spells the key in two halves).
func TestToolCallArgumentsGuarded(t *testing.T) {
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`forbidden`)}}, Action: guardrail.Reject, Direction: guardrail.Arguments, Name: "no-forbidden"},
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Arguments, Name: "keys"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := startFixture(t, 10*time.Second, &host.Options{Guardrails: chain})
	const key = "AKIAIOSFODNN7EXAMPLE"
	check := func(t *testing.T, evs []Event) map[string]*Call {
		t.Helper()
		if l := last(evs); l.Type != EventRunCompleted {
			t.Fatalf("last event %+v", l)
		}
		b, err := json.Marshal(evs)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) {
			t.Errorf("the run's events hold the key:\n%s", b)
		}
		calls := map[string]*Call{}
		for _, ev := range evs {
			switch ev.Type {
			case EventToolCall:
				calls[ev.Call.ID] = ev.Call
			case EventToolResult:
				if calls[ev.Call.ID] == nil {
					t.Errorf("tool_result %s before its tool_call", ev.Call.ID)
				}
			}
		}
		return calls
	}

	t.Run("direct", func(t *testing.T) {
		p := &scripted{turns: []turnFunc{
			ask(`c1 mcp_t_echo {"text":"key `+key+`"}`, `c2 mcp_t_echo {"text":"forbidden `+key+`"}`, `c3 mcp_t_add {"a":"`+key+`","b":1}`),
			say("done"),
		}}
		evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 5}, Host: h, Provider: p, Model: "m", Prompt: "go"})
		calls := check(t, evs)
		if c := calls["c1"]; c == nil || string(c.Arguments) != `{"text":"key [masked:aws-access-key]"}` {
			t.Errorf("tool_call c1 = %+v, want the masked arguments", c)
		}
		for _, id := range []string{"c2", "c3"} {
			if c := calls[id]; c == nil || c.Arguments != nil {
				t.Errorf("tool_call %s = %+v, want it without arguments (refused by the host)", id, c)
			}
		}
		res := toolResults(evs)
		if c := res["c1"]; c == nil || c.ErrorCode != "" || !strings.Contains(c.Output, "[masked:aws-access-key]") {
			t.Errorf("c1 result = %+v, want the echo of the masked key", c)
		}
		if c := res["c2"]; c == nil || c.ErrorCode != CallGuardrail {
			t.Errorf("c2 result = %+v, want rejected by a guardrail", c)
		}
		if c := res["c3"]; c == nil || c.ErrorCode != CallInvalidArguments {
			t.Errorf("c3 result = %+v, want invalid arguments", c)
		}
	})

	t.Run("run_code", func(t *testing.T) {
		b, _ := json.Marshal(map[string]string{"code": `return await tools.t.echo({text: "key " + "AKIA" + "IOSFODNN7EXAMPLE"});`})
		p := &scripted{turns: []turnFunc{ask("r1 run_code " + string(b)), say("done")}}
		evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 5, ToolMode: ToolModeCode}, Host: h, Provider: p, Model: "m", Prompt: "go"})
		calls := check(t, evs)
		if c := calls["r1.1"]; c == nil || c.Via != "run_code" || string(c.Arguments) != `{"text":"key [masked:aws-access-key]"}` {
			t.Errorf("tool_call r1.1 = %+v, want the masked arguments", c)
		}
	})
}
