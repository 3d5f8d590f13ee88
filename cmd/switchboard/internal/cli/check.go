package cli

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/workflow"
)

// finding is what a start check found: a problem (validate exits 2), or
// a warning for what may legitimately be missing (an optional server's
// command, a provider no agent may use).
type finding struct {
	*config.Problem
	warning bool
}

// startChecks are what validate runs beyond the configuration's own checks:
// each finds, without starting anything, what would fail when something
// starts.
var startChecks = []func(e *env, cfg *config.Config) []finding{
	(*env).configWarnings,
	(*env).checkCommands,
	(*env).checkPlaceholders,
	(*env).checkAgents,
	(*env).checkWorkflows,
}

// startFindings runs the start checks, leaving out the servers the
// configuration's own problems are about (one report per mistake).
func (e *env) startFindings(cfg *config.Config, cfgErr error) []finding {
	bad := config.Problems(cfgErr)
	reported := func(p *config.Problem) bool {
		return slices.ContainsFunc(bad, func(b *config.Problem) bool {
			return b.Pos.File == p.Pos.File && p.Field != "" && strings.HasPrefix(b.Field, serverPrefix(p.Field))
		})
	}
	var out []finding
	for _, check := range startChecks {
		for _, f := range check(e, cfg) {
			if !reported(f.Problem) {
				out = append(out, f)
			}
		}
	}
	return out
}

// configWarnings are the configuration's own warnings (config.Warnings):
// what it may do but most likely should not.
func (e *env) configWarnings(cfg *config.Config) []finding {
	var out []finding
	for _, w := range cfg.Warnings {
		out = append(out, finding{w, true})
	}
	return out
}

// serverPrefix is the server part of a field path: mcp_servers[2] of
// mcp_servers[2].env.X.
func serverPrefix(field string) string {
	if i := strings.Index(field, "]"); i >= 0 && strings.HasPrefix(field, "mcp_servers[") {
		return field[:i+1]
	}
	if rest, ok := strings.CutPrefix(field, "mcpServers."); ok {
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			return field[:len("mcpServers.")+i]
		}
	}
	return field
}

// serverProblem is a problem of server s's field (a path under its table).
func serverProblem(s config.Server, field, format string, args ...any) *config.Problem {
	base := s.Source.Field
	if base == "" {
		base = decode.KeyPath("mcp_servers", s.ID)
	}
	return &config.Problem{Pos: config.Position{File: s.Source.File, Line: s.Source.Line},
		Field: base + "." + field, Msg: fmt.Sprintf(format, args...)}
}

// checkCommands finds stdio servers whose command cannot be run: not on
// the PATH the child will have, not there, not executable. An optional
// server's is a warning: it may be meant for another machine.
func (e *env) checkCommands(cfg *config.Config) []finding {
	var out []finding
	for _, s := range cfg.Servers {
		if s.Transport != config.TransportStdio || s.Command == "" || strings.Contains(s.Command, "{{") {
			continue
		}
		path, ok := s.Env["PATH"]
		if !ok || strings.Contains(path, "{{") {
			path = e.getenv("PATH")
		}
		if msg := commandProblem(s.Command, s.Cwd, path); msg != "" {
			out = append(out, finding{serverProblem(s, "command", "%s", msg), s.Optional})
		}
	}
	return out
}

// commandProblem says why command cannot be started, or "". A name
// without a slash is looked for in path's absolute folders, as the
// transport does; a path is relative to cwd when cwd is set.
func commandProblem(command, cwd, path string) string {
	if !strings.Contains(command, "/") {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" || !filepath.IsAbs(dir) {
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, command)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return ""
			}
		}
		return fmt.Sprintf("%q is not on PATH: install it, or write its full path", command)
	}
	p := command
	if !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("%q does not exist", command)
	case err != nil:
		return fmt.Sprintf("%q: %v", command, errors.Unwrap(err))
	case fi.IsDir():
		return fmt.Sprintf("%q is a folder, not a program", command)
	case fi.Mode()&0o111 == 0:
		return fmt.Sprintf("%q is not executable (chmod +x %s)", command, command)
	}
	return ""
}

