package cli

// Workflows from the command line: list them, run one (its events on
// stderr, its outputs on stdout), and look after runs (list, show, cancel,
// resume, answer a gate, resolve an interrupted step). A command opens the workflow engine on the
// configuration's state database in this process, under an executor id of
// its own: several processes share the database, and none takes another's
// live runs (see daemon.OpenWorkflows and workflow.Executor).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/telemetry"
	"github.com/switchboardmcp/switchboard/workflow"
)

// loadWorkflows loads the configuration's workflows; problems are a
// configuration error (exit 2) listing each with its file and line.
func (e *env) loadWorkflows(cfg *config.Config) ([]*workflow.Workflow, error) {
	wfs, err := daemon.LoadWorkflows(cfg, e.getenv)
	if err != nil {
		return nil, &exitError{kind: daemon.KindConfig, err: fmt.Errorf("workflows:\n%s", indent(err.Error())), details: problemDetails(err)}
	}
	return wfs, nil
}

// agentSteps runs a workflow's agent steps with the CLI's providers
// (their keys from the environment or the secret store).
func (e *env) agentSteps(cfg *config.Config) *agent.Steps {
	return &agent.Steps{Config: cfg, Dirs: agent.Dirs(e.getenv),
		Provider: func(ctx context.Context, spec string) (llm.Provider, string, string, error) {
			pc, err := e.providerConfig(cfg, spec)
			if err != nil {
				return nil, "", "", err
			}
			p, err := llm.New(pc.lc)
			if err != nil {
				return nil, "", "", err
			}
			return p, pc.name, pc.model, nil
		}}
}

// workflowAgents is agent.Steps as the engine's Agents; tel, when set,
// records the runs (see observeSteps).
type workflowAgents struct {
	s   *agent.Steps
	tel *telemetry.Telemetry
}

