package agent

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/internal/userfile"
)

// DefaultMaxSteps bounds the model calls of a run whose agent sets no
// max_steps: a model that keeps asking for tools cannot run forever.
const DefaultMaxSteps = 20

// The built-in tools an agent may grant in builtins.
const (
	BuiltinMCPCall       = "mcp_call"
	BuiltinHTTPRequest   = "http_request"
	BuiltinReadFile      = "read_file"
	BuiltinListDirectory = "list_directory"
)

var builtinNames = []string{BuiltinMCPCall, BuiltinHTTPRequest, BuiltinReadFile, BuiltinListDirectory}

// The tool modes of an agent (tool_mode): how the model is given the
// run's tools.
const (
	// ToolModeAuto is search mode when the run has more than search_above
	// tools, else all (the default).
	ToolModeAuto = "auto"
	// ToolModeAll gives the model every tool of the run.
	ToolModeAll = config.ModeAll
	// ToolModeSearch gives it search_tools and call_tool.
	ToolModeSearch = config.ModeSearch
	// ToolModeCode gives it search_tools and run_code.
	ToolModeCode = config.ModeCode
)

var toolModes = []string{ToolModeAuto, ToolModeAll, ToolModeSearch, ToolModeCode}

// DefaultSearchAbove is search_above's default: past 30 to 50 tools a
// model's choice of tool degrades, and their definitions fill its context.
const DefaultSearchAbove = 40

// MaxSearchAbove bounds search_above: above it auto would give a model
// thousands of definitions (write tool_mode: all to mean that).
const MaxSearchAbove = 1000

// ToolModeProblem is the problem with a tool mode, or "".
func ToolModeProblem(m string) string {
	if m == "" || slices.Contains(toolModes, m) {
		return ""
	}
	return fmt.Sprintf("unknown tool mode %q: use %s", m, strings.Join(toolModes, ", "))
}

// Agent is one agent file, decoded and validated.
type Agent struct {
	ID          string
	Description string
	// Model is "provider:model", e.g. "openai:gpt-4.1-mini"; "" leaves it to
	// the run (--model).
	Model       string
	Temperature *float64
	MaxTokens   int // 0: the provider's default
	MaxSteps    int // model calls per run; DefaultMaxSteps when unset
	// Servers are the agent's mcp_servers. Nil means the field is absent
	// (the run uses the configured servers); empty means none.
	Servers []ServerEntry
	// Tools narrows the tools the model sees to these host names
	// ("mcp_everything_get-sum"); nil means every tool.
	Tools []string
	// AllowSampling lets servers' sampling requests be answered by the
	// agent's own model (at most 4,096 tokens each); in a run, their
	// tokens count in its usage and TokenBudget.
	AllowSampling bool
	// Builtins grants built-in tools by name (mcp_call, http_request,
	// read_file, list_directory).
	Builtins []string
	// HTTPAllow lists the hosts http_request may reach.
	HTTPAllow []string
	// MCPDiscovery selects, per run, the servers whose tools match the
	// prompt (see Select).
	MCPDiscovery bool
	// MaxTools caps how many server tools reach the model; 0: no cap.
	MaxTools int
	// ToolMode is how the model is given the run's tools (tool_mode: auto,
	// all, search, code; "" is auto): see RunOptions and the README.
	ToolMode string
	// SearchAbove is the number of tools above which auto is search mode;
	// 0: DefaultSearchAbove.
	SearchAbove int
	// CodeBudget bounds each run_code program in code mode (code_budget:
	// cpu_time, wall_time, max_calls); a zero field takes codemode's
	// default.
	CodeBudget codemode.Budget
	// TokenBudget ends a run once this many tokens (input + output, over
	// every step and every sampling request its tools made) have been
	// used; 0: no budget. Sampling gets at most what is left of it.
	TokenBudget int
	// System is the system prompt: a Markdown file's body, or a YAML
	// file's system field.
	System string

	// File is where the agent was read from.
	File string
}

// ServerEntry is one mcp_servers entry: a reference to a configured server
// or an inline server.
type ServerEntry struct {
	// Ref is the id of a configured server; "" for an inline server.
	Ref string
	// ToolsAllowlist, beside Ref, narrows the configured server's tools;
	// nil keeps the server's own.
	ToolsAllowlist []string
	// Server is the inline server (Ref == "").
	Server config.Server
	// Pos is where the entry is.
	Pos config.Position
}

// ID is the entry's server id.
func (e ServerEntry) ID() string {
	if e.Ref != "" {
		return e.Ref
	}
	return e.Server.ID
}

