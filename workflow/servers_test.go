package workflow

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
)

// TestSelectionFile: a workflow and each agent step may say mcp_servers
// and tools — inherit, none, or a list — and a file that says anything
// else is refused at the field.
func TestSelectionFile(t *testing.T) {
	w, err := Parse("net.yaml", []byte(`
mcp_servers: [a, b]
tools: none
steps:
  - id: inherits
    agent: helper
    prompt: hi
  - id: explicit
    agent: helper
    prompt: hi
    mcp_servers: inherit
    tools: inherit
  - id: nothing
    agent: helper
    prompt: hi
    mcp_servers: none
  - id: own
    agent: helper
    prompt: hi
    mcp_servers: [b]
    tools: [mcp_b_echo]
  - id: each
    for_each:
      items: "[1]"
      step: {agent: helper, prompt: hi, tools: []}
`))
	if err != nil {
		t.Fatal(err)
	}
	show := func(s *Selection) string {
		switch {
		case s == nil:
			return "inherit"
		case s.None():
			return "none"
		}
		return strings.Join(s.Names, ",")
	}
	got := []string{"workflow " + show(w.MCPServers) + " " + show(w.AgentTools)}
	for _, s := range w.Steps {
		st := s
		if s.ForEach != nil {
			st = s.ForEach.Step
		}
		got = append(got, s.ID+" "+show(st.MCPServers)+" "+show(st.AgentTools))
	}
	want := []string{"workflow a,b none", "inherits inherit inherit", "explicit inherit inherit", "nothing none inherit", "own b mcp_b_echo", "each inherit none"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("selections (-want +got):\n%s", d)
	}
	if w.MCPServers.Line != 2 || w.Steps[3].MCPServers.Line != 20 {
		t.Errorf("lines %d, %d; want 2, 20", w.MCPServers.Line, w.Steps[3].MCPServers.Line)
	}

	for _, tc := range []struct{ name, file, want string }{
		{"word", "mcp_servers: all\nsteps: [{id: a, agent: x, prompt: p}]",
			`bad.yaml:1: mcp_servers: want inherit, none or a list of server ids, not "all"`},
		{"inline", "steps: [{id: a, agent: x, prompt: p, mcp_servers: [{ref: gh}]}]",
			"bad.yaml:1: steps[0].mcp_servers[0]: must be a configured server's id (narrow its tools with tools:; an agent step's agent runs over the configuration's servers)"},
		{"twice", "tools: [mcp_a_x, mcp_a_x]\nsteps: [{id: a, agent: x, prompt: p}]",
			`bad.yaml:1: tools[1]: tool "mcp_a_x" is listed twice`},
		{"bad id", "steps: [{id: a, agent: x, prompt: p, mcp_servers: [\"a b\"]}]",
			`bad.yaml:1: steps[0].mcp_servers[0]: invalid server id "a b"`},
		{"tool step", "steps: [{id: a, tool: mcp_a_x, tools: none}]",
			"bad.yaml:1: steps[0].tools: only a agent step has tools"},
		{"number", "tools: 3\nsteps: [{id: a, agent: x, prompt: p}]",
			"bad.yaml:1: tools: must be inherit, none or a list of tool names (the host's: mcp_github_get_issue), not an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCheckServers: at load, a server that is not configured, a tool no
// configured server can have, and a tool of a server the same level (or
// the one it inherits) leaves out are refused, each with the names and
// the field; what fits passes.
func TestCheckServers(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{{ID: "a"}, {ID: "b", ToolsAllowlist: []string{"echo"}}}}
	parse := func(src string) *Workflow {
		t.Helper()
		w, err := Parse("net.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	good := parse(`
mcp_servers: [a]
tools: [mcp_a_add]
steps:
  - {id: s1, agent: x, prompt: p}
  - {id: s2, agent: x, prompt: p, mcp_servers: [a, b], tools: [mcp_b_echo, mcp_a_add]}
  - {id: s3, agent: x, prompt: p, mcp_servers: none, tools: none}
`)
	if err := CheckServers([]*Workflow{good}, cfg); err != nil {
		t.Errorf("CheckServers(good) = %v", err)
	}
	bad := parse(`
mcp_servers: [a, github]
tools: [mcp_b_echo, mcp_c_x, mcp_b_slow]
steps:
  - {id: s1, agent: x, prompt: p, mcp_servers: [gitlab]}
  - {id: s2, agent: x, prompt: p, mcp_servers: [b], tools: [mcp_a_add]}
  - {id: s3, agent: x, prompt: p, mcp_servers: none, tools: [mcp_a_add]}
  - id: s4
    for_each: {items: "[1]", step: {agent: x, prompt: p, mcp_servers: [a]}}
`)
	err := CheckServers([]*Workflow{bad}, cfg)
	var got []string
	for _, p := range config.Problems(err) {
		got = append(got, p.Error())
	}
	want := []string{
		`net.yaml:2: mcp_servers[1]: no server "github" in the configuration (configured: a, b)`,
		"net.yaml:3: tools[0]: mcp_b_echo is a tool of server b, which mcp_servers leaves out (a, github)",
		`net.yaml:3: tools[1]: mcp_c_x is not a tool name of any configured server (a, b) under tool_name_format "mcp_{server}_{tool}"`,
		`net.yaml:3: tools[2]: server b's tools_allowlist does not have "slow"`,
		`net.yaml:5: steps[0].mcp_servers[0]: no server "gitlab" in the configuration (configured: a, b)`,
		"net.yaml:5: steps[0].mcp_servers: mcp_b_echo is a tool of server b, which the step's mcp_servers (the workflow's tools, line 3, apply to it) leaves out (gitlab)",
		"net.yaml:6: steps[1].tools[0]: mcp_a_add is a tool of server a, which its mcp_servers leaves out (b)",
		"net.yaml:7: steps[2].tools[0]: mcp_a_add: its mcp_servers is none, so the agent has no server whose tools it could name",
		// The workflow's tools, inherited over the step's own servers.
		"net.yaml:9: steps[3].for_each.step.mcp_servers: mcp_b_echo is a tool of server b, which the step's mcp_servers (the workflow's tools, line 3, apply to it) leaves out (a)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// recordAgents is the Agents edge, recording each step's request.
type recordAgents struct {
	mu   sync.Mutex
	reqs map[string]*AgentRequest // by prompt
}

func (a *recordAgents) RunAgent(ctx context.Context, req *AgentRequest) (*AgentResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs[req.Prompt] = req
	return &AgentResult{Text: "ok"}, nil
}

// TestAgentStepSelection: each agent step's agent gets the most specific
// selection — the run's, else the step's, else the workflow's — and the
// runs its workflow steps start get the run's; nil (inherit everywhere)
// leaves the agent file's own, empty is none. A run's own selection that
// names a server or a tool its host does not have is refused at Start.
func TestAgentStepSelection(t *testing.T) {
	child := &Workflow{ID: "child", Steps: []*Step{
		{ID: "c", Kind: StepAgent, Agent: "helper", Prompt: tpl("child")},
	}}
	plain := &Workflow{ID: "plain", Steps: []*Step{{ID: "p", Kind: StepAgent, Agent: "helper", Prompt: tpl("plain")}}}
	wf := &Workflow{ID: "net",
		MCPServers: &Selection{Names: []string{"fx"}}, AgentTools: &Selection{Names: []string{"mcp_fx_echo"}},
		Steps: []*Step{
			{ID: "inherits", Kind: StepAgent, Agent: "helper", Prompt: tpl("inherits")},
			{ID: "none", Kind: StepAgent, Agent: "helper", Prompt: tpl("none"), MCPServers: &Selection{Names: []string{}}},
			{ID: "own", Kind: StepAgent, Agent: "helper", Prompt: tpl("own"), AgentTools: &Selection{Names: []string{"mcp_fx_add"}}},
			{ID: "each", Kind: StepForEach, ForEach: &ForEach{Items: tpl("[1]"), As: "item", Concurrency: 1,
				Step: &Step{ID: "each", Kind: StepAgent, Agent: "helper", Prompt: tpl("each"), AgentTools: &Selection{Names: []string{}}}}},
			{ID: "nested", Kind: StepWorkflow, Workflow: "child", With: val(map[string]any{})},
		}}
	rec := &recordAgents{reqs: map[string]*AgentRequest{}}
	r := newRig(t, &EngineOptions{Agents: rec}, wf, child, plain)
	show := func(l []string) string {
		switch {
		case l == nil:
			return "inherit"
		case len(l) == 0:
			return "none"
		}
		return strings.Join(l, ",")
	}
	got := func() map[string]string {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		out := map[string]string{}
		for p, req := range rec.reqs {
			out[p] = show(req.MCPServers) + " " + show(req.Tools)
		}
		rec.reqs = map[string]*AgentRequest{}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := func(id string, o *StartOptions) {
		t.Helper()
		runID, err := r.e.Start(ctx, id, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := r.e.Wait(ctx, runID); err != nil || st.State != RunCompleted {
			t.Fatalf("run %s: %v %+v", runID, err, st)
		}
	}

	start("net", nil)
	want := map[string]string{
		"inherits": "fx mcp_fx_echo",
		"none":     "none none", // no server, so no tool
		"own":      "fx mcp_fx_add",
		"each":     "fx none",
		"child":    "inherit inherit", // the child workflow's own: none
	}
	if d := cmp.Diff(want, got()); d != "" {
		t.Errorf("without a run's selection (-want +got):\n%s", d)
	}
	start("plain", nil)
	if d := cmp.Diff(map[string]string{"plain": "inherit inherit"}, got()); d != "" {
		t.Errorf("a workflow that selects nothing (-want +got):\n%s", d)
	}

	// The run's, over everything, in its child too.
	start("net", &StartOptions{MCPServers: &Selection{Names: []string{"fx"}}, Tools: &Selection{Names: []string{"mcp_fx_slow"}}})
	want = map[string]string{"inherits": "fx mcp_fx_slow", "none": "fx mcp_fx_slow", "own": "fx mcp_fx_slow", "each": "fx mcp_fx_slow", "child": "fx mcp_fx_slow"}
	if d := cmp.Diff(want, got()); d != "" {
		t.Errorf("with the run's selection (-want +got):\n%s", d)
	}

	for _, tc := range []struct {
		o    *StartOptions
		want string
	}{
		{&StartOptions{MCPServers: &Selection{Names: []string{"github"}}}, `mcp_servers: no server "github" here (it has fx)`},
		{&StartOptions{Tools: &Selection{Names: []string{"mcp_fx_nope"}}}, `tools: no server offers "mcp_fx_nope"`},
		{&StartOptions{MCPServers: &Selection{Names: []string{}}, Tools: &Selection{Names: []string{"mcp_fx_echo"}}}, `tools: "mcp_fx_echo", but mcp_servers is none`},
	} {
		_, err := r.e.Start(ctx, "net", nil, tc.o)
		if !errors.Is(err, ErrSelection) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v, want ErrSelection saying %q", tc.o, err, tc.want)
		}
	}
	// Another selection under a run id is another run, as other inputs are.
	if _, err := r.e.Start(ctx, "plain", nil, &StartOptions{RunID: "sel"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.Start(ctx, "plain", nil, &StartOptions{RunID: "sel", Tools: &Selection{Names: []string{"mcp_fx_echo"}}}); !errors.Is(err, ErrInputsDiffer) {
		t.Errorf("the same run id with another selection: %v, want ErrInputsDiffer", err)
	}
}