func (a *workflowAgents) RunAgent(ctx context.Context, req *workflow.AgentRequest) (*workflow.AgentResult, error) {
	var r *agent.StepResult
	// The workflow's selection for the step is the agent's last layer,
	// as --mcp and --tools are a plain run's.
	o := &agent.Overrides{MCP: req.MCPServers, Tools: req.Tools}
	err := recordAgentRun(ctx, a.tel, req.Agent, func(ctx context.Context) (err error) {
		r, err = a.s.Run(ctx, req.Agent, req.Prompt, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &workflow.AgentResult{Text: r.Text, Usage: map[string]any{
		"input_tokens": r.Usage.InputTokens, "output_tokens": r.Usage.OutputTokens}, FailedServers: r.FailedServers}, nil
}

// runner is what the commands need of a workflow engine: the one of a
// running serve of the same configuration (api.Engine), so
// that a run lives in the daemon, or one in this process (engineRuns).
type runner interface {
	Start(ctx context.Context, id string, inputs map[string]any, opts *workflow.StartOptions) (string, error)
	Get(ctx context.Context, runID string) (*workflow.RunStatus, error)
	Runs(ctx context.Context, f *workflow.RunFilter) ([]*workflow.RunStatus, error)
	Events(ctx context.Context, runID string, afterSeq int64) ([]workflow.Event, error)
	Follow(ctx context.Context, runID string, afterSeq int64, fn func(workflow.Event) error) error
	Answer(ctx context.Context, runID, gate string, a workflow.GateAnswer) error
	Resolve(ctx context.Context, runID, step string, how workflow.Resolution) error
	Cancel(ctx context.Context, runID string) error
	// Resume resumes a cancelled run, or adopts one whose process is
	// gone (daemon.Workflows.Resume).
	Resume(ctx context.Context, runID string) error
}

var (
	_ runner = (*api.Engine)(nil)
	_ runner = engineRuns{}
)

// engineRuns is the engine in this process.
type engineRuns struct {
	*workflow.Engine
	wf *daemon.Workflows
}

func (r engineRuns) Resume(ctx context.Context, runID string) error { return r.wf.Resume(ctx, runID) }

// engineHere is the workflow engine a command uses: a running serve's, or
// one in this process.
type engineHere struct {
	cfg   *config.Config
	wfs   []*workflow.Workflow
	runs  runner
	c     *serveClient // a serve's
	wf    *daemon.Workflows
	steps *agent.Steps
	h     *host.Host
	// closeTel writes the usage of the runs made here to the state store
	// and stops their telemetry; nil when there is none.
	closeTel func()
}

func (x *engineHere) Close() {
	if x.c != nil {
		x.c.Close()
	}
	if x.wf != nil {
		x.wf.Close()
	}
	if x.h != nil {
		x.h.Close()
	}
	if x.closeTel != nil {
		x.closeTel()
	}
}

// workflow returns the workflow id, or nil.
func (x *engineHere) workflow(id string) *workflow.Workflow {
	for _, w := range x.wfs {
		if w.ID == id {
			return w
		}
	}
	return nil
}

// openEngine returns the engine of the running serve of the configuration
// when there is one that runs the same workflows (its runs then live in
// it), and otherwise opens one in this process on the configuration's
// database; with run, that one also starts the configuration's servers
// and is launched over them, so that it runs workflows.
func (e *env) openEngine(ctx context.Context, run bool, extra ...*workflow.Workflow) (*engineHere, error) {
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	wfs, err := e.loadWorkflows(cfg)
	if err != nil {
		return nil, err
	}
	if len(extra) > 0 {
		// A workflow given by its path joins the ones found (a serve does
		// not have it, so the run is made here), with the workflows it
		// runs that are not found, from its own folder: run by path from
		// elsewhere (examples/workflows/nested.yaml, as the README shows
		// it), its sums.yaml is beside it.
		extra = withRunsBeside(extra, wfs)
		all := slices.DeleteFunc(slices.Clone(wfs), func(w *workflow.Workflow) bool {
			return slices.ContainsFunc(extra, func(x *workflow.Workflow) bool { return x.ID == w.ID })
		})
		all = append(all, extra...)
		if err := errors.Join(workflow.CheckAll(all), workflow.CheckServers(extra, cfg)); err != nil {
			return nil, &exitError{kind: daemon.KindConfig, err: fmt.Errorf("workflows:\n%s", indent(err.Error())), details: problemDetails(err)}
		}
		wfs = all
	}
	x := &engineHere{cfg: cfg, wfs: wfs}
	if c := e.dialDaemon(ctx, cfg, ""); c != nil {
		have, err := c.Workflows(ctx)
		if why := unlikeWorkflows(have, err, wfs); why != "" {
			c.Close()
			if len(extra) > 0 {
				// A workflow run by path: no serve has it; nothing to say.
				e.logger().Info("not using switchboard serve for workflows: " + why)
			} else {
				fmt.Fprintf(e.stderr, "switchboard: not using switchboard serve for workflows: %s; running here (--no-daemon says nothing)\n", why)
			}
		} else {
			x.runs, x.c = c.Engine(), c
			return x, nil
		}
	}
	x.steps = e.agentSteps(cfg)
	// Every secret of the configuration is read, to redact the runs this
	// command reads (daemon.OpenWorkflows): a run may hold one that no
	// server started here would have made known.
	secrets := e.secretStore()
	agents := &workflowAgents{s: x.steps}
	if run {
		// The runs made here are counted in the state store, as a serve's
		// are (switchboard stats).
		if agents.tel = e.usageTelemetry(cfg); agents.tel != nil {
			x.closeTel = func() { e.closeTelemetry(agents.tel) }
			observeSteps(x.steps, agents.tel)
		}
	}
	x.wf, err = daemon.OpenWorkflows(ctx, &daemon.WorkflowOptions{Config: cfg, Workflows: wfs, Kind: "cli",
		Secrets: secrets, LookupEnv: e.lookupEnv, Agents: agents, Redactor: e.red, Logger: e.logger(), Telemetry: agents.tel})
	if err != nil {
		x.Close()
		return nil, failed(err)
	}
	x.runs = engineRuns{x.wf.Engine, x.wf}
	if !run {
		return x, nil
	}
	hopts, err := e.hostOptions(cfg)
	if err != nil {
		x.Close()
		return nil, err
	}
	hopts.Elicitation = e.elicitation("")
	if agents.tel != nil {
		hopts.ClientMiddleware = agents.tel.ClientMiddleware
	}
	x.h, err = e.connect(ctx, cfg.Servers, hopts)
	if err != nil {
		x.Close()
		return nil, err
	}
	x.steps.Host = x.h
	if err := x.wf.Launch(ctx, x.h, false); err != nil {
		x.Close()
		return nil, failed(err)
	}
	return x, nil
}

// unlikeWorkflows says why a serve's workflows (id → digest, or err) are
// not the command's; "" when they are the same.
func unlikeWorkflows(have map[string]string, err error, wfs []*workflow.Workflow) string {
	if err != nil {
		return "it runs no workflows (" + err.Error() + ")"
	}
	if len(have) != len(wfs) {
		return "it runs other workflows (found in its ./workflows, or changed since it started)"
	}
	for _, w := range wfs {
		if have[w.ID] != w.Digest {
			return "it runs another version of workflow " + w.ID + " (changed since it started, or another file)"
		}
	}
	return ""
}

type workflowJSON struct {
	ID          string          `json:"id"`
	Description string          `json:"description,omitempty"`
	File        string          `json:"file"`
	Inputs      json.RawMessage `json:"inputs"`
	Tool        string          `json:"tool,omitempty"`
}

func (e *env) workflowsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "workflows",
		Short: "List the workflows: id, description, file, inputs, published tool",
		Long: `Lists the workflows found in ./workflows/ and $XDG_CONFIG_HOME/switchboard/workflows/,
and the files the configuration's workflows = [...] names, with their inputs
and, for those [gateway] workflows publishes, the tool name MCP clients see.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			wfs, err := e.loadWorkflows(cfg)
			if err != nil {
				return err
			}
			out := []workflowJSON{}
			for _, w := range wfs {
				j := workflowJSON{ID: w.ID, Description: w.Description, File: w.File, Inputs: w.InputSchema()}
				for _, id := range cfg.Gateway.Workflows {
					if id == w.ID {
						j.Tool = cfg.Gateway.WorkflowToolName(id)
					}
				}
				out = append(out, j)
			}
			if e.jsonOut {
				return e.printJSON(out)
			}
			if len(out) == 0 {
				fmt.Fprintln(e.stderr, "switchboard: no workflows (add YAML files to ./workflows/)")
				return nil
			}
			for _, w := range wfs {
				var ins []string
				for _, in := range w.Inputs {
					s := in.Name + ":" + in.Type
					if in.Required {
						s += "!"
					}
					ins = append(ins, s)
				}
				line := fmt.Sprintf("%s\t%s\t(%s)", w.ID, w.Description, strings.Join(ins, ", "))
				if t := cfg.Gateway.WorkflowToolName(w.ID); containsString(cfg.Gateway.Workflows, w.ID) {
					line += "\tpublished as " + t
				}
				e.printf("%s\t%s\n", line, w.File)
			}
			return nil
		},
	}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (e *env) workflowCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "workflow", Short: "Run a workflow"}
	var kvs []string
	var argsJSON, runID, mcpFlag, toolsFlag string
	var detach bool
	run := &cobra.Command{
		Use:   "run ID [--arg key=value ...]",
		Short: "Run a workflow: its events on stderr, its outputs on stdout",
		Long: `Runs the workflow ID (or a workflow file) with its inputs from --args (a JSON
object) and --arg key=value, and waits for it: each step is reported on
stderr as it starts and ends, and the outputs are printed on stdout as a
JSON object. With --json every event is a JSON line on stdout instead.

A gate asks on the terminal, with a form built from its schema; off a
terminal, stderr says how to answer it from another shell
(switchboard runs answer RUN GATE --value JSON) and the run keeps waiting.
A step that is not idempotent and was in flight when its process stopped
is not called again: stderr says how to resolve it from another shell
(switchboard runs resolve RUN STEP --retry, --skip or --fail) and the run
waits.

--mcp and --tools select the servers (ids, or none) and the tools (host
names, or none) of every agent step of the run, and of the runs its
workflow steps start, over what the steps and the workflow select: the
run's selection is the most specific (docs/workflows.md). Each must be one
the servers running it have.

Ctrl-C cancels the run (resume it with switchboard runs resume RUN); with
--detach the command returns once the run has started, and the run is
continued by the next switchboard serve or by switchboard runs resume RUN.
--run-id names the run: starting a run id that exists starts nothing and
follows it.

Exit codes: 0 the run completed, 1 it failed or was cancelled, 2 a usage or
input error (an unknown workflow, inputs its schema refuses), 130 Ctrl-C.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			o := &workflow.StartOptions{RunID: runID}
			if cmd.Flags().Changed("mcp") {
				o.MCPServers = flagSelection(mcpFlag)
			}
			if cmd.Flags().Changed("tools") {
				o.Tools = flagSelection(toolsFlag)
			}
			return e.workflowRun(cmd.Context(), a[0], argsJSON, kvs, o, detach)
		},
	}
	f := run.Flags()
	f.StringVar(&mcpFlag, "mcp", "", "the servers of every agent step, by id (comma-separated), or none")
	f.StringVar(&toolsFlag, "tools", "", "the tools of every agent step (comma-separated host names), or none")
	f.StringVar(&argsJSON, "args", "", "inputs as a JSON object")
	f.StringArrayVar(&kvs, "arg", nil, "an input as key=value (repeatable)")
	f.StringVar(&runID, "run-id", "", "the run's id (default: a new one)")
	f.BoolVar(&detach, "detach", false, "return once the run has started")
	cmd.AddCommand(run)
	return cmd
}

