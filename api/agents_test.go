package api_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// TestAgents: an agent listed, run with a prompt over the daemon's host
// (the model, a fake speaking OpenAI's wire format, calls the fixture's
// add tool), its events streamed and kept; an unknown agent, a path and a
// missing prompt are refused; a run cancelled.
func TestAgents(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "adder.md"), []byte("---\nid: adder\ndescription: Adds\nmodel: openai:m\nmcp_servers: [a]\n---\nAdd.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := llmtest.NewOpenAI(t)
	f.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp_a_add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}},
		llmtest.Turn{Text: "It is 5."},
	)
	var steps *agent.Steps
	a := startAPIWith(t, func(o *daemon.Options) {
		steps = &agent.Steps{Config: o.Config, Dirs: []string{dir}, Provider: func(ctx context.Context, spec string) (llm.Provider, string, string, error) {
			p, err := llm.New(f.Config())
			return p, "openai", "m", err
		}}
		o.AgentRunner = api.StepsRunner(steps)
	})

	code, _, body := a.do("GET", "/api/v1/agents", "")
	if code != 200 || !strings.Contains(string(body), `"id":"adder"`) {
		t.Errorf("GET agents: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"no such agent", "/api/v1/agents/nosuch/runs", `{"prompt":"x"}`, 404, ""},
		{"a path", "/api/v1/agents/" + strings.ReplaceAll(filepath.Join(dir, "adder.md"), "/", "%2F") + "/runs", `{"prompt":"x"}`, 404, ""},
		{"no prompt", "/api/v1/agents/adder/runs", `{}`, 422, "prompt"},
		{"unknown field", "/api/v1/agents/adder/runs", `{"prompt":"x","model":"y"}`, 400, "model"},
	} {
		code, h, body := a.do("POST", tc.path, tc.body)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
	}
	code, h, body := a.do("GET", "/api/v1/agent-runs/nosuch", "")
	a.wantProblem("no such agent run", 404, "", code, h, body)

	all := a.openSSE("/api/v1/events") // before the run: it sees all of it
	code, h, body = a.do("POST", "/api/v1/agents/adder/runs", `{"prompt":"What is 2+3?"}`)
	var run struct {
		ID    string `json:"id"`
		State string `json:"state"`
		Text  string `json:"text"`
	}
	if code != 201 || json.Unmarshal(body, &run) != nil || h.Get("Location") != "/api/v1/agent-runs/"+run.ID {
		t.Fatalf("start: %d %v %s", code, h, body)
	}
	s := a.openSSE("/api/v1/agent-runs/" + run.ID + "/events")
	s.waitFor("agent:tool_result", `"tool":"mcp_a_add"`)
	s.waitFor("run:completed", `It is 5.`)
	// The daemon's one stream has them too, named by run and agent.
	all.waitFor("agent-run", `"agent":"adder","type":"run:started"`)
	all.waitFor("agent-run", `"type":"agent:tool_result"`)
	all.waitFor("agent-run", `"type":"run:completed"`)
	if ev, ok := s.next(); ok {
		t.Errorf("the stream goes on after the run's end: %+v", ev)
	}
	code, _, body = a.do("GET", "/api/v1/agent-runs/"+run.ID, "")
	if code != 200 || json.Unmarshal(body, &run) != nil || run.State != "completed" || run.Text != "It is 5." || !strings.Contains(string(body), `"type":"run:started"`) {
		t.Errorf("GET the run: %d %s", code, body)
	}
	if code, _, body := a.do("GET", "/api/v1/agent-runs", ""); code != 200 || !strings.Contains(string(body), run.ID) {
		t.Errorf("GET agent-runs: %d %s", code, body)
	}

	// Cancelled while its tool call is in flight.
	f.Script(llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "mcp_a_slow", Arguments: json.RawMessage(`{"ms":60000}`)}}})
	code, _, body = a.do("POST", "/api/v1/agents/adder/runs", `{"prompt":"wait"}`)
	if code != 201 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("start: %d %s", code, body)
	}
	s = a.openSSE("/api/v1/agent-runs/" + run.ID + "/events")
	s.waitFor("agent:tool_call", `"tool":"mcp_a_slow"`)
	if code, _, body := a.do("POST", "/api/v1/agent-runs/"+run.ID+"/cancel", ""); code != 202 {
		t.Errorf("cancel: %d %s", code, body)
	}
	s.waitFor("run:cancelled", run.ID)
}
