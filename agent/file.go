package agent

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboardmcp/switchboard/config"
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

var agentKeys = []string{
	"id", "description", "model", "temperature", "max_tokens", "max_steps",
	"mcp_servers", "tools", "allow_sampling", "builtins", "http_allow",
	"mcp_discovery", "max_tools", "token_budget", "system",
}

// Load reads an agent file: Markdown (.md) with YAML front matter, whose
// body is the system prompt, or YAML (.yaml, .yml). The error joins a
// [*config.Problem] for every problem found, each with file, line and field.
func Load(path string) (*Agent, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &config.Problem{Pos: config.Position{File: path}, Msg: "cannot read: " + unwrapPath(err).Error()}
	}
	return Parse(path, data)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse decodes an agent file's content; file names it in problems and
// decides the format (.md: Markdown with front matter; otherwise YAML).
// An agent without an id takes its file name without the extension.
func Parse(file string, data []byte) (*Agent, error) {
	d := &decoder{file: file, lines: map[string]int{}}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	yamlData, body, offset := data, "", 0
	isMD := strings.EqualFold(filepath.Ext(file), ".md") || strings.EqualFold(filepath.Ext(file), ".markdown")
	if isMD {
		var ok bool
		yamlData, body, ok = frontMatter(data)
		if !ok {
			d.errorf("", 1, "a Markdown agent needs YAML front matter: a first line ---, the fields, then a line ---")
			return nil, d.err()
		}
		offset = 1
	}
	doc, ok := d.parse(yamlData, offset)
	if !ok {
		return nil, d.err()
	}
	a := d.agent(doc, isMD)
	if isMD {
		a.System = strings.TrimSpace(body)
	}
	if a.ID == "" && !d.bad["id"] {
		a.ID = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		if !validID(a.ID) {
			d.errorf("id", 1, "missing, and the file name %q is not a valid id: add id: NAME (A-Z a-z 0-9 _ -)", a.ID)
		}
	}
	a.File = file
	if err := d.err(); err != nil {
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

// decoder turns a YAML document into an Agent, collecting problems.
type decoder struct {
	file     string
	lines    map[string]int // field path → line
	bad      map[string]bool
	problems []*config.Problem
}

func (d *decoder) errorf(field string, line int, format string, args ...any) {
	if line == 0 {
		line = d.lineOf(field)
	}
	d.problems = append(d.problems, &config.Problem{
		Pos: config.Position{File: d.file, Line: line}, Field: field, Msg: fmt.Sprintf(format, args...),
	})
	if d.bad == nil {
		d.bad = map[string]bool{}
	}
	d.bad[field] = true
}

func (d *decoder) err() error {
	if len(d.problems) == 0 {
		return nil
	}
	sort.SliceStable(d.problems, func(i, j int) bool { return d.problems[i].Pos.Line < d.problems[j].Pos.Line })
	errs := make([]error, len(d.problems))
	for i, p := range d.problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

func (d *decoder) lineOf(field string) int {
	for p := field; ; {
		if l, ok := d.lines[p]; ok {
			return l
		}
		if p == "" {
			return 0
		}
		p = parentPath(p)
	}
}

// parse parses YAML into generic values (string, bool, int64, float64,
// []any, map[string]any, nil), recording each key's and element's line.
// Anchors, aliases, tags and merge keys are refused: an agent file is
// configuration, and these make what it says harder to see.
func (d *decoder) parse(data []byte, offset int) (map[string]any, bool) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		line := 0
		msg := err.Error()
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if t := ye.GetToken(); t != nil && t.Position != nil {
				line = t.Position.Line + offset
			}
		}
		d.errorf("", max(line, 1), "invalid YAML: %s", msg)
		return nil, false
	}
	if len(f.Docs) > 1 {
		d.errorf("", offset+1, "holds %d YAML documents; an agent file has one", len(f.Docs))
		return nil, false
	}
	d.lines[""] = offset + 1
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return map[string]any{}, true
	}
	w := &walker{d: d, offset: offset}
	v := w.node("", f.Docs[0].Body)
	if d.err() != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf("", offset+1, "must be a mapping of fields (id: ..., model: ...), not %s", typeName(v))
		return nil, false
	}
	return m, true
}

type walker struct {
	d      *decoder
	offset int
}

func (w *walker) line(n ast.Node) int {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line + w.offset
	}
	return 0
}

