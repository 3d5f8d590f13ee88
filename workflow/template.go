package workflow

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template/parse"
	"unicode/utf8"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// Template is one template string of a workflow file, in Go's text/template
// syntax, parsed and checked at load time.
//
// It is parsed with text/template/parse and evaluated here, over plain data
// (map[string]any, []any, string, float64, json.Number, integers, bool,
// nil), not executed with text/template. text/template with these
// functions renders null as "<no value>" and lists in Go's syntax, takes
// "false" as true, ranges over no float count and without bound, and
// names no path in its errors; and executing it makes the linker keep
// every exported method of every type, 9 MB of a -tags noui build
// (docs/size.md, measured for issue 25). So a template has no method
// calls, no call, template, define or block: fields of maps, variables,
// pipelines, if/else/range/with/break/continue, and the functions of
// [TemplateFuncs].
type Template struct {
	src   string
	line  int    // the line of the template's first character in File; 0 when unknown
	file  string // the workflow file; "" for a template built in Go
	field string // where it is in the file ("steps[1].arguments.text"); "" when unknown

	tree *parse.Tree
	// action is the pipeline of a template that is exactly one action
	// ({{ expr }}, space around it allowed): Eval keeps its value's type.
	action *parse.PipeNode
}

// String returns the template's source.
func (t *Template) String() string { return t.src }

// TemplateFuncs are the functions a template may call: json (a value as
// JSON), fromJson (JSON text as a value), default (default D V is V, or D
// when V is null, "" or an empty list or map), join (join SEP LIST), and
// those of text/template: eq ne lt le gt ge and or not len index print
// printf.
var TemplateFuncs = []string{
	"json", "fromJson", "default", "join",
	"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "len", "index", "print", "printf",
}

// parseFuncs is TemplateFuncs as text/template/parse wants them: a name is
// a function when its value is not nil.
var parseFuncs = func() map[string]any {
	m := make(map[string]any, len(TemplateFuncs))
	for _, f := range TemplateFuncs {
		m[f] = true
	}
	return m
}()

// The bounds of one evaluation. A workflow's author is trusted with the
// host's tools, but a template evaluated on a step's result should not be
// able to take the process's memory or a core: a range over a huge number,
// a string doubled in a loop, a printf with a width of a million.
const (
	// MaxTemplateOutput bounds a template's output and every string a
	// function makes (print, printf, json, join).
	MaxTemplateOutput = 1 << 20
	// maxTemplateOps bounds the nodes one evaluation visits (each
	// iteration of a range counts its body's).
	maxTemplateOps = 10_000_000
	// maxPrintfWidth bounds a printf width or precision.
	maxPrintfWidth = 10000
)

// TemplateError is a template that does not parse, refers to what does not
// exist, or fails when evaluated (a missing key, a value of the wrong
// type, a bound passed).
type TemplateError struct {
	File  string // "" when unknown
	Line  int    // 0 when unknown
	Field string // the template's field in its file, "" when unknown
	Msg   string
}

