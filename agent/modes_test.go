package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
	"github.com/switchboardmcp/switchboard/toolmode"
)

type turnFunc = func(context.Context, *llm.Request, func(string)) (*llm.Response, error)

// toolNamesOf are the names of the tools a request gave the model.
func toolNamesOf(req *llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// toolMessages are the tool results the model got in req, by call id.
func toolMessages(req *llm.Request) map[string]llm.Message {
	out := map[string]llm.Message{}
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			out[m.ToolCallID] = m
		}
	}
	return out
}

// TestToolModeAuto: auto gives the model search_tools and call_tool when
// the run has more tools than search_above, else every tool; all and
// search say so whatever the count; run:started names the mode.
func TestToolModeAuto(t *testing.T) {
	h := startFixture(t, 5*time.Second, nil)
	n := len(h.Tools())
	for _, tc := range []struct {
		name  string
		agent Agent
		want  string
	}{
		{"auto under the default", Agent{}, ToolModeAll},
		{"auto above search_above", Agent{SearchAbove: n - 1}, ToolModeSearch},
		{"auto at search_above", Agent{ToolMode: ToolModeAuto, SearchAbove: n}, ToolModeAll},
		{"search", Agent{ToolMode: ToolModeSearch}, ToolModeSearch},
		{"all above search_above", Agent{ToolMode: ToolModeAll, SearchAbove: 1}, ToolModeAll},
		{"code", Agent{ToolMode: ToolModeCode}, ToolModeCode},
		// max_tools narrows first: what is left is counted.
		{"max_tools under search_above", Agent{MaxTools: 2, SearchAbove: 3}, ToolModeAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.agent
			a.ID = "a"
			p := &scripted{turns: []turnFunc{say("hi")}}
			evs := collect(t, context.Background(), &RunOptions{Agent: &a, Host: h, Provider: p, Model: "m", Prompt: "add numbers"})
			if evs[0].ToolMode != tc.want {
				t.Errorf("run:started tool_mode %q, want %q", evs[0].ToolMode, tc.want)
			}
			got := toolNamesOf(p.requests()[0])
			switch tc.want {
			case ToolModeSearch:
				if strings.Join(got, ",") != "search_tools,call_tool" {
					t.Errorf("search mode gave the model %v", got)
				}
			case ToolModeCode:
				if strings.Join(got, ",") != "search_tools,run_code" {
					t.Errorf("code mode gave the model %v", got)
				}
			default:
				if len(got) != len(evs[0].Tools) || len(got) < 2 {
					t.Errorf("mode all gave the model %v, want the run's %v", got, evs[0].Tools)
				}
			}
		})
	}
}