// flagSelection reads --mcp or --tools: none, or a comma-separated list.
func flagSelection(v string) *workflow.Selection {
	if strings.TrimSpace(v) == "none" {
		return &workflow.Selection{Names: []string{}}
	}
	return &workflow.Selection{Names: splitList(v)}
}

// failedServersLine says which servers failed to start, and where to see
// why.
func failedServersLine(ids []string) string {
	return fmt.Sprintf("servers that failed to start, whose tools it goes without: %s (switchboard servers says why)", strings.Join(ids, ", "))
}

func (e *env) workflowRun(ctx context.Context, id, argsJSON string, kvs []string, so *workflow.StartOptions, detach bool) error {
	if _, err := buildArgs(argsJSON, kvs, nil); err != nil {
		return usageErr("%v", err)
	}
	var extra []*workflow.Workflow
	if workflow.IsPath(id) {
		w, err := workflow.Load(id)
		if err != nil {
			return &exitError{kind: daemon.KindConfig, err: err, details: problemDetails(err)}
		}
		extra, id = []*workflow.Workflow{w}, w.ID
	}
	x, err := e.openEngine(ctx, true, extra...)
	if err != nil {
		return err
	}
	defer x.Close()
	wf := x.workflow(id)
	if wf == nil {
		var ids []string
		for _, w := range x.wfs {
			ids = append(ids, w.ID)
		}
		return &exitError{kind: daemon.KindUsage, err: fmt.Errorf("no workflow %q (run 'switchboard workflows' to list them)%s", id, didYouMean(id, names(ids)))}
	}
	raw, err := buildArgs(argsJSON, kvs, wf.InputSchema())
	if err != nil {
		return usageErr("%v", err)
	}
	var inputs map[string]any
	if raw != nil {
		d := json.NewDecoder(strings.NewReader(string(raw)))
		d.UseNumber()
		if err := d.Decode(&inputs); err != nil {
			return usageErr("%v", err)
		}
		inputs = plainNumbers(inputs).(map[string]any)
	}
	rid, err := x.runs.Start(ctx, wf.ID, inputs, so)
	if err != nil {
		return usageErr("%v", err)
	}
	if detach {
		if e.jsonOut {
			return e.printJSON(map[string]string{"run_id": rid})
		}
		e.printf("%s\n", rid)
		return nil
	}
	return e.follow(ctx, x, rid)
}