func (e *TemplateError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ParseTemplate parses src as a template with no file (for Go programs and
// tests). It checks the syntax and the functions, not the references (a
// file's templates are checked when it is loaded).
func ParseTemplate(src string) (*Template, error) {
	return parseTemplate("", 0, "", src)
}

// parseErrLine matches the location text/template/parse puts in front of
// its messages: "template: NAME:LINE: ".
var parseErrLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^template: [^:]*:(\d+):(?:\d+:)? ?`) })

func parseTemplate(file string, line int, field, src string) (*Template, error) {
	t := &Template{src: src, line: line, file: file, field: field}
	trees, err := parse.Parse("t", src, "", "", parseFuncs)
	if err != nil {
		msg, l := err.Error(), 0
		if m := parseErrLine().FindStringSubmatch(msg); m != nil {
			l, _ = strconv.Atoi(m[1])
			msg = msg[len(m[0]):]
		}
		return nil, t.errorAtLine(l, "%s", msg)
	}
	for name := range trees {
		if name != "t" {
			return nil, t.errorAtLine(0, "define and block are not supported in workflow templates")
		}
	}
	t.tree = trees["t"]
	if t.tree == nil { // an empty template
		t.tree = &parse.Tree{Root: &parse.ListNode{NodeType: parse.NodeList}}
	}
	if err := t.refuse(t.tree.Root); err != nil {
		return nil, err
	}
	t.action = singleAction(t.tree.Root)
	return t, nil
}

// refuse reports the first {{template}} of l, the one node the evaluator
// does not support (define and block are found by their trees). It is an
// action of its own, so it is only ever in a list.
func (t *Template) refuse(l *parse.ListNode) error {
	if l == nil {
		return nil
	}
	for _, n := range l.Nodes {
		if tn, ok := n.(*parse.TemplateNode); ok {
			return t.errorAt(tn, "{{template %q}} is not supported in workflow templates", tn.Name)
		}
		if b := branch(n); b != nil {
			if err := cmp.Or(t.refuse(b.List), t.refuse(b.ElseList)); err != nil {
				return err
			}
		}
	}
	return nil
}

// branch returns the if, range or with that n is, or nil.
func branch(n parse.Node) *parse.BranchNode {
	switch n := n.(type) {
	case *parse.IfNode:
		return &n.BranchNode
	case *parse.RangeNode:
		return &n.BranchNode
	case *parse.WithNode:
		return &n.BranchNode
	}
	return nil
}

// singleAction returns the pipeline of a list that is one action with
// nothing but space around it, and that declares no variable.
func singleAction(l *parse.ListNode) *parse.PipeNode {
	var a *parse.ActionNode
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			if len(bytes.TrimSpace(n.Text)) != 0 {
				return nil
			}
		case *parse.ActionNode:
			if a != nil {
				return nil
			}
			a = n
		case *parse.CommentNode:
		default:
			return nil
		}
	}
	if a == nil || len(a.Pipe.Decl) > 0 {
		return nil
	}
	return a.Pipe
}

// lineOf returns the line in the file of the node at pos.
func (t *Template) lineOf(pos parse.Pos) int {
	if t.line == 0 {
		return 0
	}
	p := min(int(pos), len(t.src))
	return t.line + strings.Count(t.src[:p], "\n")
}

func (t *Template) errorAt(n parse.Node, format string, args ...any) *TemplateError {
	line := t.line
	if n != nil {
		line = t.lineOf(n.Position())
	}
	return &TemplateError{File: t.file, Line: line, Field: t.field, Msg: fmt.Sprintf(format, args...)}
}

// errorAtLine is errorAt for a line within the template (from 1; 0: its
// first).
func (t *Template) errorAtLine(l int, format string, args ...any) *TemplateError {
	line := t.line
	if line > 0 && l > 1 {
		line += l - 1
	}
	return &TemplateError{File: t.file, Line: line, Field: t.field, Msg: fmt.Sprintf(format, args...)}
}

// Render evaluates the template and returns its text.
func (t *Template) Render(s *Scope) (string, error) {
	v, err := t.eval(scopeRoot(s), false)
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// Eval evaluates the template. A template that is exactly one action
// ({{ .steps.fetch.result }}, space around it allowed) gives the action's
// value with its type: a number, a list or an object from a step's result
// stays one. Any other template gives its text.
func (t *Template) Eval(s *Scope) (any, error) {
	return t.eval(scopeRoot(s), true)
}

// eval evaluates the template over root; typed is Eval's rule for a
// template that is one action.
func (t *Template) eval(root map[string]any, typed bool) (any, error) {
	st := &state{t: t, vars: []variable{{"$", root}}}
	if typed && t.action != nil {
		return st.pipe(root, t.action)
	}
	if err := st.walk(root, t.tree.Root); err != nil {
		return nil, err
	}
	return st.out.String(), nil
}

// Truth evaluates the template as a condition (a step's if): see [Truthy].
func (t *Template) Truth(s *Scope) (bool, error) {
	v, err := t.Eval(s)
	if err != nil {
		return false, err
	}
	return Truthy(v), nil
}

// Truthy reports whether a template's value is true as a condition: true;
// a number other than 0; a string other than "", "false" and "0" (space
// around it ignored); a non-empty list or map. Null is false. Templates'
// own if, with, and, or and not use the same rule.
func Truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		s := strings.TrimSpace(v)
		return s != "" && s != "false" && s != "0"
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	if f, ok := number(v); ok {
		return f != 0
	}
	return true
}

// state is one evaluation.
type state struct {
	t    *Template
	vars []variable // $ first
	out  strings.Builder
	ops  int
}

type variable struct {
	name  string
	value any
}

// scopeRoot is what . is at the top of a template.
func scopeRoot(s *Scope) map[string]any {
	if s == nil {
		s = &Scope{}
	}
	steps := make(map[string]any, len(s.Steps))
	for id, r := range s.Steps {
		steps[id] = map[string]any{"result": r}
	}
	root := map[string]any{"inputs": orEmpty(s.Inputs), "steps": steps, "vars": orEmpty(s.Vars)}
	if s.ItemName != "" {
		root[s.ItemName] = s.Item
		root["index"] = s.Index
	}
	return root
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// errControl carries break (brk) and continue out of nested lists to
// their range.
type errControl struct{ brk bool }

func (errControl) Error() string { return "break or continue outside range" }

func (st *state) step(n parse.Node) error {
	st.ops++
	if st.ops > maxTemplateOps {
		return st.t.errorAt(n, "evaluation took more than %d steps", maxTemplateOps)
	}
	return nil
}

func (st *state) write(n parse.Node, s string) error {
	if st.out.Len()+len(s) > MaxTemplateOutput {
		return st.t.errorAt(n, "output longer than %d bytes", MaxTemplateOutput)
	}
	st.out.WriteString(s)
	return nil
}

func (st *state) walk(dot any, n parse.Node) error {
	if err := st.step(n); err != nil {
		return err
	}
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err := st.walk(dot, c); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		return st.write(n, string(n.Text))
	case *parse.CommentNode:
	case *parse.ActionNode:
		v, err := st.pipe(dot, n.Pipe)
		if err != nil {
			return err
		}
		if len(n.Pipe.Decl) == 0 {
			return st.write(n, text(v))
		}
	case *parse.IfNode:
		return st.branch(dot, &n.BranchNode, false)
	case *parse.WithNode:
		return st.branch(dot, &n.BranchNode, true)
	case *parse.RangeNode:
		return st.rangeNode(dot, n)
	case *parse.BreakNode:
		return errControl{brk: true}
	case *parse.ContinueNode:
		return errControl{}
	default:
		return st.t.errorAt(n, "unsupported %s", n)
	}
	return nil
}

func (st *state) branch(dot any, b *parse.BranchNode, with bool) error {
	mark := len(st.vars)
	defer func() { st.vars = st.vars[:mark] }()
	v, err := st.pipe(dot, b.Pipe)
	if err != nil {
		return err
	}
	if Truthy(v) {
		if with {
			dot = v
		}
		return st.walk(dot, b.List)
	}
	if b.ElseList != nil {
		return st.walk(dot, b.ElseList)
	}
	return nil
}

func (st *state) rangeNode(dot any, r *parse.RangeNode) error {
	mark := len(st.vars)
	defer func() { st.vars = st.vars[:mark] }()
	v, err := st.pipe(dot, r.Pipe)
	if err != nil {
		return err
	}
	// The pipeline's own declarations are the index and element, set per
	// iteration below.
	st.vars = st.vars[:mark]
	body := func(k, e any) (bool, error) {
		st.vars = st.vars[:mark]
		switch len(r.Pipe.Decl) {
		case 1:
			st.vars = append(st.vars, variable{r.Pipe.Decl[0].Ident[0], e})
		case 2:
			st.vars = append(st.vars, variable{r.Pipe.Decl[0].Ident[0], k}, variable{r.Pipe.Decl[1].Ident[0], e})
		}
		err := st.walk(e, r.List)
		var c errControl
		if errors.As(err, &c) {
			return c.brk, nil
		}
		return false, err
	}
	n := 0
	switch v := v.(type) {
	case nil:
	case []any:
		n = len(v)
		for i, e := range v {
			if stop, err := body(i, e); err != nil || stop {
				return err
			}
		}
	case map[string]any:
		n = len(v)
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if stop, err := body(k, v[k]); err != nil || stop {
				return err
			}
		}
	default:
		c, ok := integer(v)
		if !ok || c < 0 {
			return st.t.errorAt(r, "range over %s: want a list, a map or a count", typeName(v))
		}
		n = int(min(c, math.MaxInt32))
		for i := range n {
			if stop, err := body(i, i); err != nil || stop {
				return err
			}
			if err := st.step(r); err != nil { // a range over a count may have an empty body
				return err
			}
		}
	}
	if n == 0 && r.ElseList != nil {
		return st.walk(dot, r.ElseList)
	}
	return nil
}

// pipe evaluates a pipeline: each command's value is the last argument of
// the next; declared or assigned variables take the final value.
func (st *state) pipe(dot any, p *parse.PipeNode) (any, error) {
	if p == nil {
		return nil, nil
	}
	var v any
	for i, c := range p.Cmds {
		var err error
		v, err = st.command(dot, c, i > 0, v)
		if err != nil {
			return nil, err
		}
	}
	for _, d := range p.Decl {
		if !p.IsAssign {
			st.vars = append(st.vars, variable{d.Ident[0], v})
		} else if i := st.find(d.Ident[0]); i >= 0 {
			st.vars[i].value = v
		} else {
			return nil, st.t.errorAt(d, "undefined variable %s", d.Ident[0])
		}
	}
	return v, nil
}

// find returns the index of the innermost variable called name, or -1.
func (st *state) find(name string) int {
	for i := len(st.vars) - 1; i >= 0; i-- {
		if st.vars[i].name == name {
			return i
		}
	}
	return -1
}

// command evaluates one command of a pipeline; piped says whether final
// (the previous command's value) is its last argument.
func (st *state) command(dot any, c *parse.CommandNode, piped bool, final any) (any, error) {
	if err := st.step(c); err != nil {
		return nil, err
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		return st.call(dot, id, c.Args[1:], piped, final)
	}
	if len(c.Args) > 1 || piped {
		return nil, st.t.errorAt(c, "%s is not a function: it takes no arguments", c.Args[0])
	}
	return st.arg(dot, c.Args[0])
}

// arg evaluates an operand.
func (st *state) arg(dot any, n parse.Node) (any, error) {
	if err := st.step(n); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.NilNode:
		return nil, nil
	case *parse.BoolNode:
		return n.True, nil
	case *parse.StringNode:
		return n.Text, nil
	case *parse.NumberNode:
		switch {
		case n.IsInt:
			return n.Int64, nil
		case n.IsFloat:
			return n.Float64, nil
		}
		return nil, st.t.errorAt(n, "number %s out of range", n.Text)
	case *parse.FieldNode:
		return st.fields(n, dot, "", n.Ident)
	case *parse.VariableNode:
		i := st.find(n.Ident[0])
		if i < 0 {
			return nil, st.t.errorAt(n, "undefined variable %s", n.Ident[0])
		}
		return st.fields(n, st.vars[i].value, n.Ident[0], n.Ident[1:])
	case *parse.ChainNode:
		v, err := st.arg(dot, n.Node)
		if err != nil {
			return nil, err
		}
		return st.fields(n, v, "("+n.Node.String()+")", n.Field)
	case *parse.PipeNode:
		mark := len(st.vars)
		v, err := st.pipe(dot, n)
		st.vars = st.vars[:mark]
		return v, err
	case *parse.IdentifierNode:
		return st.call(dot, n, nil, false, nil)
	}
	return nil, st.t.errorAt(n, "unsupported %s", n)
}

// fields reads keys of v one after the other; prefix and keys spell the
// path in errors (".steps.fetch.result.url: no key \"url\"").
func (st *state) fields(n parse.Node, v any, prefix string, keys []string) (any, error) {
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			path := prefix + "." + strings.Join(keys[:i+1], ".")
			return nil, st.t.errorAt(n, "%s: cannot read key %q of %s", path, k, typeName(v))
		}
		e, ok := m[k]
		if !ok {
			path := prefix + "." + strings.Join(keys, ".")
			return nil, st.t.errorAt(n, "%s: no key %q", path, k)
		}
		v = e
	}
	return v, nil
}

// call calls the function id with args (and final, when piped).
func (st *state) call(dot any, id *parse.IdentifierNode, args []parse.Node, piped bool, final any) (any, error) {
	name := id.Ident
	nargs := len(args)
	if piped {
		nargs++
	}
	// and and or evaluate their arguments only as far as they need.
	if name == "and" || name == "or" {
		if nargs < 1 {
			return nil, st.t.errorAt(id, "%s: want at least 1 argument", name)
		}
		var v any
		for i := range nargs {
			if i < len(args) {
				var err error
				if v, err = st.arg(dot, args[i]); err != nil {
					return nil, err
				}
			} else {
				v = final
			}
			if Truthy(v) == (name == "or") {
				return v, nil
			}
		}
		return v, nil
	}
	vals := make([]any, 0, nargs)
	for _, a := range args {
		v, err := st.arg(dot, a)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	if piped {
		vals = append(vals, final)
	}
	v, err := callFunc(name, vals)
	if err != nil {
		return nil, st.t.errorAt(id, "%s: %v", name, err)
	}
	if s, ok := v.(string); ok && len(s) > MaxTemplateOutput {
		return nil, st.t.errorAt(id, "%s: result longer than %d bytes", name, MaxTemplateOutput)
	}
	return v, nil
}

func wantArgs(args []any, n int) error {
	if len(args) != n {
		return fmt.Errorf("want %d argument%s, got %d", n, plural(n), len(args))
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func callFunc(name string, args []any) (any, error) {
	switch name {
	case "json":
		if err := wantArgs(args, 1); err != nil {
			return nil, err
		}
		return marshal(args[0])
	case "fromJson":
		if err := wantArgs(args, 1); err != nil {
			return nil, err
		}
		s, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("want a string of JSON, not %s", typeName(args[0]))
		}
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
		if dec.More() {
			return nil, errors.New("invalid JSON: more than one value")
		}
		return v, nil
	case "default":
		if err := wantArgs(args, 2); err != nil {
			return nil, err
		}
		if empty(args[1]) {
			return args[0], nil
		}
		return args[1], nil
	case "join":
		if err := wantArgs(args, 2); err != nil {
			return nil, err
		}
		sep, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("the separator must be a string, not %s", typeName(args[0]))
		}
		var l []any
		switch v := args[1].(type) {
		case nil:
		case []any:
			l = v
		default:
			return nil, fmt.Errorf("want a list to join, not %s", typeName(v))
		}
		parts := make([]string, len(l))
		n := 0
		for i, e := range l {
			parts[i] = text(e)
			n += len(parts[i]) + len(sep)
			if n > MaxTemplateOutput {
				return nil, fmt.Errorf("result longer than %d bytes", MaxTemplateOutput)
			}
		}
		return strings.Join(parts, sep), nil
	case "eq", "ne":
		if len(args) < 2 || (name == "ne" && len(args) != 2) {
			if name == "ne" {
				return nil, wantArgs(args, 2)
			}
			return nil, fmt.Errorf("want at least 2 arguments, got %d", len(args))
		}
		for _, b := range args[1:] {
			eq, err := equal(args[0], b)
			if err != nil {
				return nil, err
			}
			if eq {
				return name == "eq", nil
			}
		}
		return name == "ne", nil
	case "lt", "le", "gt", "ge":
		if err := wantArgs(args, 2); err != nil {
			return nil, err
		}
		c, err := compare(args[0], args[1])
		if err != nil {
			return nil, err
		}
		switch name {
		case "lt":
			return c < 0, nil
		case "le":
			return c <= 0, nil
		case "gt":
			return c > 0, nil
		}
		return c >= 0, nil
	case "not":
		if err := wantArgs(args, 1); err != nil {
			return nil, err
		}
		return !Truthy(args[0]), nil
	case "len":
		if err := wantArgs(args, 1); err != nil {
			return nil, err
		}
		switch v := args[0].(type) {
		case nil:
			return int64(0), nil
		case string:
			return int64(utf8.RuneCountInString(v)), nil
		case []any:
			return int64(len(v)), nil
		case map[string]any:
			return int64(len(v)), nil
		}
		return nil, fmt.Errorf("no length for %s", typeName(args[0]))
	case "index":
		if len(args) < 1 {
			return nil, errors.New("want at least 1 argument")
		}
		v := args[0]
		for _, k := range args[1:] {
			switch c := v.(type) {
			case map[string]any:
				s, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("a map's key must be a string, not %s", typeName(k))
				}
				v = c[s] // a missing key is null: index is how a template asks whether it is there
			case []any:
				i, ok := integer(k)
				if !ok {
					return nil, fmt.Errorf("a list's index must be a whole number, not %s", typeName(k))
				}
				if i < 0 || i >= int64(len(c)) {
					return nil, fmt.Errorf("index %d out of range (the list has %d)", i, len(c))
				}
				v = c[i]
			default:
				return nil, fmt.Errorf("cannot index %s", typeName(v))
			}
		}
		return v, nil
	case "print":
		return fmt.Sprint(fmtArgs(args)...), nil
	case "printf":
		if len(args) < 1 {
			return nil, errors.New("want a format")
		}
		format, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("the format must be a string, not %s", typeName(args[0]))
		}
		if err := checkFormat(format); err != nil {
			return nil, err
		}
		return fmt.Sprintf(format, fmtArgs(args[1:])...), nil
	}
	return nil, errors.New("not a function") // parse refuses unknown names first
}

// checkFormat refuses printf formats whose width or precision would make a
// huge string (fmt itself allows up to a million per verb).
func checkFormat(f string) error {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		digits := 0
		for i++; i < len(f); i++ {
			c := f[i]
			if c == '*' {
				return errors.New("a width or precision of * is not supported")
			}
			if c >= '0' && c <= '9' {
				digits++
				if digits > len(strconv.Itoa(maxPrintfWidth))-1 {
					return fmt.Errorf("width or precision over %d", maxPrintfWidth-1)
				}
				continue
			}
			digits = 0
			if c == '%' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
				break
			}
		}
	}
	return nil
}

// fmtArgs prepares values for fmt: null prints as nothing, a list or a map
// as JSON, a number by its value whatever its Go type (see fmtNumber).
func fmtArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch a.(type) {
		case nil:
			out[i] = ""
		case []any, map[string]any:
			out[i] = text(a)
		case string, bool:
			out[i] = a
		default:
			if n, ok := toFmtNumber(a); ok {
				out[i] = n
			} else {
				out[i] = a
			}
		}
	}
	return out
}

// fmtNumber formats a number from JSON for fmt: %d (and the other integer
// verbs) print a whole float64 as an integer, %f and the like print an
// integer as a float, %v and %s print it as JSON would. A JSON number is a
// float64 however it was written, so that {{ printf "%d" .n }} works.
type fmtNumber struct {
	f     float64
	i     int64
	isInt bool
}

func toFmtNumber(v any) (fmtNumber, bool) {
	if i, ok := integer(v); ok {
		return fmtNumber{f: float64(i), i: i, isInt: true}, true
	}
	if f, ok := number(v); ok {
		return fmtNumber{f: f}, true
	}
	return fmtNumber{}, false
}

// Format implements fmt.Formatter.
func (n fmtNumber) Format(s fmt.State, verb rune) {
	switch verb {
	case 'd', 'x', 'X', 'o', 'O', 'b', 'c', 'q', 'U':
		if n.isInt {
			fmt.Fprintf(s, fmt.FormatString(s, verb), n.i)
			return
		}
	case 'v', 's':
		var t string
		if n.isInt {
			t = strconv.FormatInt(n.i, 10)
		} else {
			t = text(n.f)
		}
		fmt.Fprintf(s, fmt.FormatString(s, 's'), t)
		return
	}
	fmt.Fprintf(s, fmt.FormatString(s, verb), n.f)
}

// empty is what default replaces.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// number returns v as a float64 when it is a number of any Go type the
// data may hold.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// integer returns v as an int64 when it is a whole number.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

func isNumber(v any) bool {
	_, ok := number(v)
	return ok
}

// equal compares two basic values; null equals only null.
func equal(a, b any) (bool, error) {
	if a == nil || b == nil {
		return a == nil && b == nil, nil
	}
	if isNumber(a) && isNumber(b) {
		c, err := compare(a, b)
		return c == 0, err
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x == y, nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y, nil
		}
	}
	if !basic(a) || !basic(b) {
		return false, fmt.Errorf("cannot compare %s with %s (only strings, numbers, booleans and null)", typeName(a), typeName(b))
	}
	return false, fmt.Errorf("incompatible types: %s and %s", typeName(a), typeName(b))
}

func basic(v any) bool {
	switch v.(type) {
	case nil, string, bool:
		return true
	}
	return isNumber(v)
}

// compare orders two numbers or two strings.
func compare(a, b any) (int, error) {
	if ia, ok := integer(a); ok {
		if ib, ok := integer(b); ok {
			return cmp.Compare(ia, ib), nil
		}
	}
	if fa, ok := number(a); ok {
		if fb, ok := number(b); ok {
			switch {
			case fa < fb:
				return -1, nil
			case fa > fb:
				return 1, nil
			}
			return 0, nil
		}
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return strings.Compare(sa, sb), nil
		}
	}
	return 0, fmt.Errorf("cannot order %s and %s (only two numbers or two strings)", typeName(a), typeName(b))
}

// typeName names a value's type in JSON's words.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if isNumber(v) {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// text renders a value into a template's output: a string as itself, null
// as nothing, a number or boolean as JSON writes it, a list or an object
// as JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return v.String()
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	s, err := marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return s
}

// marshal is compact JSON without HTML escapes (a template's output is not
// HTML).
func marshal(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Value is a value of a workflow file (a tool's arguments, a workflow
// step's with) whose string leaves are templates.
type Value struct {
	v any // map[string]any, []any, *Template for a string, or another constant
}

// NewValue builds a Value from plain data (as a YAML or JSON decoder gives
// it), parsing every string as a template.
func NewValue(v any) (*Value, error) {
	return newValue("", "", nil, v)
}

// newValue builds a Value whose templates know their file, field and line
// (lineOf(field path), 0 when unknown).
func newValue(file, field string, lineOf func(string) int, v any) (*Value, error) {
	var errs []error
	var walk func(path string, v any) any
	walk = func(path string, v any) any {
		switch v := v.(type) {
		case string:
			line := 0
			if lineOf != nil {
				line = lineOf(path)
			}
			t, err := parseTemplate(file, line, path, v)
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			return t
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = walk(decode.IndexPath(path, i), e)
			}
			return out
		case map[string]any:
			out := make(map[string]any, len(v))
			for _, k := range slices.Sorted(maps.Keys(v)) {
				out[k] = walk(decode.KeyPath(path, k), v[k])
			}
			return out
		}
		return v
	}
	out := walk(field, v)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Value{v: out}, nil
}

// Eval evaluates every template of the value (each with [Template.Eval],
// so that "{{ .steps.a.result }}" keeps its type) and returns the plain
// data.
func (v *Value) Eval(s *Scope) (any, error) {
	if v == nil {
		return nil, nil
	}
	root := scopeRoot(s)
	var walk func(x any) (any, error)
	walk = func(x any) (any, error) {
		switch x := x.(type) {
		case *Template:
			return x.eval(root, true)
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				var err error
				if out[i], err = walk(e); err != nil {
					return nil, err
				}
			}
			return out, nil
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				var err error
				if out[k], err = walk(e); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		return x, nil
	}
	return walk(v.v)
}

// templates calls f on every template of the value.
func (v *Value) templates(f func(*Template)) {
	if v == nil {
		return
	}
	var walk func(x any)
	walk = func(x any) {
		switch x := x.(type) {
		case *Template:
			f(x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		}
	}
	walk(v.v)
}

// refs is what the templates of one place of a file may refer to.
type refs struct {
	inputs []string // the declared inputs
	// vars are the declared vars; noVars when .vars may not be read (in
	// a var).
	vars   []string
	noVars bool
	// needs are the steps whose results are there (the transitive needs);
	// allSteps every step of the file, to tell "not in needs" from "no
	// such step"; anySteps lets every step be read (outputs).
	needs    []string
	allSteps []string
	anySteps bool
	// item is the for_each item's name; "" outside a for_each.
	item string
}

// check reports every reference of the template to what r does not have:
// a field chain from the top (. or $) must start with inputs and a
// declared input, steps and a step that is there and then result, vars
// and a declared var, or the for_each item or index.
func (t *Template) check(r *refs) []error {
	var errs []error
	t.checkList(r, t.tree.Root, true, &errs)
	return errs
}

func (t *Template) checkList(r *refs, l *parse.ListNode, dotIsRoot bool, errs *[]error) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		if a, ok := n.(*parse.ActionNode); ok {
			t.checkPipe(r, a.Pipe, dotIsRoot, errs)
		} else if b := branch(n); b != nil {
			t.checkPipe(r, b.Pipe, dotIsRoot, errs)
			// range and with set dot; if does not.
			t.checkList(r, b.List, dotIsRoot && b.NodeType == parse.NodeIf, errs)
			t.checkList(r, b.ElseList, dotIsRoot, errs)
		}
	}
}

func (t *Template) checkPipe(r *refs, p *parse.PipeNode, dotIsRoot bool, errs *[]error) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			t.checkArg(r, a, dotIsRoot, errs)
		}
	}
}

func (t *Template) checkArg(r *refs, n parse.Node, dotIsRoot bool, errs *[]error) {
	switch n := n.(type) {
	case *parse.DotNode:
		if dotIsRoot {
			*errs = append(*errs, t.errorAt(n, ". at the top is the whole scope; name what you read (.inputs.NAME, .steps.ID.result, .vars.NAME)"))
		}
	case *parse.FieldNode:
		if dotIsRoot {
			if msg := r.chain(n.Ident); msg != "" {
				*errs = append(*errs, t.errorAt(n, "%s", msg))
			}
		}
	case *parse.VariableNode:
		if n.Ident[0] == "$" {
			if len(n.Ident) == 1 {
				*errs = append(*errs, t.errorAt(n, "$ is the whole scope; name what you read ($.inputs.NAME, $.steps.ID.result, $.vars.NAME)"))
			} else if msg := r.chain(n.Ident[1:]); msg != "" {
				*errs = append(*errs, t.errorAt(n, "%s", msg))
			}
		}
	case *parse.ChainNode:
		t.checkArg(r, n.Node, dotIsRoot, errs)
	case *parse.PipeNode:
		t.checkPipe(r, n, dotIsRoot, errs)
	}
}

// chain checks a field chain read from the top of the scope; it returns
// the problem, or "".
func (r *refs) chain(keys []string) string {
	path := "." + strings.Join(keys, ".")
	top := []string{"inputs", "steps", "vars"}
	if r.item != "" {
		top = append(top, r.item, "index")
	}
	switch k := keys[0]; {
	case k == "inputs":
		if len(keys) > 1 && !slices.Contains(r.inputs, keys[1]) {
			return fmt.Sprintf("%s: no input %q%s", path, keys[1], didYouMean(keys[1], r.inputs, "the workflow has no inputs"))
		}
	case k == "vars":
		if r.noVars {
			return fmt.Sprintf("%s: a var cannot read vars (vars are templates over inputs)", path)
		}
		if len(keys) > 1 && !slices.Contains(r.vars, keys[1]) {
			return fmt.Sprintf("%s: no var %q%s", path, keys[1], didYouMean(keys[1], r.vars, "the workflow has no vars"))
		}
	case k == "steps":
		if len(keys) == 1 {
			return fmt.Sprintf("%s: name a step: .steps.ID.result", path)
		}
		id := keys[1]
		switch {
		case !slices.Contains(r.allSteps, id):
			return fmt.Sprintf("%s: no step %q%s", path, id, didYouMean(id, r.allSteps, "the workflow has no steps"))
		case !r.anySteps && !slices.Contains(r.needs, id):
			return fmt.Sprintf("%s: step %q is not in this step's needs, so its result may not exist yet: add it to needs", path, id)
		case len(keys) > 2 && keys[2] != "result":
			return fmt.Sprintf("%s: a step has only .result, not %q", path, keys[2])
		}
	case r.item != "" && (k == r.item || k == "index"):
	case r.item != "" && k == "item":
		return fmt.Sprintf("%s: this for_each names its item .%s (as: %s)", path, r.item, r.item)
	case k == "item" || k == "index":
		return fmt.Sprintf("%s: .%s exists only in a for_each's step", path, k)
	default:
		return fmt.Sprintf("%s: unknown field %q%s", path, k, didYouMean(k, top, ""))
	}
	return ""
}

func didYouMean(k string, known []string, none string) string {
	if len(known) == 0 {
		if none == "" {
			return ""
		}
		return " (" + none + ")"
	}
	if s := decode.Suggest(k, known); s != "" {
		return "; did you mean " + s + "?"
	}
	return " (want one of " + strings.Join(known, ", ") + ")"
}

// Scope is what a template sees: .inputs, .steps.ID.result, .vars, and in
// a for_each's inner step the item (.item, or the name in as) and .index.
type Scope struct {
	Inputs map[string]any
	// Steps maps a step's id to its result (nil for a skipped step).
	Steps map[string]any
	Vars  map[string]any
	// ItemName is the for_each item's name ("item" by default); "" outside
	// a for_each.
	ItemName string
	Item     any
	Index    int
}