// agentFields are the fields of an agent file. The system field of a
// Markdown agent is its body, and is refused by Parse before these are
// read.
var agentFields = decode.Table[Agent]{
	decode.Value("id", decode.YAML, func(a *Agent) *string { return &a.ID }, written(idProblem), ifSet(idProblem)),
	decode.String("description", decode.YAML, func(a *Agent) *string { return &a.Description }),
	decode.Value("model", decode.YAML, func(a *Agent) *string { return &a.Model }, written(modelProblem), ifSet(modelProblem)),
	decode.Value("temperature", decode.YAML, func(a *Agent) **float64 { return &a.Temperature }, func(d *decode.Decoder, field string, v any) (*float64, bool) {
		f, ok := d.Number(field, v)
		return &f, ok
	}, func(t *float64) string {
		if t != nil && (*t < 0 || *t > 2) {
			return fmt.Sprintf("must be between 0 and 2, not %g", *t)
		}
		return ""
	}),
	decode.Positive("max_tokens", decode.YAML, func(a *Agent) *int { return &a.MaxTokens }),
	decode.Positive("max_steps", decode.YAML, func(a *Agent) *int { return &a.MaxSteps }),
	decode.Value("mcp_servers", decode.YAML, func(a *Agent) *[]ServerEntry { return &a.Servers }, readServers),
	decode.Value("tools", decode.YAML, func(a *Agent) *[]string { return &a.Tools }, readTools),
	decode.Bool("allow_sampling", decode.YAML, func(a *Agent) *bool { return &a.AllowSampling }),
	decode.StringList("builtins", decode.YAML, func(a *Agent) *[]string { return &a.Builtins }, func(l []string, i int) string {
		switch b := l[i]; {
		case !slices.Contains(builtinNames, b):
			return fmt.Sprintf("unknown built-in tool %q (want one of %s)", b, strings.Join(builtinNames, ", "))
		case slices.Index(l[:i], b) >= 0:
			return fmt.Sprintf("duplicate %q", b)
		}
		return ""
	}),
	decode.StringList("http_allow", decode.YAML, func(a *Agent) *[]string { return &a.HTTPAllow }, func(l []string, i int) string {
		if h := l[i]; h == "" || strings.ContainsAny(h, "/:@ ") || h != strings.ToLower(h) {
			return fmt.Sprintf("want a lower-case host name such as api.github.com, not %q", h)
		}
		return ""
	}),
	decode.Bool("mcp_discovery", decode.YAML, func(a *Agent) *bool { return &a.MCPDiscovery }),
	decode.Positive("max_tools", decode.YAML, func(a *Agent) *int { return &a.MaxTools }),
	decode.Positive("token_budget", decode.YAML, func(a *Agent) *int { return &a.TokenBudget }),
	decode.String("tool_mode", decode.YAML, func(a *Agent) *string { return &a.ToolMode }, ToolModeProblem),
	decode.Value("search_above", decode.YAML, func(a *Agent) *int { return &a.SearchAbove }, (*decode.Decoder).Positive, func(n int) string {
		if n > MaxSearchAbove {
			return fmt.Sprintf("must be at most %d, not %d (write tool_mode: all to give the model every tool)", MaxSearchAbove, n)
		}
		return ""
	}),
	decode.Value("code_budget", decode.YAML, func(a *Agent) *codemode.Budget { return &a.CodeBudget }, readCodeBudget),
	decode.String("system", decode.YAML, func(a *Agent) *string { return &a.System }),
}

func idProblem(id string) string {
	if !validID(id) {
		return fmt.Sprintf("invalid id %q: use 1 to 32 characters of A-Z a-z 0-9 _ -", id)
	}
	return ""
}

func modelProblem(m string) string {
	if _, _, err := SplitModel(m); err != nil {
		return err.Error()
	}
	return ""
}

// written reads a string and refuses an empty one with problem's message:
// in an Agent "" means unset (the file name's id, the run's model), which
// a file that writes "" does not mean.
func written(problem func(string) string) func(*decode.Decoder, string, any) (string, bool) {
	return func(d *decode.Decoder, field string, v any) (string, bool) {
		s, ok := d.String(field, v)
		if ok && s == "" {
			d.Errorf(field, "%s", problem(s))
			return "", false
		}
		return s, ok
	}
}

// ifSet checks a value that is set; "" is unset.
func ifSet(problem func(string) string) func(string) string {
	return func(s string) string {
		if s == "" {
			return ""
		}
		return problem(s)
	}
}

