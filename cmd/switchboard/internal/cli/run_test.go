package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// runSetup writes a configuration with the fixture server "t" and a
// provider "fake" pointing at an llmtest fake, and an agent in ./agents/,
// and makes the test's folder the working directory.
func runSetup(t *testing.T) (*llmtest.Fake, string) {
	fake := llmtest.NewOpenAI(t)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".xdg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("HOME", filepath.Join(dir, ".home"))
	t.Setenv("FAKE_KEY", fake.APIKey)
	t.Setenv("SWITCHBOARD_CONFIG", "")
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	cfg := filepath.Join(dir, "sb.toml")
	write(t, cfg, `[[mcp_servers]]
id = "t"
command = "`+fixture+`"

[providers.fake]
type = "openai"
base_url = "`+fake.URL+`"
api_key = "{{env.FAKE_KEY}}"
allow_local_endpoint = true
`)
	write(t, filepath.Join(dir, "agents", "calc.md"), `---
description: Adds numbers
model: fake:test-model
mcp_servers:
  - ref: t
    tools_allowlist: [add]
---
You add numbers with the add tool.
`)
	return fake, cfg
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runMain(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestRunCommand(t *testing.T) {
	fake, cfg := runSetup(t)
	fake.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp_t_add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}},
		llmtest.Turn{Text: "The sum is 5."},
	)
	stdout, stderr, code := runMain("--config", cfg, "run", "calc", "--prompt", "What is 2+3?")
	if code != 0 || stdout != "The sum is 5.\n" {
		t.Fatalf("run = %d, stdout %q, stderr %q; want 0 and the answer", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "→ mcp_t_add") || !strings.Contains(stderr, "← mcp_t_add: ok: 5") {
		t.Errorf("stderr %q, want the tool call and result", stderr)
	}
	if strings.Contains(stdout+stderr, fake.APIKey) {
		t.Error("the API key reached the output")
	}

	fake.Script(llmtest.Turn{Text: "Hi."})
	stdout, stderr, code = runMain("--config", cfg, "run", "calc", "--prompt", "hello", "--json", "--mcp", "none")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var first, last struct {
		Type  string   `json:"type"`
		Tools []string `json:"tools"`
		Text  string   `json:"text"`
	}
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if code != 0 || first.Type != "run:started" || len(first.Tools) != 0 || last.Type != "run:completed" || last.Text != "Hi." {
		t.Errorf("run --json --mcp none = %d, first %+v, last %+v, stderr %q", code, first, last, stderr)
	}

	// A provider failure is exit 1 with the typed code.
	fake.Script(llmtest.Turn{Status: 401})
	_, stderr, code = runMain("--config", cfg, "run", "calc", "--prompt", "x")
	if code != 1 || !strings.Contains(stderr, "run failed (llm_auth)") {
		t.Errorf("run with a refused key = %d, stderr %q; want 1 and llm_auth", code, stderr)
	}

	// Usage errors: exit 2.
	for _, args := range [][]string{
		{"run", "nope", "--prompt", "x"},
		{"run", "calc"}, // no prompt: stdin is empty
		{"run", "calc", "--prompt", "x", "--model", "nowhere:m"},
		{"run", "calc", "--prompt", "x", "--tools", "mcp_t_echo", "--mcp", "t"},
	} {
		if _, stderr, code := runMain(append([]string{"--config", cfg}, args...)...); code != 2 {
			t.Errorf("%q = %d (stderr %q), want 2", args, code, stderr)
		}
	}
}

