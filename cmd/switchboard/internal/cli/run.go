package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// maxPromptBytes bounds a prompt read from stdin.
const maxPromptBytes = 1 << 20

func (e *env) runCommand() *cobra.Command {
	var prompt, model, mcpFlag, toolsFlag, workspace, toolMode string
	cmd := &cobra.Command{
		Use:   "run AGENT",
		Short: "Run an agent: its model, with the tools of its MCP servers",
		Long: `Runs an agent: its model is given the prompt and the tools of the agent's MCP
servers, the tools it asks for are called through Switchboard (validated and
timed out like any call), and the answer streams to stdout. Tool calls and
results are reported on stderr; with --json every event is a JSON line on
stdout instead.

AGENT is a file (agents/calc.md, ./helper.yaml) or the id of an agent in
./agents/ or $XDG_CONFIG_HOME/switchboard/agents/. The prompt is --prompt,
else stdin.

Servers and tools are resolved in order: the configuration's servers, then
the agent's mcp_servers and tools, then --mcp (ids, or none) and --tools
(which can only narrow the agent's tools). --tool-mode overrides the
agent's tool_mode: all gives the model every tool, search gives it
search_tools and call_tool, code search_tools and run_code (a JavaScript
program that calls the tools), auto is search above search_above tools.

Exit codes: 0 the run completed, 1 it failed or was cancelled, 2 a usage or
configuration error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.run(cmd.Context(), args[0], runFlags{prompt: prompt, model: model, mcp: mcpFlag, tools: toolsFlag,
				workspace: workspace, toolMode: toolMode, promptSet: cmd.Flags().Changed("prompt"), mcpSet: cmd.Flags().Changed("mcp"), toolsSet: cmd.Flags().Changed("tools")})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&prompt, "prompt", "p", "", "the prompt (default: read stdin)")
	f.StringVarP(&model, "model", "m", "", "provider:model, overriding the agent's (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, ollama:llama3.2)")
	f.StringVar(&mcpFlag, "mcp", "", "the servers to use, by id (comma-separated), or none")
	f.StringVar(&toolsFlag, "tools", "", "narrow the tools to these (comma-separated host names)")
	f.StringVar(&workspace, "workspace", ".", "the folder read_file and list_directory may read")
	f.StringVar(&toolMode, "tool-mode", "", "how the model is given the tools, overriding the agent's tool_mode: auto, all, search or code")
	return cmd
}

type runFlags struct {
	prompt, model, mcp, tools, workspace, toolMode string
	promptSet, mcpSet, toolsSet                    bool
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (e *env) run(ctx context.Context, name string, fl runFlags) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	a, err := agent.Find(name, agent.Dirs(e.getenv))
	if errors.Is(err, agent.ErrNotFound) {
		var ids []string
		found, _ := agent.List(agent.Dirs(e.getenv)) // the ones that load, for a "did you mean"
		for _, f := range found {
			ids = append(ids, f.ID)
		}
		return &exitError{kind: daemon.KindUnknownAgent, err: fmt.Errorf("%v%s", err, didYouMean(name, names(ids)))}
	}
	if err != nil {
		return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("agent:\n%s", indent(err.Error())), details: problemDetails(err)}
	}
	if fl.toolMode != "" {
		if p := agent.ToolModeProblem(fl.toolMode); p != "" {
			return usageErr("--tool-mode: %s", p)
		}
		a.ToolMode = fl.toolMode
	}
	o := &agent.Overrides{}
	if fl.mcpSet {
		if strings.TrimSpace(fl.mcp) == "none" {
			o.MCP = []string{}
		} else {
			o.MCP = splitList(fl.mcp)
		}
	}
	if fl.toolsSet {
		o.Tools = splitList(fl.tools)
	}
	plan, err := agent.Resolve(cfg, a, o)
	if err != nil {
		return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("agent %s:\n%s", a.ID, indent(err.Error())), details: problemDetails(err)}
	}
	modelSpec := a.Model
	if fl.model != "" {
		modelSpec = fl.model
	}
	if modelSpec == "" {
		return usageErr("agent %s names no model: add model: provider:model to %s, or pass --model", a.ID, a.File)
	}
	prompt, err := e.readPrompt(fl)
	if err != nil {
		return err
	}
	pc, err := e.providerConfig(cfg, modelSpec)
	if err != nil {
		return err
	}
	// Before any server starts (an npx server takes seconds): a provider
	// without its key, or with nothing listening, fails the run anyway.
	if err := e.checkProvider(ctx, pc); err != nil {
		return err
	}
	provider, err := llm.New(pc.lc)
	if err != nil {
		return usageErr("%v", err)
	}
	modelName := pc.model

	network, err := e.network(cfg)
	if err != nil {
		return err
	}
	builtins, err := agent.NewBuiltins(a, &agent.BuiltinOptions{Workspace: fl.workspace, Network: network})
	if err != nil {
		return usageErr("agent %s: %v", a.ID, err)
	}
	defer builtins.Close()
	hopts, err := e.hostOptions(cfg)
	if err != nil {
		return err
	}
	stdinTaken := ""
	if !fl.promptSet {
		stdinTaken = "stdin holds the prompt (pass --prompt to answer on the terminal)"
	}
	hopts.Elicitation = e.elicitation(stdinTaken)
	if builtins != nil {
		hopts.InProcess = []host.InProcessServer{builtins.InProcess()}
	}
	if len(plan.Servers) > 0 {
		hopts.Secrets = e.secretStore()
	}
	// The run's usage goes to the state store, as serve's does: its tool
	// calls per server and tool, its tokens (switchboard stats).
	tel := e.usageTelemetry(cfg)
	observed := provider
	if tel != nil {
		defer e.closeTelemetry(tel)
		hopts.ClientMiddleware = tel.ClientMiddleware
		observed = observedProvider{p: provider, tel: tel, name: pc.name, model: modelName}
	}
	if a.AllowSampling {
		// The run answers its tool calls' sampling requests itself, and
		// counts them; this answers a server's request made outside a call.
		hopts.Sampling = agent.SamplingHandler(observed, modelName)
	}
	h, err := e.connect(ctx, discoveryServers(a, plan.Servers, hopts.ToolCache), hopts)
	if err != nil {
		return err
	}
	defer h.Close()
	// A --tools or tools entry naming a tool no server offers is the
	// user's to fix: say so before the model is called.
	var missing []string
	for _, n := range plan.Tools {
		if _, ok := h.Tool(n); !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return e.missingTools(cfg, a, plan, h, missing)
	}

	ro := &agent.RunOptions{
		Agent: a, Host: h, Provider: provider, ProviderName: pc.name, Model: modelName, Prompt: prompt,
		Tools: plan.Tools, Servers: plan.Servers, Builtins: builtins,
	}
	if tel == nil {
		return e.printRun(agent.Run(ctx, ro))
	}
	ro.Provider = observed
	ro.Turn = tel.StartTurn
	ctx, run := tel.StartRun(ctx, telemetry.KindAgent, a.ID, "", time.Time{})
	// A run whose events were not all read (printing failed) ends failed.
	defer run.End(telemetry.OutcomeFailed, "agent_failed", time.Time{}, 0)
	events := agent.Run(ctx, ro)
	return e.printRun(func(yield func(agent.Event) bool) {
		for ev := range events {
			switch ev.Type {
			case agent.EventRunCompleted:
				run.End(telemetry.OutcomeCompleted, "", time.Time{}, 0)
			case agent.EventRunCancelled:
				run.End(telemetry.OutcomeCancelled, "", time.Time{}, 0)
			case agent.EventRunFailed:
				code := "agent_failed"
				if ev.Error != nil {
					code = string(ev.Error.Code)
				}
				run.End(telemetry.OutcomeFailed, code, time.Time{}, 0)
			}
			if !yield(ev) {
				return
			}
		}
	})
}

// discoveryServers are the servers a run starts: for an agent that
// chooses its tools (max_tools, mcp_discovery) over a tool-list cache,
// each is lazy, so that one whose tools are cached is not started until
// the run chooses one of them or calls it (agent.Run wakes those it
// chose); one without a cached list starts as ever. Otherwise servers,
// as they are.
func discoveryServers(a *agent.Agent, servers []config.Server, cache host.ToolCache) []config.Server {
	if cache == nil || a.MaxTools == 0 && !a.MCPDiscovery {
		return servers
	}
	out := make([]config.Server, len(servers))
	for i, s := range servers {
		s.Lazy = true
		out[i] = s
	}
	return out
}

// printRun streams a run: --json prints every event as a JSON line;
// otherwise the answer goes to stdout as it streams, tool calls and results
// to stderr.
func (e *env) printRun(events func(func(agent.Event) bool)) error {
	streamed := false // text of the current step reached stdout
	atLineStart := true
	var terminal agent.Event
	for ev := range events {
		if ev.Type.Terminal() {
			terminal = ev
		}
		if e.jsonOut {
			b, err := json.Marshal(ev)
			if err != nil {
				return failed(err)
			}
			e.wroteJSON = true
			fmt.Fprintln(e.stdout, e.red.Redact(string(b)))
			continue
		}
		switch ev.Type {
		case agent.EventRunStarted:
			if len(ev.FailedServers) > 0 {
				fmt.Fprintf(e.stderr, "switchboard: %s\n", failedServersLine(ev.FailedServers))
			}
		case agent.EventToken:
			e.printf("%s", ev.Text)
			streamed = true
			atLineStart = strings.HasSuffix(ev.Text, "\n")
		case agent.EventMessage:
			if !streamed && ev.Text != "" {
				// The provider did not stream: print the message whole.
				e.printf("%s", ev.Text)
				atLineStart = strings.HasSuffix(ev.Text, "\n")
			}
			if !atLineStart {
				e.printf("\n")
				atLineStart = true
			}
			streamed = false
		case agent.EventToolCall:
			fmt.Fprintf(e.stderr, "→ %s %s\n", ev.Call.Tool, ev.Call.Arguments)
		case agent.EventToolResult:
			status := "ok"
			if ev.Call.Success == nil || !*ev.Call.Success {
				status = string(ev.Call.ErrorCode)
			}
			fmt.Fprintf(e.stderr, "← %s: %s: %s\n", ev.Call.Tool, status, firstLine(ev.Call.Output))
		}
	}
	switch terminal.Type {
	case agent.EventRunCompleted:
		if e.verbose > 0 && terminal.Usage != nil {
			fmt.Fprintf(e.stderr, "tokens: %d in, %d out\n", terminal.Usage.InputTokens, terminal.Usage.OutputTokens)
		}
		return nil
	case agent.EventRunFailed:
		if e.jsonOut {
			return &exitError{kind: daemon.KindFailed}
		}
		return failed(fmt.Errorf("run failed (%s): %s", terminal.Error.Code, terminal.Error.Message))
	case agent.EventRunCancelled:
		if e.jsonOut {
			return &exitError{kind: daemon.KindFailed}
		}
		return failed(errors.New("run cancelled"))
	}
	return failed(errors.New("the run ended without a result"))
}

// chosenProvider is the LLM provider a "provider:model" names, as a run
// will use it.
type chosenProvider struct {
	name, model string
	lc          llm.Config // with the resolved key: never printed
	builtin     bool       // one of llm.Defaults, not a [providers.NAME] table
}

// provider builds the provider a "provider:model" names: a [providers.NAME]
// table of the configuration, else a built-in one (openai, anthropic,
// ollama).
func (e *env) provider(cfg *config.Config, spec string) (llm.Provider, string, error) {
	pc, err := e.providerConfig(cfg, spec)
	if err != nil {
		return nil, "", err
	}
	p, err := llm.New(pc.lc)
	if err != nil {
		return nil, "", usageErr("%v", err)
	}
	return p, pc.model, nil
}

// providerConfig resolves the provider a "provider:model" names, with its
// key and its guarded HTTP client.
func (e *env) providerConfig(cfg *config.Config, spec string) (*chosenProvider, error) {
	name, model, err := llm.ParseModel(spec)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	pc := &chosenProvider{name: name, model: model}
	allowLocal := false // admit the base URL's own loopback or private host:port
	if tc, ok := cfg.Providers[name]; ok {
		rp, err := tc.Resolve(e.lookupEnv, e.secretStore(), e.red)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		pc.lc = llm.Config{Name: name, Type: rp.Type, BaseURL: rp.BaseURL, APIKey: rp.APIKey,
			KeySource: "providers." + name + ".api_key", Headers: rp.Headers}
		allowLocal = rp.AllowLocalEndpoint && rp.BaseURL != ""
	} else if d, ok := llm.Defaults(e.getenv)[name]; ok {
		pc.lc, pc.builtin = d, true
		if pc.lc.APIKey != "" {
			e.red.Add(pc.lc.APIKey)
		}
		// The built-in ollama is at a literal loopback address: admit
		// exactly it. A default at a public name admits nothing.
		if u, err := url.Parse(pc.lc.BaseURL); err == nil {
			_, allowLocal, _ = netguard.ParseHost(u.Hostname())
		}
	} else {
		var known []string
		for n := range llm.Defaults(e.getenv) {
			known = append(known, n)
		}
		for n := range cfg.Providers {
			known = append(known, n)
		}
		sort.Strings(known)
		return nil, usageErr("unknown provider %q in %q (known: %s; add a [providers.%s] table to the configuration)", name, spec, strings.Join(known, ", "), name)
	}
	if pc.lc.HTTPClient, err = e.providerClient(cfg, pc.lc.BaseURL, allowLocal); err != nil {
		return nil, err
	}
	return pc, nil
}

// providerClient is the HTTP client of an LLM provider at baseURL ("" for
// the SDK's public default): the guarded dialer, with the [network] ranges
// and proxy, admitting baseURL's own host:port when allowLocal. A redirect
// to another origin is refused: a 307 would resend the prompt there.
func (e *env) providerClient(cfg *config.Config, baseURL string, allowLocal bool) (*http.Client, error) {
	n, err := e.network(cfg)
	if err != nil {
		return nil, err
	}
	// Bounds resolving a local base URL's name and the proxy's, once.
	ctx, cancel := context.WithTimeout(context.Background(), config.DefaultConnectTimeout)
	defer cancel()
	d := &netguard.Dialer{}
	if allowLocal {
		d.AllowLocal, _ = netguard.LocalEndpoint(ctx, nil, baseURL) // unresolved: the dialer refuses, saying why
	}
	policy := &netguard.RedirectPolicy{AllowLocal: allowLocal, Network: n}
	return &http.Client{Transport: n.Transport(ctx, d), CheckRedirect: policy.CheckRedirect}, nil
}

// readPrompt returns --prompt, or stdin when it is not a terminal.
func (e *env) readPrompt(fl runFlags) (string, error) {
	if fl.promptSet {
		if strings.TrimSpace(fl.prompt) == "" {
			return "", usageErr("--prompt is empty")
		}
		return fl.prompt, nil
	}
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) || e.stdin == nil {
		return "", usageErr("no prompt: pass --prompt TEXT or pipe it on stdin")
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, maxPromptBytes+1))
	if err != nil {
		return "", failed(fmt.Errorf("reading the prompt from stdin: %w", err))
	}
	if len(b) > maxPromptBytes {
		return "", usageErr("the prompt on stdin is longer than %d bytes", maxPromptBytes)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", usageErr("no prompt: stdin was empty")
	}
	return string(b), nil
}