// TestSearchModeRun: the model searches, then calls what it found through
// call_tool; the call is the direct call's (its result, its events, which
// name the tool and say via call_tool). A tool called by its own name, an
// unusable call_tool, a tool not found and an empty query are error
// results the model reads.
func TestSearchModeRun(t *testing.T) {
	h := startFixture(t, 5*time.Second, nil)
	p := &scripted{turns: []turnFunc{
		ask(`s1 search_tools {"query":"add two numbers","limit":3}`, `s2 search_tools {"query":""}`),
		ask(`c1 call_tool {"name":"mcp_t_add","arguments":{"a":2,"b":3}}`,
			`c2 mcp_t_add {"a":1,"b":1}`,
			`c3 call_tool {"arguments":{}}`,
			`c4 call_tool {"name":"mcp_t_nope"}`,
			`c5 call_tool {"name":"mcp_t_fail","arguments":{}}`),
		say("5"),
	}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", ToolMode: ToolModeSearch}, Host: h, Provider: p, Model: "m", Prompt: "what is 2+3?"})
	if l := last(evs); l.Type != EventRunCompleted {
		t.Fatalf("last event %+v", l)
	}
	reqs := p.requests()
	found := toolMessages(reqs[1])
	var answer struct{ Tools []toolmode.Found }
	if err := json.Unmarshal([]byte(found["s1"].Text), &answer); err != nil || len(answer.Tools) == 0 || answer.Tools[0].Name != "mcp_t_add" || answer.Tools[0].InputSchema == nil {
		t.Errorf("search_tools(add two numbers) = %q (%v), want mcp_t_add first with its schema", found["s1"].Text, err)
	}
	if m := found["s2"]; !m.IsError || !strings.Contains(m.Text, "query is empty") {
		t.Errorf("search_tools with an empty query = %+v", m)
	}
	got := toolMessages(reqs[2])
	if m := got["c1"]; m.IsError || m.Text != "5" {
		t.Errorf("call_tool(mcp_t_add) = %+v, want 5", m)
	}
	for id, want := range map[string]string{
		"c2": `there is no tool "mcp_t_add" here: find tools with search_tools and call them with call_tool`,
		"c3": "call_tool: arguments must be an object with name",
		"c4": `there is no tool "mcp_t_nope"`,
		"c5": "always fails",
	} {
		if m := got[id]; !m.IsError || !strings.Contains(m.Text, want) {
			t.Errorf("%s = %+v, want an error result with %q", id, m, want)
		}
	}
	res := toolResults(evs)
	for id, want := range map[string]Call{
		"s1": {Tool: "search_tools"},
		"c1": {Tool: "mcp_t_add", Via: "call_tool"},
		"c2": {Tool: "mcp_t_add", ErrorCode: CallUnknownTool},
		"c3": {Tool: "call_tool", ErrorCode: CallInvalidArguments},
		"c4": {Tool: "mcp_t_nope", Via: "call_tool", ErrorCode: CallUnknownTool},
		"c5": {Tool: "mcp_t_fail", Via: "call_tool", ErrorCode: CallToolError},
	} {
		c := res[id]
		if c == nil || c.Tool != want.Tool || c.Via != want.Via || c.ErrorCode != want.ErrorCode {
			t.Errorf("tool_result %s = %+v, want tool %q via %q error %q", id, c, want.Tool, want.Via, want.ErrorCode)
		}
	}
	for _, ev := range evs {
		if ev.Type == EventToolCall && ev.Call.ID == "c1" && (ev.Call.Tool != "mcp_t_add" || string(ev.Call.Arguments) != `{"a":2,"b":3}`) {
			t.Errorf("tool_call c1 = %+v, want mcp_t_add with its own arguments", ev.Call)
		}
	}
}

// TestCodeModeRun: run_code's program calls the run's tools as
// tools.<server>.<tool> through the direct call's path (each call an event
// of its own, via run_code); its value and console output go back to the
// model. A tool's error the program does not catch, a budget spent (here
// code_budget's max_calls) and a syntax error go back as error results;
// the run goes on. run_code's description declares the tools.
func TestCodeModeRun(t *testing.T) {
	h := startFixture(t, 5*time.Second, nil)
	code := func(id, program string) string {
		b, _ := json.Marshal(map[string]string{"code": program})
		return id + " run_code " + string(b)
	}
	p := &scripted{turns: []turnFunc{
		ask(code("r1", `const a = await tools.t.add({a: 2, b: 3});
const b = await tools.t.add({a: a.sum, b: 10});
console.log("first", a.sum);
return {total: b.sum};`),
			code("r2", `await tools.t.fail({}); return "unreached";`),
			code("r3", `for (let i = 0; i < 5; i++) await tools.t.add({a: i, b: i}); return "unreached";`),
			code("r4", `return (;`),
			`r5 search_tools {"query":"echo text back"}`),
		say("15"),
	}}
	a := &Agent{ID: "a", ToolMode: ToolModeCode, CodeBudget: codemode.Budget{MaxCalls: 3}}
	evs := collect(t, context.Background(), &RunOptions{Agent: a, Host: h, Provider: p, Model: "m", Prompt: "add 2 and 3, then 10"})
	if l := last(evs); l.Type != EventRunCompleted {
		t.Fatalf("last event %+v", l)
	}
	reqs := p.requests()
	var desc string
	for _, tl := range reqs[0].Tools {
		if tl.Name == "run_code" {
			desc = tl.Description
		}
	}
	if !strings.Contains(desc, "declare const tools") || !strings.Contains(desc, "add(args: {") {
		t.Errorf("run_code's description has no declarations of the tools:\n%s", desc)
	}
	got := toolMessages(reqs[1])
	if m := got["r1"]; m.IsError || m.Text != "{\"total\":15}\nconsole:\nfirst 5\n" {
		t.Errorf("r1 = %+v, want the value and the console", m)
	}
	for id, want := range map[string]string{
		"r2": "tools.t.fail: ",
		"r3": "tool calls",
		"r4": "syntax error",
	} {
		if m := got[id]; !m.IsError || !strings.Contains(m.Text, want) {
			t.Errorf("%s = %+v, want an error result with %q", id, m, want)
		}
	}
	if m := got["r5"]; m.IsError || !strings.Contains(m.Text, `"function":"tools.t.echo"`) {
		t.Errorf("search_tools in code mode = %+v, want each tool's function", m)
	}
	res := toolResults(evs)
	for id, want := range map[string]Call{
		"r1":   {Tool: "run_code"},
		"r1.1": {Tool: "mcp_t_add", Via: "run_code"},
		"r1.2": {Tool: "mcp_t_add", Via: "run_code"},
		"r2":   {Tool: "run_code", ErrorCode: CallCodeError},
		"r2.1": {Tool: "mcp_t_fail", Via: "run_code", ErrorCode: CallToolError},
		"r3":   {Tool: "run_code", ErrorCode: CallCodeBudget},
		"r4":   {Tool: "run_code", ErrorCode: CallCodeError},
	} {
		c := res[id]
		if c == nil || c.Tool != want.Tool || c.Via != want.Via || c.ErrorCode != want.ErrorCode {
			t.Errorf("tool_result %s = %+v, want tool %q via %q error %q", id, c, want.Tool, want.Via, want.ErrorCode)
		}
	}
	if c := res["r3.4"]; c != nil {
		t.Errorf("a fourth call past max_calls 3 was made: %+v", c)
	}
}

// TestParseToolModes: the keys as a file writes them.
func TestParseToolModes(t *testing.T) {
	a, err := Parse("a.yaml", []byte("tool_mode: code\nsearch_above: 10\ncode_budget: {cpu_time: 1s, wall_time: 1m, max_calls: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.ToolMode != ToolModeCode || a.SearchAbove != 10 || a.CodeBudget != (codemode.Budget{CPUTime: time.Second, WallTime: time.Minute, MaxCalls: 3}) {
		t.Errorf("Parse = %+v", a)
	}
}

// TestStepsToolMode: a workflow's agent step runs its agent file's
// tool_mode: here code, where the model gets search_tools and run_code
// and its program reaches server a only through the step's tools.
func TestStepsToolMode(t *testing.T) {
	h, cfg, logs := twoServers(t)
	file := filepath.Join(t.TempDir(), "coder.md")
	if err := os.WriteFile(file, []byte("---\nmodel: fake:m\ntool_mode: code\n---\nHelp.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := llmtest.NewOpenAI(t)
	s := &Steps{Config: cfg, Host: h, Provider: func(ctx context.Context, spec string) (llm.Provider, string, string, error) {
		p, err := llm.New(f.Config())
		return p, "fake", "m", err
	}}
	args, _ := json.Marshal(map[string]string{"code": `return await tools.a.echo({text: "hi"});`})
	f.Script(llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "r1", Name: "run_code", Arguments: args}}}, llmtest.Turn{Text: "done"})
	res, err := s.Run(context.Background(), file, "go", &Overrides{MCP: []string{"a"}})
	if err != nil || res.Text != "done" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	reqs := f.Requests()
	if got := offered(t, reqs[0]); !slices.Equal(got, []string{"search_tools", "run_code"}) {
		t.Errorf("the step's model was offered %q, want search_tools and run_code", got)
	}
	if b := string(reqs[1].Body); !strings.Contains(b, `\"hi\"`) {
		t.Errorf("the program's value did not reach the model: %s", b)
	}
	if got := calls(t, logs["a"]); len(got) != 1 || !strings.HasPrefix(got[0], "echo") {
		t.Errorf("server a's calls = %q, want the program's echo", got)
	}
}
