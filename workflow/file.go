package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/internal/userfile"
	"github.com/switchboardmcp/switchboard/schema"
)

// The format of a workflow file (docs/workflows.md has it with examples):
//
//	id: triage                      # default: the file name
//	description: Triage an issue
//	inputs:                         # name → {type, description, required, default, enum}, or name → type
//	  issue: {type: integer, required: true}
//	  tone: {type: string, enum: [short, long], default: short}
//	vars:                           # name → template over inputs
//	  title: "Issue {{ .inputs.issue }}"
//	outputs:                        # name → template, or {value, type, description}
//	  summary: "{{ .steps.summarize.result }}"
//	concurrency: 4                  # steps of one run at once
//	timeout: 2d                     # the whole run; 0 or absent: none
//	hide_tools: false
//	mcp_servers: [github]           # what its agent steps may use: inherit (default), none, or ids
//	tools: inherit                  # likewise: inherit, none, or host tool names
//	steps:
//	  - id: fetch
//	    tool: mcp_github_get_issue
//	    arguments: {number: "{{ .inputs.issue }}"}
//	    idempotent: true
//	    retry: {attempts: 3, backoff: 1s, max_delay: 10s}
//	  - id: summarize
//	    needs: [fetch]
//	    agent: summarizer
//	    prompt: "Summarize: {{ .steps.fetch.result }}"
//	    tools: [mcp_github_get_issue]  # the step's own, over the workflow's
//	  - id: approve
//	    needs: [summarize]
//	    gate: {message: "Post it?", timeout: 48h, on_timeout: skip_rest}
//	  - id: each
//	    needs: [fetch]
//	    for_each: {items: "{{ .steps.fetch.result.labels }}", as: label, concurrency: 2, max_items: 50,
//	               step: {tool: mcp_everything_echo, arguments: {message: "{{ .label }}"}}}
//	  - id: child
//	    workflow: other
//	    with: {text: "{{ .vars.title }}"}
//	    if: "{{ .inputs.tone }}"
//	    on_error: continue
//	    default: null

// maxFileBytes bounds a workflow file: a file a person writes is a few
// kilobytes; this keeps a stray large file from being parsed whole.
const maxFileBytes = 1 << 20

