package cli_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/toolfixture"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// runEvent is what the tests read of run --json's events.
type runEvent struct {
	Type     string   `json:"type"`
	Tools    []string `json:"tools"`
	ToolMode string   `json:"tool_mode"`
	Text     string   `json:"text"`
	Call     *struct {
		ID        string `json:"id"`
		Tool      string `json:"tool"`
		Via       string `json:"via"`
		Success   *bool  `json:"success"`
		ErrorCode string `json:"error_code"`
		Output    string `json:"output"`
	} `json:"call"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func readEvents(t *testing.T, stdout string) []runEvent {
	t.Helper()
	var evs []runEvent
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev runEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("run --json line %q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestRunCodeModeTokens is issue 27's proof for code mode: the same
// three-tool chain (read a GitHub issue, file a Jira ticket from it, post
// the ticket in Slack) done by `switchboard run` over the 500-tool fixture
// (ten testserver children, -tools-file), once in mode all with three
// direct tool-call turns, once in code mode (--tool-mode code) with one
// run_code turn whose program makes the three calls. The fake provider
// (llmtest, OpenAI's wire format) reports each request's input tokens as
// js-tiktoken (o200k_base) counts the request the SDK sent; the code-mode
// run must use at least 80 % fewer input tokens, by the run's usage.
func TestRunCodeModeTokens(t *testing.T) {
	fake, cfg := modesSetup(t)
	tok := interop.NewTokenizer(t)
	fake.InputTokens = func(body []byte) (int, error) { return tok.Count(string(body)) }
	const prompt = "Read issue 42 of acme/api on GitHub, file a Jira bug in project OPS for it, and post the Jira ticket in the #ops Slack channel."
	calls := []llm.ToolCall{
		{ID: "c1", Name: "mcp_github_get_issue", Arguments: json.RawMessage(`{"owner":"acme","repo":"api","issue_number":42}`)},
		{ID: "c2", Name: "mcp_jira_create_jira_issue", Arguments: json.RawMessage(`{"project_key":"OPS","summary":"acme/api#42","issue_type":"Bug","description":"From GitHub acme/api#42"}`)},
		{ID: "c3", Name: "mcp_slack_post_message", Arguments: json.RawMessage(`{"channel":"#ops","text":"Filed OPS ticket for acme/api#42"}`)},
	}
	const answer = "Filed the Jira bug and posted it in #ops."

	program := `const issue = await tools.github.get_issue({owner: "acme", repo: "api", issue_number: 42});
const ticket = await tools.jira.create_jira_issue({project_key: "OPS", summary: "acme/api#42", issue_type: "Bug", description: "From GitHub: " + issue});
const posted = await tools.slack.post_message({channel: "#ops", text: "Filed " + ticket});
return {posted: posted.length > 0};`
	args, _ := json.Marshal(map[string]string{"code": program})
	for _, tc := range []struct {
		name string
		mcp  []string // --mcp; nil: the ten servers
	}{
		{"ten servers", nil},
		{"the chain's three servers", []string{"--mcp", "github,jira,slack"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Mode all: one call per turn, each result read before the next.
			for _, c := range calls {
				fake.Script(llmtest.Turn{ToolCalls: []llm.ToolCall{c}})
			}
			fake.Script(llmtest.Turn{Text: answer})
			direct, n := runTokens(t, cfg, prompt, "all", tc.mcp)
			// Code mode: one program makes the chain.
			// run_code's description declares the 20 tools that best
			// match the prompt: Jira's and Slack's are among them, not
			// get_issue, which the model finds with search_tools first.
			fake.Script(
				llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "s1", Name: "search_tools", Arguments: json.RawMessage(`{"query":"get a github issue","limit":3}`)}}},
				llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "r1", Name: "run_code", Arguments: args}}},
				llmtest.Turn{Text: answer})
			before := len(fake.Requests())
			code, _ := runTokens(t, cfg, prompt, "code", tc.mcp)
			var req struct {
				Tools []struct {
					Function struct{ Name, Description string } `json:"function"`
				} `json:"tools"`
			}
			fake.Requests()[before].Decode(&req)
			for _, tl := range req.Tools {
				if tl.Function.Name != "run_code" {
					continue
				}
				for _, fn := range []string{"create_jira_issue(args", "post_message(args"} {
					if !strings.Contains(tl.Function.Description, fn) {
						t.Errorf("run_code's description does not declare %s…):\n%s", fn, tl.Function.Description)
					}
				}
			}

			saved := 1 - float64(code)/float64(direct)
			if got := string(fake.Requests()[before+1].Body); !strings.Contains(got, `\"function\":\"tools.github.get_issue\"`) {
				t.Errorf("search_tools(get a github issue) did not name tools.github.get_issue: %.3000s", got)
			}
			t.Logf("three-tool chain over %d tools: mode all %d input tokens (4 model calls), code mode %d (3 model calls: search_tools, run_code, the answer): %.1f %% fewer (js-tiktoken %s, o200k_base, over each request's body)",
				n, direct, code, 100*saved, interop.JSTiktokenVersion)
			if saved < 0.8 {
				t.Errorf("code mode used %d input tokens against %d in mode all: %.1f %% fewer, want at least 80 %%", code, direct, 100*saved)
			}
		})
	}
}