func (w *walker) node(path string, n ast.Node) any {
	switch n := n.(type) {
	case nil:
		return nil
	case *ast.NullNode:
		return nil
	case *ast.StringNode:
		return n.Value
	case *ast.LiteralNode:
		return n.Value.Value
	case *ast.BoolNode:
		return n.Value
	case *ast.IntegerNode:
		switch v := n.Value.(type) {
		case int64:
			return v
		case uint64:
			if v <= math.MaxInt64 {
				return int64(v)
			}
			return float64(v)
		}
		return n.GetValue()
	case *ast.FloatNode:
		return n.Value
	case *ast.InfinityNode:
		return n.Value
	case *ast.NanNode:
		return math.NaN()
	case *ast.MappingValueNode:
		m := map[string]any{}
		w.pair(path, m, n)
		return m
	case *ast.MappingNode:
		m := map[string]any{}
		for _, mv := range n.Values {
			w.pair(path, m, mv)
		}
		return m
	case *ast.SequenceNode:
		a := make([]any, 0, len(n.Values))
		for i, e := range n.Values {
			p := indexPath(path, i)
			if l := w.line(e); l > 0 {
				w.d.lines[p] = l
			}
			a = append(a, w.node(p, e))
		}
		return a
	case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode:
		w.d.errorf(path, w.line(n), "YAML anchors, aliases and merge keys are not supported in agent files")
	case *ast.TagNode:
		w.d.errorf(path, w.line(n), "YAML tags are not supported in agent files")
	default:
		w.d.errorf(path, w.line(n), "unsupported YAML %s", n.Type())
	}
	return nil
}

func (w *walker) pair(path string, m map[string]any, mv *ast.MappingValueNode) {
	if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
		w.d.errorf(path, w.line(mv.Key), "YAML merge keys (<<) are not supported in agent files")
		return
	}
	ks, ok := mv.Key.(ast.ScalarNode)
	var key string
	if ok {
		switch v := ks.GetValue().(type) {
		case string:
			key = v
		default:
			ok = false
		}
	}
	if !ok {
		w.d.errorf(path, w.line(mv.Key), "a key must be a plain string")
		return
	}
	p := keyPath(path, key)
	line := w.line(mv.Key)
	if _, dup := m[key]; dup {
		w.d.errorf(p, line, "duplicate key %q (first on line %d)", key, w.d.lines[p])
		return
	}
	w.d.lines[p] = line
	m[key] = w.node(p, mv.Value)
}

// agent types the document's fields.
func (d *decoder) agent(m map[string]any, isMD bool) *Agent {
	a := &Agent{MaxSteps: DefaultMaxSteps}
	for _, k := range d.sortedKeys("", m) {
		v := m[k]
		switch k {
		case "id":
			if s, ok := d.str(k, v); ok {
				if !validID(s) {
					d.errorf(k, 0, "invalid id %q: use 1 to 32 characters of A-Z a-z 0-9 _ -", s)
				}
				a.ID = s
			}
		case "description":
			a.Description, _ = d.str(k, v)
		case "model":
			if s, ok := d.str(k, v); ok {
				if _, _, err := SplitModel(s); err != nil {
					d.errorf(k, 0, "%v", err)
				}
				a.Model = s
			}
		case "temperature":
			if f, ok := d.number(k, v); ok {
				if f < 0 || f > 2 {
					d.errorf(k, 0, "must be between 0 and 2, not %g", f)
				}
				a.Temperature = &f
			}
		case "max_tokens":
			a.MaxTokens, _ = d.positive(k, v)
		case "max_steps":
			if n, ok := d.positive(k, v); ok {
				a.MaxSteps = n
			}
		case "max_tools":
			a.MaxTools, _ = d.positive(k, v)
		case "token_budget":
			a.TokenBudget, _ = d.positive(k, v)
		case "mcp_servers":
			a.Servers = d.servers(k, v)
		case "tools":
			a.Tools, _ = d.strList(k, v)
		case "allow_sampling":
			a.AllowSampling, _ = d.boolean(k, v)
		case "mcp_discovery":
			a.MCPDiscovery, _ = d.boolean(k, v)
		case "builtins":
			if l, ok := d.strList(k, v); ok {
				seen := map[string]bool{}
				for i, b := range l {
					f := indexPath(k, i)
					switch {
					case !slices.Contains(builtinNames, b):
						d.errorf(f, 0, "unknown built-in tool %q (want one of %s)", b, strings.Join(builtinNames, ", "))
					case seen[b]:
						d.errorf(f, 0, "duplicate %q", b)
					}
					seen[b] = true
				}
				a.Builtins = l
			}
		case "http_allow":
			if l, ok := d.strList(k, v); ok {
				for i, h := range l {
					if h == "" || strings.ContainsAny(h, "/:@ ") || h != strings.ToLower(h) {
						d.errorf(indexPath(k, i), 0, "want a lower-case host name such as api.github.com, not %q", h)
					}
				}
				a.HTTPAllow = l
			}
		case "system":
			if isMD {
				d.errorf(k, 0, "a Markdown agent's system prompt is its body, after the front matter")
				continue
			}
			a.System, _ = d.str(k, v)
		default:
			msg := fmt.Sprintf("unknown field %q", k)
			if s := config.Suggest(k, agentKeys); s != "" {
				msg += "; did you mean " + s + "?"
			}
			d.errorf(k, 0, "%s", msg)
		}
	}
	granted := slices.Contains(a.Builtins, BuiltinHTTPRequest)
	switch {
	case granted && len(a.HTTPAllow) == 0 && !d.bad["http_allow"]:
		d.errorf("builtins", 0, "http_request needs http_allow: the hosts it may reach")
	case !granted && a.HTTPAllow != nil:
		d.errorf("http_allow", 0, "set, but builtins does not grant http_request")
	}
	return a
}