// Load reads a workflow file. The error joins a [*config.Problem] for every
// problem found, each with file, line and field.
// A file that is not a regular file, or is over 1 MiB, is refused unread.
func Load(path string) (*Workflow, error) {
	data, err := userfile.Read(path, maxFileBytes, "a workflow file")
	if err != nil {
		return nil, config.ReadProblem(path, err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a workflow file's content; file names it in
// problems. A workflow without an id takes its file name without the
// extension. Every problem is reported at once, each a [*config.Problem]
// with file, line and field ("wf.yaml:12: steps[2].tool: ...").
func Parse(file string, data []byte) (*Workflow, error) {
	d := decode.New(file, decode.YAML)
	p := &fileParser{d: d, blocks: map[string]bool{}}
	doc, ok := d.YAML(data, decode.YAMLOptions{Kind: "workflow file", Fields: "id: ..., steps: ...", Blocks: p.blocks})
	if !ok {
		return nil, config.DecoderProblems(d)
	}
	w := &Workflow{Concurrency: DefaultConcurrency, File: file}
	p.workflowFields().Decode(d, "", doc, w)
	if w.ID == "" && !d.Bad("id") {
		base := file[strings.LastIndexAny(file, `/\`)+1:]
		if i := strings.LastIndexByte(base, '.'); i > 0 {
			base = base[:i]
		}
		w.ID = base
		if !validID(w.ID) {
			d.ErrorAt(1, "id", "missing, and the file name %q is not a valid id: add id: NAME (1 to 32 of A-Z a-z 0-9 _ -)", w.ID)
		}
	}
	if _, ok := doc["steps"]; !ok {
		d.ErrorAt(1, "steps", "missing: a workflow needs at least one step")
	}
	p.validate(w)
	if err := config.DecoderProblems(d); err != nil {
		return nil, err
	}
	w.Digest = digest(doc)
	return w, nil
}

// digest is the SHA-256 of the file's values as canonical JSON (keys
// sorted, no space): comments, layout and key order do not change it,
// anything a run would see does.
func digest(doc map[string]any) string {
	b, err := json.Marshal(canonical(doc))
	if err != nil { // NaN or an infinity in a value: hash their text
		b = []byte(fmt.Sprintf("%#v", doc))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func canonical(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canonical(e)
		}
		return out
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	return v
}

func validID(s string) bool { return len(s) <= 32 && decode.IsBareKey(s) }

func idProblem(id string) string {
	if !validID(id) {
		return fmt.Sprintf("invalid id %q: use 1 to 32 characters of A-Z a-z 0-9 _ -", id)
	}
	return ""
}

// fileParser decodes one file.
type fileParser struct {
	d      *decode.Decoder
	blocks map[string]bool // block scalars' paths
}

// lineOf is the line where the value at field starts: a block scalar's
// text starts on the line after its key.
func (p *fileParser) lineOf(field string) int {
	l := p.d.LineOf(field)
	if p.blocks[field] && l > 0 {
		l++
	}
	return l
}

// templateProblem records a template's error at its line and field.
func (p *fileParser) templateProblem(err error) {
	var te *TemplateError
	for _, e := range unjoin(err) {
		if errors.As(e, &te) {
			p.d.ErrorAt(te.Line, te.Field, "%s", te.Msg)
		} else {
			p.d.Errorf("", "%v", e)
		}
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (p *fileParser) template(field string, v any) (*Template, bool) {
	s, ok := v.(string)
	if !ok {
		// A number or a boolean is a template with no action: its text.
		switch v.(type) {
		case bool, int64, float64:
			s = text(v)
		default:
			p.d.Errorf(field, "must be a template string, not %s", p.d.TypeName(v))
			return nil, false
		}
	}
	t, err := parseTemplate(p.d.File, p.lineOf(field), field, s)
	if err != nil {
		p.templateProblem(err)
		return nil, false
	}
	return t, true
}

func (p *fileParser) value(field string, v any) (*Value, bool) {
	val, err := newValue(p.d.File, field, p.lineOf, v)
	if err != nil {
		p.templateProblem(err)
		return nil, false
	}
	return val, true
}

func (p *fileParser) duration(field string, v any) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		p.d.Errorf(field, `must be a duration such as "90s", "48h" or "2d", not %s`, p.d.TypeName(v))
		return 0, false
	}
	t, err := ParseDuration(s)
	if err != nil {
		p.d.Errorf(field, "%v", err)
		return 0, false
	}
	return t, true
}

// ParseDuration reads a positive duration: Go's ("90s", "1h30m"), with days
// allowed in front ("2d", "1d12h"): a gate may wait days.
func ParseDuration(s string) (time.Duration, error) {
	var days time.Duration
	rest := s
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > 3650 {
			return 0, fmt.Errorf(`invalid duration %q (want "90s", "48h", "2d" or "1d12h"; at most 3650 days)`, s)
		}
		days, rest = time.Duration(n)*24*time.Hour, s[i+1:]
	}
	var t time.Duration
	if rest != "" || days == 0 {
		var err error
		if t, err = time.ParseDuration(rest); err != nil {
			return 0, fmt.Errorf(`invalid duration %q (want "90s", "48h", "2d" or "1d12h")`, s)
		}
	}
	if t+days <= 0 {
		return 0, fmt.Errorf("must be positive, not %q", s)
	}
	return t + days, nil
}

func (p *fileParser) workflowFields() decode.Table[Workflow] {
	return decode.Table[Workflow]{
		decode.Value("id", decode.YAML, func(w *Workflow) *string { return &w.ID }, func(d *decode.Decoder, f string, v any) (string, bool) {
			s, ok := d.String(f, v)
			if ok && !validID(s) {
				d.Errorf(f, "%s", idProblem(s))
				return "", false
			}
			return s, ok
		}),
		decode.String("description", decode.YAML, func(w *Workflow) *string { return &w.Description }),
		decode.Value("inputs", decode.YAML, func(w *Workflow) *[]Input { return &w.Inputs }, func(d *decode.Decoder, f string, v any) ([]Input, bool) {
			return p.inputs(f, v)
		}),
		decode.Value("outputs", decode.YAML, func(w *Workflow) *[]Output { return &w.Outputs }, func(d *decode.Decoder, f string, v any) ([]Output, bool) {
			return p.outputs(f, v)
		}),
		decode.Value("vars", decode.YAML, func(w *Workflow) *map[string]*Template { return &w.Vars }, func(d *decode.Decoder, f string, v any) (map[string]*Template, bool) {
			return p.vars(f, v)
		}),
		decode.AtLeastOne("concurrency", decode.YAML, func(w *Workflow) *int { return &w.Concurrency }),
		decode.Value("timeout", decode.YAML, func(w *Workflow) *time.Duration { return &w.Timeout }, func(d *decode.Decoder, f string, v any) (time.Duration, bool) {
			return p.duration(f, v)
		}),
		decode.Bool("hide_tools", decode.YAML, func(w *Workflow) *bool { return &w.HideTools }),
		decode.Value("mcp_servers", decode.YAML, func(w *Workflow) **Selection { return &w.MCPServers }, p.servers),
		decode.Value("tools", decode.YAML, func(w *Workflow) **Selection { return &w.AgentTools }, p.tools),
		decode.Value("steps", decode.YAML, func(w *Workflow) *[]*Step { return &w.Steps }, func(d *decode.Decoder, f string, v any) ([]*Step, bool) {
			return p.steps(f, v)
		}),
	}
}

// inputTypes are the types an input may have.
var inputTypes = []string{"string", "number", "integer", "boolean", "array", "object"}

func (p *fileParser) inputs(field string, v any) ([]Input, bool) {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a mapping of input names to {type, description, required, default, enum}, not %s", d.TypeName(v))
		return nil, false
	}
	out := []Input{}
	for _, name := range d.SortedKeys(field, m) {
		f := decode.KeyPath(field, name)
		if !validID(name) || strings.Contains(name, "-") {
			d.Errorf(f, "invalid input name %q: use 1 to 32 characters of A-Z a-z 0-9 _ (templates read it as .inputs.NAME)", name)
			continue
		}
		in := Input{Name: name, Line: d.LineOf(f)}
		switch e := m[name].(type) {
		case string: // name: type
			in.Type = e
		case map[string]any:
			p.inputFields().Decode(d, f, e, &in)
			if in.Type == "" && !d.Bad(decode.KeyPath(f, "type")) {
				d.Errorf(f, "missing type (one of %s)", strings.Join(inputTypes, ", "))
				continue
			}
		default:
			d.Errorf(f, "must be a type (string, number, …) or a mapping {type, description, required, default, enum}, not %s", d.TypeName(e))
			continue
		}
		if !slices.Contains(inputTypes, in.Type) {
			d.Errorf(decode.KeyPath(f, "type"), "unknown type %q (want one of %s)", in.Type, strings.Join(inputTypes, ", "))
			continue
		}
		for i, e := range in.Enum {
			if msg := typeProblem(in.Type, e); msg != "" {
				d.Errorf(decode.IndexPath(decode.KeyPath(f, "enum"), i), "%s", msg)
			}
		}
		if in.Default != nil {
			df := decode.KeyPath(f, "default")
			if msg := typeProblem(in.Type, in.Default); msg != "" {
				d.Errorf(df, "%s", msg)
			} else if in.Enum != nil && !slices.ContainsFunc(in.Enum, func(e any) bool { return jsonEqual(e, in.Default) }) {
				d.Errorf(df, "%s is not one of enum", text(in.Default))
			}
			if in.Required {
				d.Errorf(df, "a required input has no use for a default")
			}
		}
		out = append(out, in)
	}
	return out, true
}

func (p *fileParser) inputFields() decode.Table[Input] {
	return decode.Table[Input]{
		decode.String("type", decode.YAML, func(in *Input) *string { return &in.Type }),
		decode.String("description", decode.YAML, func(in *Input) *string { return &in.Description }),
		decode.Bool("required", decode.YAML, func(in *Input) *bool { return &in.Required }),
		decode.Value("default", decode.YAML, func(in *Input) *any { return &in.Default }, func(d *decode.Decoder, f string, v any) (any, bool) {
			return v, true
		}),
		decode.Value("enum", decode.YAML, func(in *Input) *[]any { return &in.Enum }, func(d *decode.Decoder, f string, v any) ([]any, bool) {
			l, ok := v.([]any)
			if !ok || len(l) == 0 {
				d.Errorf(f, "must be a non-empty list of the values allowed, not %s", d.TypeName(v))
				return nil, false
			}
			return l, true
		}),
	}
}

// typeProblem says why v is not of JSON Schema type t; "" when it is.
func typeProblem(t string, v any) string {
	ok := false
	switch t {
	case "string":
		_, ok = v.(string)
	case "number":
		_, ok = number(v)
		_, isBool := v.(bool)
		ok = ok && !isBool
	case "integer":
		_, ok = integer(v)
	case "boolean":
		_, ok = v.(bool)
	case "array":
		_, ok = v.([]any)
	case "object":
		_, ok = v.(map[string]any)
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("%s is not of type %s", typeName(v), t)
}

// jsonEqual compares two decoded values as JSON would.
func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func (p *fileParser) outputs(field string, v any) ([]Output, bool) {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a mapping of output names to templates, not %s", d.TypeName(v))
		return nil, false
	}
	out := []Output{}
	for _, name := range d.SortedKeys(field, m) {
		f := decode.KeyPath(field, name)
		if !validID(name) {
			d.Errorf(f, "invalid output name %q: use 1 to 32 characters of A-Z a-z 0-9 _ -", name)
			continue
		}
		o := Output{Name: name, Line: d.LineOf(f)}
		switch e := m[name].(type) {
		case map[string]any:
			p.outputFields().Decode(d, f, e, &o)
			if o.Value == nil && !d.Bad(decode.KeyPath(f, "value")) {
				d.Errorf(f, "missing value: the template of the output")
				continue
			}
			if o.Type != "" && !slices.Contains(inputTypes, o.Type) {
				d.Errorf(decode.KeyPath(f, "type"), "unknown type %q (want one of %s)", o.Type, strings.Join(inputTypes, ", "))
				continue
			}
		default:
			t, ok := p.template(f, e)
			if !ok {
				continue
			}
			o.Value = t
		}
		out = append(out, o)
	}
	return out, true
}

func (p *fileParser) outputFields() decode.Table[Output] {
	return decode.Table[Output]{
		decode.Value("value", decode.YAML, func(o *Output) **Template { return &o.Value }, func(d *decode.Decoder, f string, v any) (*Template, bool) {
			return p.template(f, v)
		}),
		decode.String("type", decode.YAML, func(o *Output) *string { return &o.Type }),
		decode.String("description", decode.YAML, func(o *Output) *string { return &o.Description }),
	}
}

func (p *fileParser) vars(field string, v any) (map[string]*Template, bool) {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a mapping of var names to templates, not %s", d.TypeName(v))
		return nil, false
	}
	out := map[string]*Template{}
	for _, name := range d.SortedKeys(field, m) {
		f := decode.KeyPath(field, name)
		if !validID(name) || strings.Contains(name, "-") {
			d.Errorf(f, "invalid var name %q: use 1 to 32 characters of A-Z a-z 0-9 _ (templates read it as .vars.NAME)", name)
			continue
		}
		if t, ok := p.template(f, m[name]); ok {
			out[name] = t
		}
	}
	return out, true
}

func (p *fileParser) steps(field string, v any) ([]*Step, bool) {
	d := p.d
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		hint := ""
		if _, isMap := v.(map[string]any); isMap {
			hint = " (start each step with -)"
		}
		d.Errorf(field, "must be a non-empty list of steps, not %s%s", d.TypeName(v), hint)
		return nil, false
	}
	var out []*Step
	for i, e := range l {
		f := decode.IndexPath(field, i)
		if s := p.step(f, e, false); s != nil {
			out = append(out, s)
		}
	}
	return out, true
}

// kindKeys are the keys that say what a step does.
var kindKeys = []string{"tool", "agent", "gate", "for_each", "workflow"}

// step reads one step; inner is a for_each's step, which has no id of its
// own (its events carry the for_each's) and no needs.
func (p *fileParser) step(field string, v any, inner bool) *Step {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a mapping (id: ..., tool: ...), not %s", d.TypeName(v))
		return nil
	}
	s := &Step{Line: d.LineOf(field), OnError: OnErrorFail}
	p.stepFields().Decode(d, field, m, s)
	var kinds []string
	for _, k := range kindKeys {
		if _, ok := m[k]; ok {
			kinds = append(kinds, k)
		}
	}
	switch {
	case len(kinds) == 0:
		d.Errorf(field, "says nothing to do: give one of %s", strings.Join(kindKeys, ", "))
	case len(kinds) > 1:
		d.Errorf(decode.KeyPath(field, kinds[1]), "a step does one thing: %s and %s are both set", kinds[0], kinds[1])
	default:
		s.Kind = StepKind(kinds[0])
	}
	has := func(k string) bool { _, ok := m[k]; return ok }
	if inner {
		for _, k := range []string{"id", "needs"} {
			if has(k) {
				d.Errorf(decode.KeyPath(field, k), "a for_each's step has no %s of its own (the for_each's are used)", k)
			}
		}
		if s.Kind == StepForEach {
			d.Errorf(decode.KeyPath(field, "for_each"), "a for_each's step cannot be a for_each (nest a workflow step instead)")
		}
	} else if !has("id") {
		d.Errorf(field, "missing id")
	}
	// The fields of one kind only.
	for k, kind := range map[string]StepKind{"arguments": StepTool, "prompt": StepAgent, "with": StepWorkflow, "mcp_servers": StepAgent, "tools": StepAgent} {
		if has(k) && s.Kind != "" && s.Kind != kind {
			d.Errorf(decode.KeyPath(field, k), "only a %s step has %s", kind, k)
		}
	}
	if s.Kind == StepAgent && !has("prompt") {
		d.Errorf(field, "an agent step needs a prompt")
	}
	if s.Kind == StepTool && s.Arguments == nil && !d.Bad(decode.KeyPath(field, "arguments")) {
		s.Arguments = &Value{v: map[string]any{}}
	}
	if s.Retry != nil {
		rf := decode.KeyPath(field, "retry")
		switch s.Kind {
		case StepTool:
			if !s.Idempotent {
				d.Errorf(rf, "a tool step is retried only when marked idempotent: true (a retried call that was not may do its work twice)")
			}
		case StepGate:
			d.Errorf(rf, "a gate is not retried (it waits for a person)")
		case StepForEach:
			d.Errorf(rf, "put retry on the for_each's step, which is what runs")
		}
	}
	if has("default") && s.OnError != OnErrorContinue {
		d.Errorf(decode.KeyPath(field, "default"), "default is the result of a step that failed with on_error: continue, and this step's on_error is %s", s.OnError)
	}
	if s.Kind == StepGate && s.Timeout != 0 {
		d.Errorf(decode.KeyPath(field, "timeout"), "a gate's timeout is gate.timeout")
	}
	return s
}

func (p *fileParser) stepFields() decode.Table[Step] {
	name := func(d *decode.Decoder, f string, v any) (string, bool) {
		s, ok := d.String(f, v)
		if ok && strings.TrimSpace(s) == "" {
			d.Errorf(f, "empty")
			return "", false
		}
		return s, ok
	}
	return decode.Table[Step]{
		decode.Value("id", decode.YAML, func(s *Step) *string { return &s.ID }, func(d *decode.Decoder, f string, v any) (string, bool) {
			s, ok := d.String(f, v)
			if ok && (!validID(s) || strings.Contains(s, "-")) {
				d.Errorf(f, "invalid step id %q: use 1 to 32 characters of A-Z a-z 0-9 _ (templates read it as .steps.ID)", s)
				return "", false
			}
			return s, ok
		}),
		decode.Value("tool", decode.YAML, func(s *Step) *string { return &s.Tool }, name),
		decode.Value("arguments", decode.YAML, func(s *Step) **Value { return &s.Arguments }, func(d *decode.Decoder, f string, v any) (*Value, bool) {
			if _, ok := v.(map[string]any); !ok {
				d.Errorf(f, "must be a mapping of argument names to values, not %s", d.TypeName(v))
				return nil, false
			}
			return p.value(f, v)
		}),
		decode.Value("agent", decode.YAML, func(s *Step) *string { return &s.Agent }, func(d *decode.Decoder, f string, v any) (string, bool) {
			a, ok := name(d, f, v)
			if ok && isAgentPath(a) {
				// A path is relative to the workflow file, not to the
				// directory a run starts in.
				return d.Path(f, a)
			}
			return a, ok
		}),
		decode.Value("prompt", decode.YAML, func(s *Step) **Template { return &s.Prompt }, func(d *decode.Decoder, f string, v any) (*Template, bool) {
			return p.template(f, v)
		}),
		decode.Value("mcp_servers", decode.YAML, func(s *Step) **Selection { return &s.MCPServers }, p.servers),
		decode.Value("tools", decode.YAML, func(s *Step) **Selection { return &s.AgentTools }, p.tools),
		decode.Value("gate", decode.YAML, func(s *Step) **Gate { return &s.Gate }, func(d *decode.Decoder, f string, v any) (*Gate, bool) {
			return p.gate(f, v)
		}),
		decode.Value("for_each", decode.YAML, func(s *Step) **ForEach { return &s.ForEach }, func(d *decode.Decoder, f string, v any) (*ForEach, bool) {
			return p.forEach(f, v)
		}),
		decode.Value("workflow", decode.YAML, func(s *Step) *string { return &s.Workflow }, func(d *decode.Decoder, f string, v any) (string, bool) {
			s, ok := d.String(f, v)
			if ok && !validID(s) {
				d.Errorf(f, "%s", idProblem(s))
				return "", false
			}
			return s, ok
		}),
		decode.Value("with", decode.YAML, func(s *Step) **Value { return &s.With }, func(d *decode.Decoder, f string, v any) (*Value, bool) {
			if _, ok := v.(map[string]any); !ok {
				d.Errorf(f, "must be a mapping of the workflow's inputs to values, not %s", d.TypeName(v))
				return nil, false
			}
			return p.value(f, v)
		}),
		decode.StringList("needs", decode.YAML, func(s *Step) *[]string { return &s.Needs }),
		decode.Value("if", decode.YAML, func(s *Step) **Template { return &s.If }, func(d *decode.Decoder, f string, v any) (*Template, bool) {
			return p.template(f, v)
		}),
		decode.Value("timeout", decode.YAML, func(s *Step) *time.Duration { return &s.Timeout }, func(d *decode.Decoder, f string, v any) (time.Duration, bool) {
			return p.duration(f, v)
		}),
		decode.Value("retry", decode.YAML, func(s *Step) **Retry { return &s.Retry }, func(d *decode.Decoder, f string, v any) (*Retry, bool) {
			return p.retry(f, v)
		}),
		decode.Bool("idempotent", decode.YAML, func(s *Step) *bool { return &s.Idempotent }),
		decode.Value("on_error", decode.YAML, func(s *Step) *ErrorPolicy { return &s.OnError }, func(d *decode.Decoder, f string, v any) (ErrorPolicy, bool) {
			s, ok := d.String(f, v)
			if ok && s != string(OnErrorFail) && s != string(OnErrorContinue) {
				d.Errorf(f, "want fail or continue, not %q", s)
				return "", false
			}
			return ErrorPolicy(s), ok
		}),
		decode.Value("default", decode.YAML, func(s *Step) *any { return &s.Default }, func(d *decode.Decoder, f string, v any) (any, bool) {
			return v, true
		}),
	}
}

// maxAttempts bounds retry.attempts: more is a loop, not a retry.
const maxAttempts = 100

func (p *fileParser) retry(field string, v any) (*Retry, bool) {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a mapping {attempts, backoff, max_delay}, not %s", d.TypeName(v))
		return nil, false
	}
	r := &Retry{}
	tb := decode.Table[Retry]{
		decode.Value("attempts", decode.YAML, func(r *Retry) *int { return &r.Attempts }, func(d *decode.Decoder, f string, v any) (int, bool) {
			n, ok := d.Count(f, v)
			if ok && (n < 2 || n > maxAttempts) {
				d.Errorf(f, "must be between 2 and %d (the total number of tries), not %d", maxAttempts, n)
				return 0, false
			}
			return n, ok
		}),
		decode.Value("backoff", decode.YAML, func(r *Retry) *time.Duration { return &r.Backoff }, func(d *decode.Decoder, f string, v any) (time.Duration, bool) {
			return p.duration(f, v)
		}),
		decode.Value("max_delay", decode.YAML, func(r *Retry) *time.Duration { return &r.MaxDelay }, func(d *decode.Decoder, f string, v any) (time.Duration, bool) {
			return p.duration(f, v)
		}),
	}
	tb.Decode(d, field, m, r)
	if _, ok := m["attempts"]; !ok {
		d.Errorf(field, "missing attempts (the total number of tries, at least 2)")
		return nil, false
	}
	if r.MaxDelay != 0 && r.MaxDelay < r.Backoff {
		d.Errorf(decode.KeyPath(field, "max_delay"), "shorter than backoff")
	}
	return r, true
}

func (p *fileParser) gatePolicy(d *decode.Decoder, f string, v any) (GatePolicy, bool) {
	s, ok := d.String(f, v)
	switch GatePolicy(s) {
	case GateFail, GateSkipRest, GateContinue:
		return GatePolicy(s), ok
	}
	if ok {
		d.Errorf(f, "want fail, skip_rest or continue, not %q", s)
	}
	return "", false
}

func (p *fileParser) gate(field string, v any) (*Gate, bool) {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a mapping {message, schema, timeout, on_decline, on_timeout}, not %s", d.TypeName(v))
		return nil, false
	}
	g := &Gate{OnDecline: GateFail, OnTimeout: GateFail}
	tb := decode.Table[Gate]{
		decode.Value("message", decode.YAML, func(g *Gate) **Template { return &g.Message }, func(d *decode.Decoder, f string, v any) (*Template, bool) {
			return p.template(f, v)
		}),
		decode.Value("schema", decode.YAML, func(g *Gate) *json.RawMessage { return &g.Schema }, func(d *decode.Decoder, f string, v any) (json.RawMessage, bool) {
			return p.gateSchema(f, v)
		}),
		decode.Value("timeout", decode.YAML, func(g *Gate) *time.Duration { return &g.Timeout }, func(d *decode.Decoder, f string, v any) (time.Duration, bool) {
			return p.duration(f, v)
		}),
		decode.Value("on_decline", decode.YAML, func(g *Gate) *GatePolicy { return &g.OnDecline }, p.gatePolicy),
		decode.Value("on_timeout", decode.YAML, func(g *Gate) *GatePolicy { return &g.OnTimeout }, p.gatePolicy),
	}
	tb.Decode(d, field, m, g)
	if _, ok := m["message"]; !ok {
		d.Errorf(field, "missing message: what the person is asked")
	}
	if _, ok := m["on_timeout"]; ok && g.Timeout == 0 && !d.Bad(decode.KeyPath(field, "timeout")) {
		d.Errorf(decode.KeyPath(field, "on_timeout"), "set, but the gate has no timeout")
	}
	return g, true
}

// gateSchema checks that v is an elicitation's requestedSchema: an object
// whose properties are strings, numbers, integers or booleans (a string may
// have an enum), as MCP's elicitation/create allows.
func (p *fileParser) gateSchema(field string, v any) (json.RawMessage, bool) {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a JSON Schema mapping (type: object, properties: ...), not %s", d.TypeName(v))
		return nil, false
	}
	good := true
	bad := func(f, format string, args ...any) {
		d.Errorf(f, format, args...)
		good = false
	}
	if m["type"] != "object" {
		bad(decode.KeyPath(field, "type"), "an answer's schema must have type: object (elicitation asks for an object of plain fields)")
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		bad(field, "needs properties: the fields the person fills in")
	}
	for _, k := range d.SortedKeys(field, m) {
		switch k {
		case "type", "properties", "required", "title", "description", "$schema":
		default:
			bad(decode.KeyPath(field, k), "not allowed in an elicitation schema (type, properties, required, title and description are)")
		}
	}
	pf := decode.KeyPath(field, "properties")
	for _, name := range d.SortedKeys(pf, props) {
		f := decode.KeyPath(pf, name)
		prop, ok := props[name].(map[string]any)
		if !ok {
			bad(f, "must be a mapping (type: string, ...), not %s", d.TypeName(props[name]))
			continue
		}
		t, _ := prop["type"].(string)
		switch t {
		case "string", "number", "integer", "boolean":
		default:
			bad(decode.KeyPath(f, "type"), "an elicitation field is a string, number, integer or boolean, not %s", text(prop["type"]))
		}
		for _, k := range d.SortedKeys(f, prop) {
			allowed := []string{"type", "title", "description", "default"}
			switch t {
			case "string":
				allowed = append(allowed, "enum", "enumNames", "format", "minLength", "maxLength", "pattern")
			case "number", "integer":
				allowed = append(allowed, "minimum", "maximum")
			}
			if !slices.Contains(allowed, k) {
				bad(decode.KeyPath(f, k), "not allowed in an elicitation %s field (allowed: %s)", t, strings.Join(allowed, ", "))
			}
		}
		if e, ok := prop["enum"]; ok {
			l, ok := e.([]any)
			if !ok || len(l) == 0 || slices.ContainsFunc(l, func(x any) bool { _, s := x.(string); return !s }) {
				bad(decode.KeyPath(f, "enum"), "must be a non-empty list of strings")
			}
		}
	}
	if r, ok := m["required"]; ok {
		l, _ := r.([]any)
		if l == nil {
			bad(decode.KeyPath(field, "required"), "must be a list of property names")
		}
		for i, e := range l {
			if s, ok := e.(string); !ok || props[s] == nil {
				bad(decode.IndexPath(decode.KeyPath(field, "required"), i), "%s is not a property", text(e))
			}
		}
	}
	if !good {
		return nil, false
	}
	raw, err := json.Marshal(m)
	if err != nil {
		d.Errorf(field, "cannot be written as JSON: %v", err)
		return nil, false
	}
	if _, err := schema.Compile(raw); err != nil {
		d.Errorf(field, "%v", err)
		return nil, false
	}
	return raw, true
}

func (p *fileParser) forEach(field string, v any) (*ForEach, bool) {
	d := p.d
	m, ok := v.(map[string]any)
	if !ok {
		d.Errorf(field, "must be a mapping {items, as, concurrency, max_items, step}, not %s", d.TypeName(v))
		return nil, false
	}
	fe := &ForEach{As: "item", Concurrency: DefaultConcurrency}
	tb := decode.Table[ForEach]{
		decode.Value("items", decode.YAML, func(fe *ForEach) **Template { return &fe.Items }, func(d *decode.Decoder, f string, v any) (*Template, bool) {
			return p.template(f, v)
		}),
		decode.Value("as", decode.YAML, func(fe *ForEach) *string { return &fe.As }, func(d *decode.Decoder, f string, v any) (string, bool) {
			s, ok := d.String(f, v)
			if !ok {
				return "", false
			}
			if !validID(s) || strings.Contains(s, "-") || slices.Contains([]string{"inputs", "steps", "vars", "index"}, s) {
				d.Errorf(f, "invalid name %q: use 1 to 32 characters of A-Z a-z 0-9 _, other than inputs, steps, vars and index", s)
				return "", false
			}
			return s, true
		}),
		decode.AtLeastOne("concurrency", decode.YAML, func(fe *ForEach) *int { return &fe.Concurrency }),
		decode.Value("max_items", decode.YAML, func(fe *ForEach) *int { return &fe.MaxItems }, func(d *decode.Decoder, f string, v any) (int, bool) {
			return d.Range(f, v, 1, MaxItemsCeiling)
		}),
		decode.Value("step", decode.YAML, func(fe *ForEach) **Step { return &fe.Step }, func(d *decode.Decoder, f string, v any) (*Step, bool) {
			s := p.step(f, v, true)
			return s, s != nil
		}),
	}
	tb.Decode(d, field, m, fe)
	for _, k := range []string{"items", "step"} {
		if _, ok := m[k]; !ok {
			d.Errorf(field, "missing %s", k)
		}
	}
	return fe, true
}

// validate checks what needs the whole file: ids unique, needs that name
// steps, no cycle, and every template's references.
func (p *fileParser) validate(w *Workflow) {
	d := p.d
	byID := map[string]*Step{}
	var ids []string
	for i, s := range w.Steps {
		if s.ForEach != nil && s.ForEach.Step != nil {
			s.ForEach.Step.ID = s.ID
		}
		if s.ID == "" {
			continue
		}
		if prev, dup := byID[s.ID]; dup {
			d.Errorf(decode.KeyPath(decode.IndexPath("steps", i), "id"), "duplicate step id %q (first on line %d)", s.ID, prev.Line)
			continue
		}
		byID[s.ID] = s
		ids = append(ids, s.ID)
	}
	for i, s := range w.Steps {
		for j, n := range s.Needs {
			f := decode.IndexPath(decode.KeyPath(decode.IndexPath("steps", i), "needs"), j)
			switch {
			case n == s.ID:
				d.Errorf(f, "a step cannot need itself")
			case byID[n] == nil:
				d.Errorf(f, "no step %q%s", n, didYouMean(n, ids, ""))
			case slices.Index(s.Needs[:j], n) >= 0:
				d.Errorf(f, "duplicate %q", n)
			}
		}
	}
	if cycle := findCycle(ids, func(id string) []string { return byID[id].Needs }); cycle != nil {
		s := byID[cycle[0]]
		i := slices.Index(w.Steps, s)
		d.Errorf(decode.KeyPath(decode.IndexPath("steps", i), "needs"), "steps depend on each other in a cycle: %s", strings.Join(cycle, " → "))
		return // transitive needs are not defined
	}

	inputs := make([]string, len(w.Inputs))
	for i, in := range w.Inputs {
		inputs[i] = in.Name
	}
	vars := make([]string, 0, len(w.Vars))
	for k := range w.Vars {
		vars = append(vars, k)
	}
	sort.Strings(vars)
	check := func(t *Template, r *refs) {
		if t == nil {
			return
		}
		for _, err := range t.check(r) {
			p.templateProblem(err)
		}
	}
	for _, k := range vars {
		check(w.Vars[k], &refs{inputs: inputs, noVars: true, allSteps: ids})
	}
	for _, o := range w.Outputs {
		check(o.Value, &refs{inputs: inputs, vars: vars, allSteps: ids, anySteps: true})
	}
	for _, s := range w.Steps {
		r := &refs{inputs: inputs, vars: vars, allSteps: ids, needs: closure(s, byID)}
		stepTemplates(s, func(t *Template, inner bool) {
			if inner {
				rr := *r
				rr.item = s.ForEach.As
				check(t, &rr)
				return
			}
			check(t, r)
		})
	}
}

// stepTemplates calls f on every template of s, inner telling those of a
// for_each's step (which see the item) from the step's own.
func stepTemplates(s *Step, f func(t *Template, inner bool)) {
	own := func(t *Template) { f(t, false) }
	own(s.If)
	own(s.Prompt)
	s.Arguments.templates(own)
	s.With.templates(own)
	if s.Gate != nil {
		own(s.Gate.Message)
	}
	if fe := s.ForEach; fe != nil {
		own(fe.Items)
		if fe.Step != nil {
			stepTemplates(fe.Step, func(t *Template, _ bool) { f(t, true) })
		}
	}
}

// closure is the steps s needs, directly or through others.
func closure(s *Step, byID map[string]*Step) []string {
	seen := map[string]bool{}
	var walk func(ids []string)
	walk = func(ids []string) {
		for _, id := range ids {
			if seen[id] || byID[id] == nil {
				continue
			}
			seen[id] = true
			walk(byID[id].Needs)
		}
	}
	walk(s.Needs)
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// findCycle returns a cycle of the graph as its nodes, the first repeated
// at the end (a → b → a), or nil. Nodes are visited in the order of ids.
func findCycle(ids []string, edges func(string) []string) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var found []string
	var visit func(id string) bool
	visit = func(id string) bool {
		state[id] = open
		stack = append(stack, id)
		for _, n := range edges(id) {
			if n == id {
				continue // reported on its own
			}
			switch state[n] {
			case open:
				i := slices.Index(stack, n)
				found = append(slices.Clone(stack[i:]), n)
				return true
			case unseen:
				if !slices.Contains(ids, n) {
					continue
				}
				if visit(n) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
		return false
	}
	for _, id := range ids {
		if state[id] == unseen && visit(id) {
			return found
		}
	}
	return nil
}

// isAgentPath reports whether an agent step names a file rather than an
// agent (as `switchboard run` tells them apart).
func isAgentPath(name string) bool {
	if strings.ContainsAny(name, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown", ".yaml", ".yml":
		return true
	}
	return false
}