// withRunsBeside returns extra, the workflows given by path, with the
// workflows they run (transitively) that neither found nor extra has,
// looked up by id in the folder of the file that runs them. One not found
// there either is left for CheckAll to name.
func withRunsBeside(extra, found []*workflow.Workflow) []*workflow.Workflow {
	have := func(id string) bool {
		return slices.ContainsFunc(found, func(w *workflow.Workflow) bool { return w.ID == id }) ||
			slices.ContainsFunc(extra, func(w *workflow.Workflow) bool { return w.ID == id })
	}
	for i := 0; i < len(extra); i++ {
		for _, id := range extra[i].Runs() {
			if have(id) || extra[i].File == "" {
				continue
			}
			if w, err := workflow.Find(id, []string{filepath.Dir(extra[i].File)}); err == nil && w.ID == id {
				extra = append(extra, w)
			}
		}
	}
	return extra
}

// plainNumbers turns json.Numbers into float64 (integers stay exact to 2^53),
// what the engine's schema check and templates expect.
func plainNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	case map[string]any:
		for k, x := range t {
			t[k] = plainNumbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = plainNumbers(x)
		}
	}
	return v
}

// follow prints the run's events until it ends, answers its gates on a
// terminal, and exits as the run ended. Ctrl-C cancels the run.
func (e *env) follow(ctx context.Context, x *engineHere, rid string) error {
	eng := x.runs
	why := e.notTerminal()
	var ask host.ElicitationHandler
	if why == "" {
		ask = e.elicitation("")
	}
	var last workflow.Event
	err := eng.Follow(ctx, rid, 0, func(ev workflow.Event) error {
		last = ev
		if e.jsonOut {
			b, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			e.wroteJSON = true
			fmt.Fprintln(e.stdout, e.red.Redact(string(b)))
		} else {
			e.printEvent(ev)
		}
		if ev.Type == workflow.EventStepInterrupted {
			fmt.Fprintf(e.stderr, "switchboard: step %s was interrupted: its call may have been made, and it is not idempotent; from another shell,\n  switchboard runs resolve %s %s --retry   (or --skip, --fail)\n", stepKey(&ev), rid, stepKey(&ev))
			return nil
		}
		if ev.Type != workflow.EventGateWaiting {
			return nil
		}
		gate := ev.Step
		if ev.Item != nil {
			gate = fmt.Sprintf("%s/%d", ev.Step, *ev.Item)
		}
		if ask == nil {
			fmt.Fprintf(e.stderr, "switchboard: gate %s waits for an answer (%s): from another shell,\n  switchboard runs answer %s %s --value '{...}'   (or --decline)\n", gate, why, rid, gate)
			return nil
		}
		sch := ev.Schema
		if len(sch) == 0 {
			sch = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		var schema any
		json.Unmarshal(sch, &schema)
		res, err := ask(ctx, "workflow "+rid, &mcp.ElicitParams{Message: ev.Text, RequestedSchema: schema})
		if err != nil {
			return err
		}
		a := workflow.GateAnswer{Action: "decline"}
		if res.Action == "accept" {
			a = workflow.GateAnswer{Action: "accept", Content: res.Content}
		}
		switch err := eng.Answer(ctx, rid, gate, a); {
		case errors.Is(err, workflow.ErrGateAnswered):
			fmt.Fprintf(e.stderr, "switchboard: gate %s was answered elsewhere first; your answer was not taken\n", gate)
		case err != nil && !errors.Is(err, workflow.ErrNotWaiting):
			fmt.Fprintf(e.stderr, "switchboard: gate %s: %v\n", gate, err)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			// Ctrl-C: the run stops with the command.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			eng.Cancel(cctx, rid)
			cancel()
			fmt.Fprintf(e.stderr, "switchboard: run %s cancelled (switchboard runs resume %s continues it)\n", rid, rid)
			return ctx.Err()
		}
		return failed(err)
	}
	switch last.Type {
	case workflow.EventRunCompleted:
		if !e.jsonOut {
			out := last.Outputs
			if st, err := eng.Get(ctx, rid); err == nil && st.Outputs != nil {
				out, _ = json.Marshal(st.Outputs) // whole, not cut like an event's
			}
			if len(out) == 0 {
				out = json.RawMessage("{}")
			}
			e.printf("%s\n", out)
		}
		return nil
	case workflow.EventRunFailed:
		if e.jsonOut {
			return &exitError{kind: daemon.KindFailed}
		}
		return failed(fmt.Errorf("run %s failed: %v", rid, last.Error))
	default:
		if e.jsonOut {
			return &exitError{kind: daemon.KindFailed}
		}
		return failed(fmt.Errorf("run %s cancelled", rid))
	}
}

// printEvent says an event on stderr, one line, cleaned (eprintf): it
// quotes what servers and templates produced.
func (e *env) printEvent(ev workflow.Event) {
	step := ev.Step
	if ev.Item != nil {
		step = fmt.Sprintf("%s[%d]", step, *ev.Item)
	}
	ms := ""
	if ev.DurationMS != nil {
		ms = fmt.Sprintf(" (%d ms)", *ev.DurationMS)
	}
	switch ev.Type {
	case workflow.EventRunStarted:
		e.eprintf("run %s: workflow %s started\n", ev.RunID, ev.Workflow)
		if len(ev.FailedServers) > 0 {
			e.eprintf("  %s\n", failedServersLine(ev.FailedServers))
		}
	case workflow.EventStepStarted:
		att := ""
		if ev.Attempt > 1 {
			att = fmt.Sprintf(" (attempt %d)", ev.Attempt)
		}
		e.eprintf("→ %s%s\n", step, att)
	case workflow.EventStepCompleted:
		if ev.Skipped {
			e.eprintf("- %s skipped\n", step)
		} else {
			e.eprintf("✓ %s%s: %s\n", step, ms, firstLine(string(ev.Result)))
		}
	case workflow.EventStepFailed:
		cont := ""
		if ev.Continued {
			cont = "; continuing"
		}
		e.eprintf("✗ %s: %v%s\n", step, ev.Error, cont)
	case workflow.EventGateWaiting:
		e.eprintf("? %s: %s\n", step, oneLine(ev.Text))
	case workflow.EventGateAnswered:
		e.eprintf("! %s: %s\n", step, ev.Action)
	case workflow.EventStepInterrupted:
		e.eprintf("⚠ %s interrupted (attempt %d)\n", step, ev.Attempt)
	case workflow.EventStepResolved:
		e.eprintf("! %s: %s\n", step, ev.Action)
	case workflow.EventRunCompleted:
		e.eprintf("run %s completed%s\n", ev.RunID, ms)
	case workflow.EventRunFailed:
		e.eprintf("run %s failed%s\n", ev.RunID, ms)
	case workflow.EventRunCancelled:
		e.eprintf("run %s cancelled\n", ev.RunID)
	}
}

func (e *env) runsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List workflow runs; show, cancel, resume them, answer gates, resolve interrupted steps",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			x, err := e.openEngine(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer x.Close()
			runs, err := x.runs.Runs(cmd.Context(), nil)
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				if runs == nil {
					runs = []*workflow.RunStatus{}
				}
				return e.printJSON(runs)
			}
			for _, r := range runs {
				extra := ""
				if r.Gate != nil {
					extra = " on gate " + r.Gate.Step
				}
				if r.Interrupted != nil {
					extra = " at step " + stepKey(r.Interrupted)
				}
				if r.Error != nil {
					extra = ": " + r.Error.Error()
				}
				e.printf("%s\t%s\t%s%s\t%s\n", r.ID, r.Workflow, r.State, extra, r.Started.Local().Format(time.DateTime))
			}
			return nil
		},
	}
	show := &cobra.Command{
		Use: "show RUN", Short: "Show a run: its state, outputs and events", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			x, err := e.openEngine(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer x.Close()
			st, err := x.runs.Get(cmd.Context(), a[0])
			if err != nil {
				return failed(err)
			}
			evs, err := x.runs.Events(cmd.Context(), a[0], 0)
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				return e.printJSON(struct {
					*workflow.RunStatus
					Events []workflow.Event `json:"events"`
				}{st, evs})
			}
			e.printf("run %s: workflow %s, %s\n", st.ID, st.Workflow, st.State)
			if len(st.FailedServers) > 0 {
				e.printf("%s\n", failedServersLine(st.FailedServers))
			}
			if st.Error != nil {
				e.printf("error: %v\n", st.Error)
			}
			if st.Outputs != nil {
				b, _ := json.Marshal(st.Outputs)
				e.printf("outputs: %s\n", b)
			}
			for _, ev := range evs {
				b, _ := json.Marshal(ev)
				e.printf("%s\n", b)
			}
			return nil
		},
	}
	cancel := &cobra.Command{
		Use: "cancel RUN", Short: "Cancel a run (resume continues it)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			x, err := e.openEngine(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer x.Close()
			if err := x.runs.Cancel(cmd.Context(), a[0]); err != nil {
				return failed(err)
			}
			fmt.Fprintf(e.stderr, "switchboard: run %s cancelled\n", a[0])
			return nil
		},
	}
	resume := &cobra.Command{
		Use:   "resume RUN",
		Short: "Resume a cancelled run, or one whose process is gone, and follow it",
		Long: `Resumes a run from its last completed step: one that was cancelled, or one
left pending by a process that is gone (a workflow run killed or detached).
A run still executed by a live process is left to it. The command then
follows the run as workflow run does.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			ctx := cmd.Context()
			x, err := e.openEngine(ctx, true)
			if err != nil {
				return err
			}
			defer x.Close()
			if err := x.runs.Resume(ctx, a[0]); err != nil {
				return failed(err)
			}
			return e.follow(ctx, x, a[0])
		},
	}
	var value string
	var decline bool
	answer := &cobra.Command{
		Use:   "answer RUN GATE (--value JSON | --decline)",
		Short: "Answer a run's gate",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			ans := workflow.GateAnswer{Action: "decline"}
			switch {
			case decline && value != "":
				return usageErr("--value and --decline exclude each other")
			case !decline && value == "":
				return usageErr("answer with --value JSON (an object as the gate's schema says) or --decline")
			case !decline:
				var c map[string]any
				if err := json.Unmarshal([]byte(value), &c); err != nil {
					return usageErr("--value: not a JSON object: %v", err)
				}
				ans = workflow.GateAnswer{Action: "accept", Content: c}
			}
			x, err := e.openEngine(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer x.Close()
			if err := x.runs.Answer(cmd.Context(), a[0], a[1], ans); err != nil {
				return failed(err)
			}
			fmt.Fprintf(e.stderr, "switchboard: gate %s of run %s answered (%s)\n", a[1], a[0], ans.Action)
			return nil
		},
	}
	answer.Flags().StringVar(&value, "value", "", "the answer, a JSON object")
	answer.Flags().BoolVar(&decline, "decline", false, "decline the gate")
	var retry, skip, fail bool
	resolve := &cobra.Command{
		Use:   "resolve RUN STEP (--retry | --skip | --fail)",
		Short: "Resolve a run's interrupted step",
		Long: `Resolves the step a run is interrupted at: a step that is not idempotent
and was in flight when its process stopped, so that its call may or may not
have been made (switchboard runs shows the run interrupted, and at which
step: its id, and /ITEM for an item of a for_each). --retry calls it again,
as a new attempt; --skip takes the step's default (null without one) as its
result and goes on; --fail fails the run at the step.

Of several resolutions at once, one is taken: the others exit 2, saying
which was.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, a []string) error {
			var how []workflow.Resolution
			for _, f := range []struct {
				set bool
				how workflow.Resolution
			}{{retry, workflow.ResolveRetry}, {skip, workflow.ResolveSkip}, {fail, workflow.ResolveFail}} {
				if f.set {
					how = append(how, f.how)
				}
			}
			if len(how) != 1 {
				return usageErr("resolve with one of --retry, --skip or --fail")
			}
			x, err := e.openEngine(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer x.Close()
			if err := x.runs.Resolve(cmd.Context(), a[0], a[1], how[0]); err != nil {
				return failed(err)
			}
			fmt.Fprintf(e.stderr, "switchboard: step %s of run %s resolved (%s)\n", a[1], a[0], how[0])
			return nil
		},
	}
	resolve.Flags().BoolVar(&retry, "retry", false, "call the step again, as a new attempt")
	resolve.Flags().BoolVar(&skip, "skip", false, "take the step's default as its result and go on")
	resolve.Flags().BoolVar(&fail, "fail", false, "fail the run at the step")
	cmd.AddCommand(show, cancel, resume, answer, resolve)
	return cmd
}

// stepKey names an event's step as resolve and answer take it: its id,
// and /ITEM for an item of a for_each.
func stepKey(ev *workflow.Event) string {
	if ev.Item != nil {
		return fmt.Sprintf("%s/%d", ev.Step, *ev.Item)
	}
	return ev.Step
}