// checkPlaceholders resolves, as serve would, the {{env.NAME}} and
// {{secrets.NAME}} placeholders a start resolves, and finds those that
// resolve to nothing: in servers' env, headers and oauth credentials,
// [network] proxy, [gateway] auth_token and [state] database (PostgreSQL),
// encryption_key and encryption_key_fallbacks (problems: the start fails;
// a key shorter than a sealer takes too), and providers' api_key and
// headers (warnings: only a run that uses the provider fails). No value
// is kept or shown.
func (e *env) checkPlaceholders(cfg *config.Config) []finding {
	var store secret.Store
	lookup := func(kind string) secret.Store {
		if kind == "secrets" && store == nil {
			store = e.secretStore()
		}
		return store
	}
	// resolve expands v as a start does; ok is false when v holds no
	// placeholder, or one that is malformed (the configuration's problem)
	// or unresolved (msgs says which).
	resolve := func(v string) (value string, ok bool, msgs []string) {
		ps, err := secret.Parse(v)
		if err != nil || len(ps) == 0 {
			return "", false, nil
		}
		var st secret.Store
		for _, p := range ps {
			if p.Kind == "secrets" {
				st = lookup("secrets")
			}
		}
		value, err = secret.Expand(v, e.lookupEnv, st, nil)
		for _, u := range unresolvedErrors(err) {
			msgs = append(msgs, u.Error())
		}
		return value, err == nil, msgs
	}
	unresolved := func(v string) []string {
		_, _, msgs := resolve(v)
		return msgs
	}
	var out []finding
	for _, s := range cfg.Servers {
		var oauth map[string]string
		if s.OAuth != nil {
			oauth = map[string]string{"client_secret": s.OAuth.ClientSecret, "private_key": s.OAuth.PrivateKey}
		}
		for _, m := range []struct {
			field string
			vals  map[string]string
		}{{"env", s.Env}, {"headers", s.Headers}, {"oauth", oauth}} {
			for _, k := range slices.Sorted(maps.Keys(m.vals)) {
				for _, msg := range unresolved(m.vals[k]) {
					out = append(out, finding{serverProblem(s, decode.KeyPath(m.field, k), "%s", msg), s.Optional})
				}
			}
		}
	}
	at := func(src config.Position, field, msg string) finding {
		return finding{Problem: &config.Problem{Pos: config.Position{File: src.File, Line: src.Line}, Field: field, Msg: msg}}
	}
	for _, msg := range unresolved(cfg.Network.Proxy) {
		out = append(out, at(cfg.Network.Source, "network.proxy", msg))
	}
	for _, msg := range unresolved(cfg.Gateway.AuthToken) {
		out = append(out, at(cfg.Gateway.Source, "gateway.auth_token", msg))
	}
	// [state]: serve resolves the database's placeholders (PostgreSQL
	// only: a SQLite path has none) before it opens the store, and the
	// keys whenever encryption_key is set; a key must be long enough for
	// a sealer.
	st := cfg.State
	if st.Shared() {
		for _, msg := range unresolved(st.Database) {
			out = append(out, at(st.Source, "state.database", msg))
		}
	}
	if st.EncryptionKey != "" {
		keys := append([]string{st.EncryptionKey}, st.EncryptionKeyFallbacks...)
		for i, k := range keys {
			field := "state.encryption_key"
			if i > 0 {
				field = decode.IndexPath("state.encryption_key_fallbacks", i-1)
			}
			key, ok, msgs := resolve(k)
			for _, msg := range msgs {
				out = append(out, at(st.Source, field, msg))
			}
			if ok {
				if _, err := secret.DeriveKey(key, "validate", 32); err != nil {
					out = append(out, at(st.Source, field, err.Error()))
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Providers)) {
		p := cfg.Providers[name]
		at := func(field string) *config.Problem {
			return &config.Problem{Pos: config.Position{File: p.Source.File, Line: p.Source.Line}, Field: decode.KeyPath(decode.KeyPath("providers", name), field)}
		}
		for _, msg := range unresolved(p.APIKey) {
			pr := at("api_key")
			pr.Msg = msg + "; a run with this provider will fail"
			out = append(out, finding{pr, true})
		}
		for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
			for _, msg := range unresolved(p.Headers[k]) {
				pr := at(decode.KeyPath("headers", k))
				pr.Msg = msg + "; a run with this provider will fail"
				out = append(out, finding{pr, true})
			}
		}
	}
	return out
}

// unresolvedErrors are the *secret.UnresolvedError in err, a joined
// error of them.
func unresolvedErrors(err error) []*secret.UnresolvedError {
	if u, ok := err.(*secret.UnresolvedError); ok {
		return []*secret.UnresolvedError{u}
	}
	var out []*secret.UnresolvedError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, unresolvedErrors(e)...)
		}
	}
	return out
}

