package workflow

// What a workflow's agent steps may use (issue 24 §7, RobotLab's network
// tier): a workflow, each of its agent steps, and a run may say which
// servers (mcp_servers) and which tools (tools) an agent step's agent may
// use — inherit, none, or a list — resolved run → step → workflow, the
// most specific that says something winning (see Selection). The engine
// resolves them and hands the result to its Agents with each agent step;
// CheckServers refuses, at load, a server or a tool that no configured
// server can be.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/decode"
)

// servers reads mcp_servers: inherit, none, or a list of configured
// servers' ids.
func (p *fileParser) servers(d *decode.Decoder, field string, v any) (*Selection, bool) {
	return p.selection(field, v, "server ids", func(l []string, i int) string {
		switch id := l[i]; {
		case !validID(id):
			return fmt.Sprintf("invalid server id %q", id)
		case slices.Index(l[:i], id) >= 0:
			return fmt.Sprintf("server %q is listed twice", id)
		}
		return ""
	})
}

// tools reads tools: inherit, none, or a list of host tool names.
func (p *fileParser) tools(d *decode.Decoder, field string, v any) (*Selection, bool) {
	return p.selection(field, v, "tool names (the host's: mcp_github_get_issue)", func(l []string, i int) string {
		switch t := l[i]; {
		case strings.TrimSpace(t) == "":
			return "empty"
		case slices.Index(l[:i], t) >= 0:
			return fmt.Sprintf("tool %q is listed twice", t)
		}
		return ""
	})
}

func (p *fileParser) selection(field string, v any, what string, problem func(l []string, i int) string) (*Selection, bool) {
	d := p.d
	switch e := v.(type) {
	case string:
		switch e {
		case "inherit":
			return nil, true
		case "none":
			return &Selection{Names: []string{}, Line: p.lineOf(field)}, true
		}
		d.Errorf(field, "want inherit, none or a list of %s, not %q", what, e)
		return nil, false
	case []any:
		for i, x := range e {
			if _, ok := x.(map[string]any); ok {
				// An agent file's mcp_servers may hold a ref with its
				// tools_allowlist, or an inline server; a workflow's
				// agents run over the configuration's servers.
				d.Errorf(decode.IndexPath(field, i), "must be a configured server's id (narrow its tools with tools:; an agent step's agent runs over the configuration's servers)")
				return nil, false
			}
		}
		l, ok := d.StringList(field, e)
		if !ok {
			return nil, false
		}
		good := true
		for i := range l {
			if msg := problem(l, i); msg != "" {
				d.Errorf(decode.IndexPath(field, i), "%s", msg)
				good = false
			}
		}
		if !good {
			return nil, false
		}
		return &Selection{Names: l, Line: p.lineOf(field)}, true
	}
	d.Errorf(field, "must be inherit, none or a list of %s, not %s", what, d.TypeName(v))
	return nil, false
}

// firstSet is the first selection that says something: the most specific.
func firstSet(levels ...*Selection) *Selection {
	for _, s := range levels {
		if s != nil {
			return s
		}
	}
	return nil
}

// names is a selection as an agent.Overrides-like list: nil inherits,
// empty is none.
func (s *Selection) names() []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s.Names...)
}