// servers decodes mcp_servers: a list whose entries are a configured
// server's id (a string), {ref: ID, tools_allowlist: [...]}, or an inline
// server with the fields of an [[mcp_servers]] table.
func (d *decoder) servers(k string, v any) []ServerEntry {
	l, ok := v.([]any)
	if !ok {
		hint := ""
		if v == nil {
			hint = " (write [] for none)"
		} else if _, isMap := v.(map[string]any); isMap {
			hint = " (start each entry with -)"
		}
		d.errorf(k, 0, "must be a list of servers, not %s%s", typeName(v), hint)
		return nil
	}
	out := []ServerEntry{}
	ids := map[string]string{}
	for i, e := range l {
		f := indexPath(k, i)
		pos := config.Position{File: d.file, Line: d.lineOf(f), Field: f}
		var se ServerEntry
		switch e := e.(type) {
		case string:
			if !validID(e) {
				d.errorf(f, 0, "%q is not a server id; write ref: ID, or an inline server with id and command or url", e)
				continue
			}
			se = ServerEntry{Ref: e, Pos: pos}
		case map[string]any:
			if r, isRef := e["ref"]; isRef {
				se = ServerEntry{Pos: pos}
				se.Ref, ok = d.str(keyPath(f, "ref"), r)
				if ok && !validID(se.Ref) {
					d.errorf(keyPath(f, "ref"), 0, "invalid server id %q", se.Ref)
					ok = false
				}
				for _, kk := range d.sortedKeys(f, e) {
					switch kk {
					case "ref":
					case "tools_allowlist":
						se.ToolsAllowlist, _ = d.strList(keyPath(f, kk), e[kk])
					default:
						d.errorf(keyPath(f, kk), 0, "not allowed beside ref (only tools_allowlist is); an entry is either ref: ID or an inline server")
						ok = false
					}
				}
				if !ok {
					continue
				}
				break
			}
			lines := map[string]int{}
			for p, l := range d.lines {
				if p == f || strings.HasPrefix(p, f+".") {
					lines[p] = l
				}
			}
			s, err := config.DecodeServer(d.file, f, e, lines)
			if err != nil {
				d.problems = append(d.problems, config.Problems(err)...)
				continue
			}
			se = ServerEntry{Server: s, Pos: pos}
		default:
			d.errorf(f, 0, "must be a server id or a mapping (ref: ID, or an inline server), not %s", typeName(e))
			continue
		}
		if prev, dup := ids[se.ID()]; dup {
			d.errorf(f, 0, "server %q is listed twice (also %s)", se.ID(), prev)
			continue
		}
		ids[se.ID()] = f
		out = append(out, se)
	}
	return out
}

func (d *decoder) sortedKeys(parent string, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := d.lines[keyPath(parent, keys[i])], d.lines[keyPath(parent, keys[j])]
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

func (d *decoder) str(f string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.errorf(f, 0, "must be a string, not %s", typeName(v))
	}
	return s, ok
}

func (d *decoder) boolean(f string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.errorf(f, 0, "must be true or false, not %s", typeName(v))
	}
	return b, ok
}

func (d *decoder) number(f string, v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		if !math.IsNaN(n) && !math.IsInf(n, 0) {
			return n, true
		}
	}
	d.errorf(f, 0, "must be a number, not %s", typeName(v))
	return 0, false
}

func (d *decoder) positive(f string, v any) (int, bool) {
	n, ok := v.(int64)
	if !ok {
		d.errorf(f, 0, "must be a whole number, not %s", typeName(v))
		return 0, false
	}
	if n <= 0 || n > math.MaxInt32 {
		d.errorf(f, 0, "must be a positive whole number, not %d", n)
		return 0, false
	}
	return int(n), true
}

func (d *decoder) strList(f string, v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		d.errorf(f, 0, "must be a list of strings, not %s", typeName(v))
		return nil, false
	}
	out := make([]string, 0, len(l))
	good := true
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			d.errorf(indexPath(f, i), 0, "must be a string, not %s", typeName(e))
			good = false
			continue
		}
		out = append(out, s)
	}
	if !good {
		return nil, false
	}
	return out, true
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// SplitModel splits "provider:model" ("openai:gpt-4.1-mini").
func SplitModel(s string) (provider, model string, err error) {
	p, m, ok := strings.Cut(s, ":")
	if !ok || p == "" || m == "" || !validID(p) {
		return "", "", fmt.Errorf("want provider:model, such as openai:gpt-4.1-mini or ollama:llama3.2, not %q", s)
	}
	return p, m, nil
}

func validID(s string) bool { return len(s) <= 32 && isBareKey(s) }

func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// keyPath and indexPath build field paths as package config writes them.
func keyPath(parent, key string) string {
	if !isBareKey(key) {
		key = strconv.Quote(key)
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func indexPath(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// parentPath strips the last segment of a field path (quoted keys holding
// dots are rare enough in agent files that a plain cut is good enough for
// finding a line).
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}