func TestAgentsCommand(t *testing.T) {
	_, cfg := runSetup(t)
	stdout, stderr, code := runMain("--config", cfg, "agents", "--json")
	var got struct {
		Agents []struct {
			ID      string   `json:"id"`
			Model   string   `json:"model"`
			Servers []string `json:"servers"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 {
		t.Fatalf("agents --json = %d, %q (%v), stderr %q", code, stdout, err, stderr)
	}
	if len(got.Agents) != 1 || got.Agents[0].ID != "calc" || got.Agents[0].Model != "fake:test-model" || strings.Join(got.Agents[0].Servers, ",") != "t" {
		t.Errorf("agents = %+v", got.Agents)
	}
	write(t, filepath.Join("agents", "broken.yaml"), "model: 42\n")
	_, stderr, code = runMain("--config", cfg, "agents")
	if code != 2 || !strings.Contains(stderr, filepath.Join("agents", "broken.yaml")+":1: model: must be a string") {
		t.Errorf("agents with a broken file = %d, stderr %q", code, stderr)
	}
}

// TestRunUsage: switchboard run records its usage in the state store as
// serve does (its tool calls per server and tool, its run and tokens), so
// that switchboard stats counts it; a failed run counts as failed.
func TestRunUsage(t *testing.T) {
	fake, cfg := runSetup(t)
	fake.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp_t_add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}},
			Usage: llm.Usage{InputTokens: 100, OutputTokens: 7}},
		llmtest.Turn{Text: "The sum is 5.", Usage: llm.Usage{InputTokens: 120, OutputTokens: 9}},
	)
	if stdout, stderr, code := runMain("--config", cfg, "run", "calc", "--prompt", "What is 2+3?"); code != 0 {
		t.Fatalf("run = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	fake.Script(llmtest.Turn{Status: 401})
	if _, stderr, code := runMain("--config", cfg, "run", "calc", "--prompt", "x"); code != 1 {
		t.Fatalf("run with a refused key = %d, stderr %q; want 1", code, stderr)
	}

	rep := stats(t, cfg)
	if len(rep.Calls) != 1 || rep.Calls[0].Server != "t" || rep.Calls[0].Tool != "add" || rep.Calls[0].Calls != 1 || rep.Calls[0].Errors != 0 {
		t.Errorf("calls recorded: %+v, want t/add once", rep.Calls)
	}
	if len(rep.Tokens) != 1 || rep.Tokens[0].Kind != "agent" || rep.Tokens[0].Name != "calc" || rep.Tokens[0].Runs != 2 || rep.Tokens[0].Failed != 1 ||
		rep.Tokens[0].In != 220 || rep.Tokens[0].Out != 16 {
		t.Errorf("runs recorded: %+v, want agent calc: 2 runs, 1 failed, 220 tokens in, 16 out", rep.Tokens)
	}
}

// TestRunSamplingUsage: the tokens a run's model spends answering a tool's
// sampling request count in the agent's usage (switchboard stats), as the
// run's own turns do; before, only the run's events counted them.
func TestRunSamplingUsage(t *testing.T) {
	fake, cfg := runSetup(t)
	write(t, filepath.Join(filepath.Dir(cfg), "agents", "sampler.md"), `---
description: Lets a tool ask its model
model: fake:test-model
allow_sampling: true
mcp_servers:
  - ref: t
    tools_allowlist: [sample]
---
Call the sample tool.
`)
	fake.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp_t_sample", Arguments: json.RawMessage(`{}`)}},
			Usage: llm.Usage{InputTokens: 100, OutputTokens: 7}},
		llmtest.Turn{Text: "hello from the model", Usage: llm.Usage{InputTokens: 30, OutputTokens: 4}}, // the sampling request
		llmtest.Turn{Text: "The tool said hello.", Usage: llm.Usage{InputTokens: 120, OutputTokens: 9}},
	)
	if stdout, stderr, code := runMain("--config", cfg, "run", "sampler", "--prompt", "Go"); code != 0 || !strings.Contains(stdout, "The tool said hello.") {
		t.Fatalf("run = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Fatalf("the model was asked %d times; want 3 (two turns and the sampling request)", n)
	}
	if rep := stats(t, cfg); len(rep.Tokens) != 1 || rep.Tokens[0].Name != "sampler" || rep.Tokens[0].In != 250 || rep.Tokens[0].Out != 20 {
		t.Errorf("tokens recorded: %+v; want agent sampler: 250 in, 20 out (the sampling request's 30 and 4 included)", rep.Tokens)
	}
}

// statsReport is what `switchboard stats --json` says, in the parts the
// tests read.
type statsReport struct {
	Calls []struct {
		Server, Tool  string
		Calls, Errors int64
	} `json:"calls"`
	Tokens []struct {
		Kind, Name   string
		Runs, Failed int64
		In           int64 `json:"input_tokens"`
		Out          int64 `json:"output_tokens"`
	} `json:"tokens"`
}

// stats runs `switchboard stats --json` on cfg.
func stats(t *testing.T, cfg string) statsReport {
	t.Helper()
	stdout, stderr, code := runMain("--config", cfg, "stats", "--json")
	if code != 0 {
		t.Fatalf("stats = %d, stderr %q", code, stderr)
	}
	var rep statsReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, stdout)
	}
	return rep
}
