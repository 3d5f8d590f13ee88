package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
)

// ProviderFunc resolves a "provider:model" spec (an agent's model) to its
// provider, the provider's configured name and the model's name. The CLI
// provides it (keys from the environment or the secret store, the guarded
// HTTP client); this package knows no key.
type ProviderFunc func(ctx context.Context, spec string) (p llm.Provider, name, model string, err error)

// Steps runs agents as steps of a larger run — a workflow's agent steps —
// over a host that is already running (the daemon's, or the CLI's), rather
// than a host of their own: an agent's servers must be among the host's,
// and it sees their tools narrowed by its allowlists, never the tools of
// other servers.
type Steps struct {
	// Config is the configuration the agent's mcp_servers refer to.
	Config *config.Config
	// Dirs are where an agent named by id is found (Dirs); a path is used
	// as it is.
	Dirs []string
	// Host offers the tools; required by Run.
	Host *host.Host
	// Provider resolves the agent's model; nil fails every step.
	Provider ProviderFunc
	// Turn wraps each turn of each run (RunOptions.Turn); nil: none.
	Turn func(ctx context.Context, step int) (context.Context, func())
}

// StepResult is an agent step's result.
type StepResult struct {
	Text  string
	Usage Usage
	// FailedServers are the agent's servers that failed to start: the run
	// went on without their tools (Event.FailedServers).
	FailedServers []string
}

// Run runs the agent name (a file, or an id found in Dirs) with prompt and
// returns its final answer and usage. o, when set, is the last layer of
// the agent's resolution (a workflow's selection for the step, in the
// form of --mcp and --tools). A run that fails is an error naming why;
// cancelling ctx cancels it.
func (s *Steps) Run(ctx context.Context, name, prompt string, o *Overrides) (*StepResult, error) {
	ro, err := s.prepare(ctx, name, prompt, o)
	if err != nil {
		return nil, err
	}
	a := ro.Agent
	var last Event
	for ev := range Run(ctx, ro) {
		if ev.Type.Terminal() {
			last = ev
		}
	}
	switch last.Type {
	case EventRunCompleted:
		r := &StepResult{Text: last.Text, FailedServers: last.FailedServers}
		if last.Usage != nil {
			r.Usage = *last.Usage
		}
		return r, nil
	case EventRunFailed:
		if last.Error != nil {
			return nil, fmt.Errorf("agent %s: %s: %s", a.ID, last.Error.Code, last.Error.Message)
		}
	case EventRunCancelled:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("agent %s: cancelled", a.ID)
	}
	return nil, fmt.Errorf("agent %s: the run ended without an answer", a.ID)
}

// Stream runs the agent name with prompt as Run does, and calls fn with
// each of its events as they happen (run:started first, a terminal event
// last), the run named runID ("" for a random id). The error is one that
// kept the run from starting (no such agent, a server not running here,
// no provider); a run that fails says so in its events.
func (s *Steps) Stream(ctx context.Context, name, prompt, runID string, fn func(Event)) error {
	o, err := s.prepare(ctx, name, prompt, nil)
	if err != nil {
		return err
	}
	o.RunID = runID
	for ev := range Run(ctx, o) {
		fn(ev)
	}
	return nil
}

// prepare finds the agent and what its run needs: its tools among the
// host's, its provider.
func (s *Steps) prepare(ctx context.Context, name, prompt string, over *Overrides) (*RunOptions, error) {
	if s.Host == nil {
		return nil, errors.New("no host to run the agent's tools on")
	}
	if s.Provider == nil {
		return nil, errors.New("no LLM provider to run the agent with")
	}
	a, err := Find(name, s.Dirs)
	if err != nil {
		return nil, err
	}
	if len(a.Builtins) > 0 {
		return nil, fmt.Errorf("agent %s (%s): grants built-in tools (%s), which an agent step does not offer", a.ID, a.File, strings.Join(a.Builtins, ", "))
	}
	plan, err := Resolve(s.Config, a, over)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	tools, err := s.tools(a, plan)
	if err != nil {
		return nil, err
	}
	if a.Model == "" {
		return nil, fmt.Errorf("agent %s names no model: add model: provider:model to %s", a.ID, a.File)
	}
	p, pname, model, err := s.Provider(ctx, a.Model)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	return &RunOptions{Agent: a, Host: s.Host, Provider: p, ProviderName: pname, Model: model,
		Prompt: prompt, Tools: tools, Servers: plan.Servers, Turn: s.Turn}, nil
}

// tools returns the host names of the tools the agent may use: those of its
// servers (each one of the host's) that their allowlists admit, narrowed by
// the plan's tools. A tool the plan names that none of its servers offers
// is an error naming it, unless one of them failed to start (the run goes
// on without that server's tools, and says which failed).
func (s *Steps) tools(a *Agent, plan *Plan) ([]string, error) {
	have := map[string]host.ServerStatus{}
	for _, st := range s.Host.Servers() {
		have[st.ID] = st
	}
	allow := map[string]config.Server{}
	var ids []string
	failed := false
	for _, srv := range plan.Servers {
		st, ok := have[srv.ID]
		if !ok {
			return nil, fmt.Errorf("agent %s (%s): server %q is not one of the servers running here; an agent step uses the configuration's servers (give the agent mcp_servers refs to them)", a.ID, a.File, srv.ID)
		}
		failed = failed || st.FailedToStart()
		allow[srv.ID] = srv
		ids = append(ids, srv.ID)
	}
	out := []string{}
	for _, t := range s.Host.Tools() {
		srv, ok := allow[t.Server]
		if !ok || srv.ToolsAllowlist != nil && !slices.Contains(srv.ToolsAllowlist, t.Tool.Name) {
			continue
		}
		if plan.Tools != nil && !slices.Contains(plan.Tools, t.Name) {
			continue
		}
		out = append(out, t.Name)
	}
	var missing []string
	for _, n := range plan.Tools {
		if !slices.Contains(out, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 && !failed {
		servers := "it has no server"
		if len(ids) > 0 {
			servers = "its servers are " + strings.Join(ids, ", ")
		}
		return nil, fmt.Errorf("agent %s (%s): none of its servers offers %s (%s)", a.ID, a.File, strings.Join(missing, ", "), servers)
	}
	return out, nil
}