// CheckServers checks what workflows say of the configuration's servers:
// each mcp_servers of a workflow or of an agent step names configured
// servers, and each tools names tools that one of the servers selected
// where it applies (the same level's, else the workflow's, else any
// configured one) can have, as far as the tool name format tells: a
// server's own tools are not known without starting it, and a name it
// does not have fails the step's agent run, naming the tool. The error
// joins a [*config.Problem] for each problem, at its file, line and field.
func CheckServers(wfs []*Workflow, cfg *config.Config) error {
	if cfg == nil {
		cfg = &config.Config{}
	}
	var errs []error
	for _, w := range wfs {
		at := func(line int, field, format string, args ...any) {
			errs = append(errs, &config.Problem{Pos: config.Position{File: w.File, Line: line}, Field: field, Msg: fmt.Sprintf(format, args...)})
		}
		checkSelected(cfg, w.MCPServers, "mcp_servers", at)
		if t := w.AgentTools; t != nil {
			checkTools(cfg, t, w.MCPServers, indexed("tools"), t.Line, "mcp_servers", false, at)
		}
		w.eachStepField(func(s *Step, field string) {
			if s.Kind != StepAgent {
				return
			}
			checkSelected(cfg, s.MCPServers, decode.KeyPath(field, "mcp_servers"), at)
			servers := firstSet(s.MCPServers, w.MCPServers)
			switch {
			case s.AgentTools != nil:
				where := "the workflow's mcp_servers"
				if s.MCPServers != nil {
					where = "its mcp_servers"
				}
				checkTools(cfg, s.AgentTools, servers, indexed(decode.KeyPath(field, "tools")), s.AgentTools.Line, where, false, at)
			case s.MCPServers != nil && !s.MCPServers.None() && w.AgentTools != nil:
				// The workflow's tools, inherited, over the step's own
				// servers: what the workflow's line says of each tool
				// is reported there. Over none, they name nothing.
				f := decode.KeyPath(field, "mcp_servers")
				checkTools(cfg, w.AgentTools, servers, func(int) string { return f }, s.MCPServers.Line,
					fmt.Sprintf("the step's mcp_servers (the workflow's tools, line %d, apply to it)", w.AgentTools.Line), true, at)
			}
		})
	}
	return errors.Join(errs...)
}

func indexed(field string) func(i int) string {
	return func(i int) string { return decode.IndexPath(field, i) }
}

// eachStepField calls f on every step of w with its field path, a
// for_each's step after its for_each.
func (w *Workflow) eachStepField(f func(s *Step, field string)) {
	for i, s := range w.Steps {
		field := decode.IndexPath("steps", i)
		f(s, field)
		if s.ForEach != nil && s.ForEach.Step != nil {
			f(s.ForEach.Step, decode.KeyPath(decode.KeyPath(field, "for_each"), "step"))
		}
	}
}

type reportAt func(line int, field, format string, args ...any)

// checkSelected checks that every server sel names is configured.
func checkSelected(cfg *config.Config, sel *Selection, field string, at reportAt) {
	if sel == nil {
		return
	}
	for i, id := range sel.Names {
		if _, ok := cfg.Server(id); !ok {
			at(sel.Line, decode.IndexPath(field, i), "no server %q in the configuration (%s)", id, configured(cfg))
		}
	}
}

// checkTools checks that every tool sel names can be a tool of a server
// servers selects (any configured one when servers is nil), reporting at
// line and fieldOf(its index); where names servers in a problem. An
// inherited sel was checked on its own where it is written: only whether
// servers has its tools' servers is checked.
func checkTools(cfg *config.Config, sel, servers *Selection, fieldOf func(i int) string, line int, where string, inherited bool, at reportAt) {
	for i, name := range sel.Names {
		f := fieldOf(i)
		server, problem := ToolServer(cfg, name)
		switch {
		case problem != "":
			if !inherited {
				at(line, f, "%s", problem)
			}
		case servers.None():
			at(line, f, "%s: %s is none, so the agent has no server whose tools it could name", name, where)
		case servers != nil && server != "" && !slices.Contains(servers.Names, server):
			at(line, f, "%s is a tool of server %s, which %s leaves out (%s)", name, server, where, strings.Join(servers.Names, ", "))
		}
	}
}

func configured(cfg *config.Config) string {
	var ids []string
	for _, s := range cfg.Servers {
		ids = append(ids, s.ID)
	}
	if len(ids) == 0 {
		return "none is configured"
	}
	return "configured: " + strings.Join(ids, ", ")
}

