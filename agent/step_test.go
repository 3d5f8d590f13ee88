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

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// twoServers starts a host with two fixture servers, a and b, each logging
// its calls, and the configuration that declares them.
func twoServers(t *testing.T, extra ...config.Server) (*host.Host, *config.Config, map[string]string) {
	t.Helper()
	bin := interop.Build(t, fixturePkg)
	dir := t.TempDir()
	logs := map[string]string{}
	cfg := &config.Config{}
	for _, id := range []string{"a", "b"} {
		logs[id] = filepath.Join(dir, id+".log")
		cfg.Servers = append(cfg.Servers, config.Server{ID: id, Command: bin, Args: []string{"-call-log", logs[id]}})
	}
	cfg.Servers = append(cfg.Servers, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := host.Start(ctx, cfg.Servers, nil)
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h, cfg, logs
}

// offered returns the names of the tools a request to the fake offered
// the model, as the OpenAI wire format carries them.
func offered(t *testing.T, r llmtest.Request) []string {
	t.Helper()
	var body struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range body.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

// TestStepsSelection: an agent step restricted to one server's tool (the
// workflow's selection, given to Steps.Run as Overrides) offers the model
// that tool only — over the OpenAI wire format, to a fake provider — and
// the other server's tool, asked for anyway, never reaches that server;
// without a selection (inherit) the agent's own servers, here every
// configured one, are offered; with none, no tool at all. A selection the
// agent's own tools cannot narrow to fails the step, naming the tool.
func TestStepsSelection(t *testing.T) {
	h, cfg, logs := twoServers(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "helper.md")
	if err := os.WriteFile(file, []byte("---\nmodel: fake:m\nmax_steps: 3\n---\nHelp.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	narrow := filepath.Join(dir, "narrow.md")
	if err := os.WriteFile(narrow, []byte("---\nmodel: fake:m\ntools: [mcp_a_echo]\n---\nHelp.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := llmtest.NewOpenAI(t)
	s := &Steps{Config: cfg, Host: h, Provider: func(ctx context.Context, spec string) (llm.Provider, string, string, error) {
		p, err := llm.New(f.Config())
		return p, "fake", "m", err
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Restricted to a's echo: the model asks for b's echo, which is not
	// called, then for a's, which is.
	f.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp_b_echo", Arguments: json.RawMessage(`{"text":"to b"}`)}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "mcp_a_echo", Arguments: json.RawMessage(`{"text":"to a"}`)}}},
		llmtest.Turn{Text: "done"},
	)
	res, err := s.Run(ctx, file, "go", &Overrides{MCP: []string{"a"}, Tools: []string{"mcp_a_echo"}})
	if err != nil || res.Text != "done" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	reqs := f.Requests()
	for i, r := range reqs {
		if got := offered(t, r); !slices.Equal(got, []string{"mcp_a_echo"}) {
			t.Errorf("request %d offered %q, want only mcp_a_echo", i+1, got)
		}
	}
	if b := string(reqs[1].Body); !strings.Contains(b, `there is no tool \"mcp_b_echo\"`) {
		t.Errorf("the model was not told b's tool is not its own: %s", b)
	}
	if got := calls(t, logs["b"]); len(got) != 0 {
		t.Errorf("server b was called: %q", got)
	}
	if got := calls(t, logs["a"]); len(got) != 1 || !strings.HasPrefix(got[0], "echo") {
		t.Errorf("server a's calls = %q, want one echo", got)
	}

	// Inherit: the agent's own, the configuration's servers.
	f.Script(llmtest.Turn{Text: "all"})
	if _, err := s.Run(ctx, file, "go", nil); err != nil {
		t.Fatal(err)
	}
	got := offered(t, f.Requests()[3])
	for _, want := range []string{"mcp_a_echo", "mcp_b_echo", "mcp_a_add", "mcp_b_add"} {
		if !slices.Contains(got, want) {
			t.Errorf("inherit: %s not offered (%q)", want, got)
		}
	}

	// None: no tool.
	f.Script(llmtest.Turn{Text: "nothing"})
	if _, err := s.Run(ctx, file, "go", &Overrides{MCP: []string{}}); err != nil {
		t.Fatal(err)
	}
	if got := offered(t, f.Requests()[4]); len(got) != 0 {
		t.Errorf("none: offered %q", got)
	}

	// A selection that widens the agent's own tools, or names a tool none
	// of its servers offers, fails before the model is called.
	for _, tc := range []struct {
		file string
		o    *Overrides
		want string
	}{
		{narrow, &Overrides{Tools: []string{"mcp_b_echo"}}, `--tools: "mcp_b_echo" is not among the agent's tools (mcp_a_echo)`},
		{file, &Overrides{MCP: []string{"a"}, Tools: []string{"mcp_b_echo"}}, "none of its servers offers mcp_b_echo (its servers are a)"},
	} {
		if _, err := s.Run(ctx, tc.file, "go", tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%s, %+v) = %v, want %q", filepath.Base(tc.file), tc.o, err, tc.want)
		}
	}
	if n := len(f.Requests()); n != 5 {
		t.Errorf("the fake got %d requests, want 5", n)
	}
}

// calls returns the "TOOL ARGS" lines a fixture logged.
func calls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