// maxAgentFileBytes bounds an agent file: a system prompt a person writes
// is a few kilobytes; this keeps a stray large file, or a link to a
// device, from being read whole.
const maxAgentFileBytes = 1 << 20

// Load reads an agent file: Markdown (.md) with YAML front matter, whose
// body is the system prompt, or YAML (.yaml, .yml). The error joins a
// [*config.Problem] for every problem found, each with file, line and field.
// A file that is not a regular file, or is over 1 MiB, is refused unread.
func Load(path string) (*Agent, error) {
	data, err := userfile.Read(path, maxAgentFileBytes, "an agent file")
	if err != nil {
		return nil, config.ReadProblem(path, err)
	}
	return Parse(path, data)
}

// Parse decodes an agent file's content; file names it in problems and
// decides the format (.md: Markdown with front matter; otherwise YAML).
// An agent without an id takes its file name without the extension.
func Parse(file string, data []byte) (*Agent, error) {
	d := decode.New(file, decode.YAML)
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	yamlData, body, offset := data, "", 0
	isMD := strings.EqualFold(filepath.Ext(file), ".md") || strings.EqualFold(filepath.Ext(file), ".markdown")
	if isMD {
		var ok bool
		yamlData, body, ok = frontMatter(data)
		if !ok {
			d.ErrorAt(1, "", "a Markdown agent needs YAML front matter: a first line ---, the fields, then a line ---")
			return nil, config.DecoderProblems(d)
		}
		offset = 1
	}
	doc, ok := d.YAML(yamlData, decode.YAMLOptions{Kind: "agent file", Fields: "id: ..., model: ...", Offset: offset})
	if !ok {
		return nil, config.DecoderProblems(d)
	}
	if _, ok := doc["system"]; ok && isMD {
		d.Errorf("system", "a Markdown agent's system prompt is its body, after the front matter")
		delete(doc, "system")
	}
	a := &Agent{MaxSteps: DefaultMaxSteps}
	agentFields.Decode(d, "", doc, a)
	agentFields.Check(a, func(field, msg string) { d.Errorf(field, "%s", msg) })
	granted := slices.Contains(a.Builtins, BuiltinHTTPRequest)
	switch {
	case granted && len(a.HTTPAllow) == 0 && !d.Bad("http_allow"):
		d.Errorf("builtins", "http_request needs http_allow: the hosts it may reach")
	case !granted && a.HTTPAllow != nil:
		d.Errorf("http_allow", "set, but builtins does not grant http_request")
	}
	if isMD {
		a.System = strings.TrimSpace(body)
	}
	if a.ID == "" && !d.Bad("id") {
		a.ID = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		if !validID(a.ID) {
			d.ErrorAt(1, "id", "missing, and the file name %q is not a valid id: add id: NAME (A-Z a-z 0-9 _ -)", a.ID)
		}
	}
	a.File = file
	if err := config.DecoderProblems(d); err != nil {
		return nil, err
	}
	return a, nil
}

// frontMatter splits "---\nYAML\n---\nbody".
func frontMatter(data []byte) (yml []byte, body string, ok bool) {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return nil, "", false
	}
	rest := s[len("---\n"):]
	for i := 0; i <= len(rest); {
		j := strings.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if j >= 0 {
			line = rest[i : i+j]
		}
		if line == "---" || line == "..." {
			end := i + len(line)
			if j >= 0 {
				end++
			}
			return []byte(rest[:i]), rest[end:], true
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	return nil, "", false
}

// codeBudgetFields are code_budget's: the budgets a person tunes; the
// others (memory, output, stack depth) keep codemode's defaults.
var codeBudgetFields = decode.Table[codemode.Budget]{
	decode.Duration("cpu_time", decode.YAML, func(b *codemode.Budget) *time.Duration { return &b.CPUTime }, codemode.MaxCPUTime),
	decode.Duration("wall_time", decode.YAML, func(b *codemode.Budget) *time.Duration { return &b.WallTime }, codemode.MaxWallTime),
	decode.Value("max_calls", decode.YAML, func(b *codemode.Budget) *int { return &b.MaxCalls }, (*decode.Decoder).Positive, func(n int) string {
		if n > codemode.MaxCalls {
			return fmt.Sprintf("must be at most %d, not %d", codemode.MaxCalls, n)
		}
		return ""
	}),
}

// readCodeBudget reads code_budget, a mapping of codeBudgetFields.
func readCodeBudget(d *decode.Decoder, k string, v any) (codemode.Budget, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(k, "must be a mapping (cpu_time, wall_time, max_calls), not %s", d.TypeName(v))
		return codemode.Budget{}, false
	}
	var b codemode.Budget
	codeBudgetFields.DecodeAndCheck(d, k, m, &b)
	return b, true
}