// checkAgents loads every agent file found (./agents/, the user's) and
// resolves each against the configuration, as agents and run do: a file
// that does not load, a server it names that the configuration lacks, an
// inline server declared differently elsewhere or whose command cannot
// run, a provider no one configured.
func (e *env) checkAgents(cfg *config.Config) []finding {
	agents, err := agent.List(agent.Dirs(e.getenv))
	var out []finding
	add := func(err error) {
		for _, d := range problemDetails(err) {
			out = append(out, finding{Problem: &config.Problem{Pos: config.Position{File: d.File, Line: d.Line}, Field: d.Path, Msg: d.Message}})
		}
	}
	add(err)
	add(agent.CheckConflicts(cfg, agents))
	known := map[string]bool{}
	for n := range llm.Defaults(e.getenv) {
		known[n] = true
	}
	for n := range cfg.Providers {
		known[n] = true
	}
	for _, a := range agents {
		if _, err := agent.Resolve(cfg, a, nil); err != nil {
			if len(config.Problems(err)) == 0 {
				err = &config.Problem{Pos: config.Position{File: a.File}, Msg: err.Error()}
			}
			add(err)
		}
		for _, en := range a.Servers {
			s := en.Server
			if en.Ref != "" || s.Transport != config.TransportStdio || s.Command == "" || strings.Contains(s.Command, "{{") {
				continue
			}
			if msg := commandProblem(s.Command, s.Cwd, e.getenv("PATH")); msg != "" {
				out = append(out, finding{&config.Problem{Pos: config.Position{File: en.Pos.File, Line: en.Pos.Line},
					Field: en.Pos.Field + ".command", Msg: msg}, s.Optional})
			}
		}
		if p, _, err := agent.SplitModel(a.Model); err == nil && !known[p] {
			names := slices.Sorted(maps.Keys(known))
			out = append(out, finding{Problem: &config.Problem{Pos: config.Position{File: a.File}, Field: "model",
				Msg: fmt.Sprintf("unknown provider %q (known: %s; add a [providers.%s] table to the configuration)", p, strings.Join(names, ", "), p)}})
		}
	}
	return out
}

// checkWorkflows loads every workflow file (./workflows, the user's
// folder, and the config's workflows = [...]) and checks them together:
// each file's own problems, those across files (ids, workflow steps,
// cycles), that [gateway] workflows names workflows that exist, that each
// agent step's agent loads, that the servers and tools workflows and their
// agent steps select are configured ones (workflow.CheckServers), and that
// each tool step's tool belongs to a configured server, as far as the tool
// name format tells (the servers' own tools are not known without
// starting them).
func (e *env) checkWorkflows(cfg *config.Config) []finding {
	ws, err := workflow.List(workflow.Dirs(e.getenv), cfg.Workflows...)
	var out []finding
	add := func(err error) {
		for _, d := range problemDetails(err) {
			out = append(out, finding{Problem: &config.Problem{Pos: config.Position{File: d.File, Line: d.Line}, Field: d.Path, Msg: d.Message}})
		}
	}
	add(err)
	add(workflow.CheckAll(ws))
	add(workflow.CheckServers(ws, cfg))
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	for i, id := range cfg.Gateway.Workflows {
		if !slices.Contains(ids, id) {
			msg := fmt.Sprintf("no workflow %q", id)
			if s := decode.Suggest(id, ids); s != "" && decode.EditDistance(s, id) <= 2 {
				msg += "; did you mean " + s + "?"
			}
			out = append(out, finding{Problem: &config.Problem{Pos: config.Position{File: cfg.Gateway.Source.File, Line: cfg.Gateway.Source.Line},
				Field: decode.IndexPath("gateway.workflows", i), Msg: msg}})
		}
	}
	agentDirs := agent.Dirs(e.getenv)
	for _, w := range ws {
		forEachStep(w, func(s *workflow.Step, field string) {
			at := func(key, format string, args ...any) {
				out = append(out, finding{Problem: &config.Problem{Pos: config.Position{File: w.File, Line: s.Line},
					Field: decode.KeyPath(field, key), Msg: fmt.Sprintf(format, args...)}})
			}
			switch s.Kind {
			case workflow.StepAgent:
				if _, err := agent.Find(s.Agent, agentDirs); err != nil {
					if errors.Is(err, agent.ErrNotFound) {
						at("agent", "%v", err)
					} else {
						at("agent", "agent %s does not load: %v", s.Agent, err)
					}
				}
			case workflow.StepTool:
				if msg := toolServerProblem(cfg, s.Tool); msg != "" {
					at("tool", "%s", msg)
				}
			}
		})
	}
	return out
}

// forEachStep calls f on every step of w with its field path, a for_each's
// step after its for_each.
func forEachStep(w *workflow.Workflow, f func(s *workflow.Step, field string)) {
	for i, s := range w.Steps {
		field := decode.IndexPath("steps", i)
		f(s, field)
		if s.ForEach != nil && s.ForEach.Step != nil {
			f(s.ForEach.Step, field+".for_each.step")
		}
	}
}

// toolServerProblem says why no configured server can have a tool called
// name (workflow.ToolServer); "" when one can, or when the format does not
// tell.
func toolServerProblem(cfg *config.Config, name string) string {
	_, problem := workflow.ToolServer(cfg, name)
	return problem
}