// ToolServer says which configured server has the tool the host names
// name, by the configuration's tool name format: its id, or why no
// configured server can have it (its name fits no server's, or the
// server's tools_allowlist leaves it out). Both are "" when the format
// does not tell (no {server} in it, or a name cut to 64 characters).
func ToolServer(cfg *config.Config, name string) (server, problem string) {
	format := cfg.ToolNameFormat
	if format == "" {
		format = config.DefaultToolNameFormat
	}
	before, after, ok := strings.Cut(format, "{tool}")
	if !ok || !strings.Contains(format, "{server}") || len(name) >= host.MaxToolNameLength {
		return "", ""
	}
	var servers []string
	for _, s := range cfg.Servers {
		servers = append(servers, s.ID)
		pre, suf := host.ToolName(before, s.ID, ""), host.ToolName(after, s.ID, "")
		if !strings.HasPrefix(name, pre) || !strings.HasSuffix(name, suf) || len(name) <= len(pre)+len(suf) {
			continue
		}
		own := name[len(pre) : len(name)-len(suf)]
		if s.ToolsAllowlist == nil || slices.ContainsFunc(s.ToolsAllowlist, func(t string) bool { return host.ToolName("{tool}", "", t) == own }) {
			return s.ID, ""
		}
		return s.ID, fmt.Sprintf("server %s's tools_allowlist does not have %q", s.ID, own)
	}
	if len(servers) == 0 {
		return "", fmt.Sprintf("no server is configured, so no tool is called %s", name)
	}
	return "", fmt.Sprintf("%s is not a tool name of any configured server (%s) under tool_name_format %q", name, strings.Join(servers, ", "), format)
}

// ErrSelection is returned by Start for a run whose own selection
// (StartOptions.MCPServers, Tools) names a server or a tool its host does
// not have.
var ErrSelection = errors.New("workflow: the run selects servers or tools its host does not have")

// checkRunSelection checks a run's own selection against the host that
// runs it: each server one of the host's (not an in-process one), each
// tool one the host offers, and one of the servers selected when the run
// selects servers too.
func (e *Engine) checkRunSelection(servers, tools *Selection) error {
	if servers == nil && tools == nil {
		return nil
	}
	e.mu.Lock()
	h := e.host
	e.mu.Unlock()
	if h == nil {
		return errors.New("the engine has no host to check the run's servers and tools against")
	}
	var ids []string
	for _, st := range h.Servers() {
		if st.Transport != host.TransportInProcess {
			ids = append(ids, st.ID)
		}
	}
	var errs []error
	if servers != nil {
		for _, id := range servers.Names {
			if !slices.Contains(ids, id) {
				known := "it has none"
				if len(ids) > 0 {
					known = "it has " + strings.Join(ids, ", ")
				}
				errs = append(errs, fmt.Errorf("mcp_servers: no server %q here (%s)", id, known))
			}
		}
	}
	if tools != nil {
		for _, name := range tools.Names {
			t, ok := h.Tool(name)
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("tools: no server offers %q (switchboard tools lists them)", name))
			case servers.None():
				errs = append(errs, fmt.Errorf("tools: %q, but mcp_servers is none", name))
			case servers != nil && !slices.Contains(servers.Names, t.Server):
				errs = append(errs, fmt.Errorf("tools: %q is a tool of server %s, which mcp_servers leaves out (%s)", name, t.Server, strings.Join(servers.Names, ", ")))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrSelection, errors.Join(errs...))
	}
	return nil
}

// failedServers are the host's servers that have failed to start, as a
// run starts (host.ServerStatus.FailedToStart); nil when there are none
// or the engine has no host.
func (e *Engine) failedServers() []string {
	e.mu.Lock()
	h := e.host
	e.mu.Unlock()
	if h == nil {
		return nil
	}
	var out []string
	for _, st := range h.Servers() {
		if st.FailedToStart() {
			out = append(out, st.ID)
		}
	}
	return out
}