// readTools reads tools: a list of host tool names, none (no tool) or
// inherit (every tool of the agent's servers), the words a workflow's
// tools has too.
func readTools(d *decode.Decoder, k string, v any) ([]string, bool) {
	switch v {
	case "none":
		return []string{}, true
	case "inherit":
		return nil, true
	}
	if s, ok := v.(string); ok {
		d.Errorf(k, "must be none, inherit or a list of tool names, not %q", s)
		return nil, false
	}
	return d.StringList(k, v)
}

// readServers reads mcp_servers: none, inherit (the configuration's
// servers, as when absent), or a list whose entries are a configured
// server's id (a string), {ref: ID, tools_allowlist: [...]}, or an inline
// server with the fields of an [[mcp_servers]] table. An entry with a
// problem is reported and left out.
func readServers(d *decode.Decoder, k string, v any) ([]ServerEntry, bool) {
	switch v {
	case "none":
		return []ServerEntry{}, true
	case "inherit":
		return nil, true
	}
	l, ok := v.([]any)
	if !ok {
		hint := ""
		if v == nil {
			hint = " (write none, or [], for no server)"
		} else if _, isMap := v.(map[string]any); isMap {
			hint = " (start each entry with -)"
		}
		if s, isString := v.(string); isString {
			d.Errorf(k, "must be none, inherit or a list of servers, not %q", s)
			return nil, false
		}
		d.Errorf(k, "must be a list of servers, not %s%s", d.TypeName(v), hint)
		return nil, false
	}
	out := []ServerEntry{}
	ids := map[string]string{}
	for i, e := range l {
		f := decode.IndexPath(k, i)
		pos := config.Position{File: d.File, Line: d.LineOf(f), Field: f}
		var se ServerEntry
		switch e := e.(type) {
		case string:
			if !validID(e) {
				d.Errorf(f, "%q is not a server id; write ref: ID, or an inline server with id and command or url", e)
				continue
			}
			se = ServerEntry{Ref: e, Pos: pos}
		case map[string]any:
			if r, isRef := e["ref"]; isRef {
				se = ServerEntry{Pos: pos}
				se.Ref, ok = d.String(decode.KeyPath(f, "ref"), r)
				if ok && !validID(se.Ref) {
					d.Errorf(decode.KeyPath(f, "ref"), "invalid server id %q", se.Ref)
					ok = false
				}
				for _, kk := range d.SortedKeys(f, e) {
					switch kk {
					case "ref":
					case "tools_allowlist":
						se.ToolsAllowlist, _ = d.StringList(decode.KeyPath(f, kk), e[kk])
					default:
						d.Errorf(decode.KeyPath(f, kk), "not allowed beside ref (only tools_allowlist is); an entry is either ref: ID or an inline server")
						ok = false
					}
				}
				if !ok {
					continue
				}
				break
			}
			lines := map[string]int{}
			for p, l := range d.Lines {
				if p == f || strings.HasPrefix(p, f+".") {
					lines[p] = l
				}
			}
			s, err := config.DecodeServer(d.File, f, e, lines)
			if err != nil {
				for _, p := range config.Problems(err) {
					d.Problems = append(d.Problems, decode.Problem{Line: p.Pos.Line, Field: p.Field, Msg: p.Msg})
				}
				continue
			}
			se = ServerEntry{Server: s, Pos: pos}
		default:
			d.Errorf(f, "must be a server id or a mapping (ref: ID, or an inline server), not %s", d.TypeName(e))
			continue
		}
		if prev, dup := ids[se.ID()]; dup {
			d.Errorf(f, "server %q is listed twice (also %s)", se.ID(), prev)
			continue
		}
		ids[se.ID()] = f
		out = append(out, se)
	}
	return out, true
}

// SplitModel splits "provider:model" ("openai:gpt-4.1-mini").
func SplitModel(s string) (provider, model string, err error) {
	p, m, ok := strings.Cut(s, ":")
	if !ok || p == "" || m == "" || !validID(p) {
		return "", "", fmt.Errorf("want provider:model, such as openai:gpt-4.1-mini or ollama:llama3.2, not %q", s)
	}
	return p, m, nil
}

func validID(s string) bool { return len(s) <= 32 && decode.IsBareKey(s) }