// runTokens runs the ops agent with --tool-mode mode (and more flags) and
// returns its input tokens and its number of tools, checking that the run
// completed with the chain's three calls of the fixture's tools.
func runTokens(t *testing.T, cfg, prompt, mode string, more []string) (tokens, tools int) {
	t.Helper()
	stdout, stderr, code := runMain(append([]string{"--config", cfg, "run", "ops", "--json", "--tool-mode", mode, "--prompt", prompt}, more...)...)
	if code != 0 {
		t.Fatalf("run --tool-mode %s = %d, stderr %q", mode, code, stderr)
	}
	evs := readEvents(t, stdout)
	first, last := evs[0], evs[len(evs)-1]
	if first.ToolMode != mode || len(first.Tools) < 150 {
		t.Errorf("run --tool-mode %s: run:started tool_mode %q with %d tools", mode, first.ToolMode, len(first.Tools))
	}
	ok := 0
	for _, ev := range evs {
		if ev.Type == "agent:tool_result" && ev.Call.Success != nil && *ev.Call.Success && strings.HasPrefix(ev.Call.Output, "called ") {
			ok++
		}
	}
	if last.Type != "run:completed" || last.Usage == nil || ok != 3 {
		t.Fatalf("run --tool-mode %s: last event %+v, %d tool calls succeeded (want 3)", mode, last, ok)
	}
	return last.Usage.InputTokens, len(first.Tools)
}

// modesSetup is runSetup with the 500-tool fixture's ten servers and an
// agent "ops" that uses them all.
func modesSetup(t *testing.T) (*llmtest.Fake, string) {
	fake, cfg := runSetup(t)
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	var b strings.Builder
	for _, s := range toolfixture.Servers() {
		fmt.Fprintf(&b, "[[mcp_servers]]\nid = %q\ncommand = %q\nargs = [\"-tools-file\", %q]\n\n", s.ID, bin, toolfixture.File(s.ID))
	}
	b.WriteString(`[providers.fake]
type = "openai"
base_url = "` + fake.URL + `"
api_key = "{{env.FAKE_KEY}}"
allow_local_endpoint = true
`)
	write(t, cfg, b.String())
	write(t, filepath.Join(filepath.Dir(cfg), "agents", "ops.md"), `---
description: Works across GitHub, Jira and Slack
model: fake:test-model
tool_mode: all
---
You help an operations team with their tools.
`)
	return fake, cfg
}

// TestRunSearchMode: the ops agent with tool_mode auto over the ten
// servers runs in search mode (more tools than search_above): the model
// is given search_tools and call_tool, finds Slack's post_message and
// calls it through call_tool, reported as the tool's own call. A
// --tool-mode that is no mode is a usage error.
func TestRunSearchMode(t *testing.T) {
	fake, cfg := modesSetup(t)
	write(t, filepath.Join(filepath.Dir(cfg), "agents", "ops.md"), `---
model: fake:test-model
---
You help an operations team with their tools.
`)
	fake.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "s1", Name: "search_tools", Arguments: json.RawMessage(`{"query":"post a message to a slack channel","limit":3}`)}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "call_tool", Arguments: json.RawMessage(`{"name":"mcp_slack_post_message","arguments":{"channel":"#ops","text":"deployed"}}`)}}},
		llmtest.Turn{Text: "Posted."},
	)
	stdout, stderr, code := runMain("--config", cfg, "run", "ops", "--json", "--prompt", "Tell #ops on Slack that we deployed.")
	if code != 0 {
		t.Fatalf("run = %d, stderr %q", code, stderr)
	}
	evs := readEvents(t, stdout)
	if evs[0].ToolMode != "search" {
		t.Errorf("run:started tool_mode %q over %d tools, want search", evs[0].ToolMode, len(evs[0].Tools))
	}
	var req struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	reqs := fake.Requests()
	reqs[0].Decode(&req)
	if len(req.Tools) != 2 || req.Tools[0].Function.Name != "search_tools" || req.Tools[1].Function.Name != "call_tool" {
		t.Errorf("the model was given %+v, want search_tools and call_tool", req.Tools)
	}
	var search, call *runEvent
	for i, ev := range evs {
		if ev.Type == "agent:tool_result" && ev.Call.ID == "s1" {
			search = &evs[i]
		}
		if ev.Type == "agent:tool_result" && ev.Call.ID == "c1" {
			call = &evs[i]
		}
	}
	if search == nil || !strings.Contains(search.Call.Output, `"name":"mcp_slack_post_message"`) {
		t.Errorf("search_tools' result %+v, want slack's post_message", search)
	}
	if call == nil || call.Call.Tool != "mcp_slack_post_message" || call.Call.Via != "call_tool" || !strings.HasPrefix(call.Call.Output, "called post_message") {
		t.Errorf("call_tool's result %+v, want post_message's, via call_tool", call)
	}

	if _, stderr, code := runMain("--config", cfg, "run", "ops", "--tool-mode", "fast", "--prompt", "x"); code != 2 || !strings.Contains(stderr, `--tool-mode: unknown tool mode "fast"`) {
		t.Errorf("run --tool-mode fast = %d, stderr %q; want 2 naming the flag", code, stderr)
	}
}
