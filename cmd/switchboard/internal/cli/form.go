package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/mail"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/schema"
)

// elicitation is how the CLI answers a server that asks the user for
// input (elicitation/create) during a call: on a terminal, a form from the
// requested schema, asked on stderr and answered on stdin; otherwise the
// question is declined and stderr says so (a script must not hang on a
// question nobody sees, nor lose it silently). why, when not "", is why
// stdin cannot answer even on a terminal (a run's prompt came from it).
func (e *env) elicitation(why string) host.ElicitationHandler {
	if why == "" {
		why = e.notTerminal()
	}
	if why != "" {
		return func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if _, ok := req.Meta[host.MetaKeyAnswerElsewhere].(string); ok {
				// Declining is an answer (a workflow's gate fails on it);
				// nobody was asked. The call ends in a tool error naming
				// the other way to answer (host.MetaKeyAnswerElsewhere).
				fmt.Fprintf(e.stderr, "switchboard: server %q asks: %s\nswitchboard: not answered: %s\n", server, shown(oneLine(req.Message)), why)
				return nil, errors.New(why)
			}
			fmt.Fprintf(e.stderr, "switchboard: server %q asks: %s\nswitchboard: declined: %s\n", server, shown(oneLine(req.Message)), why)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	f := &form{out: e.stderr, in: &lineReader{r: e.stdin}}
	return f.ask
}

// notTerminal says why stdin and stderr are not a terminal to ask on, or
// "" when they are.
func (e *env) notTerminal() string {
	f, ok := e.stdin.(*os.File)
	switch {
	case !ok || !term.IsTerminal(int(f.Fd())):
		return "stdin is not a terminal"
	case !e.stderrTTY:
		return "stderr is not a terminal"
	}
	return ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// shownLines is shown for a message of several lines, each kept.
func shownLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = shown(strings.TrimRight(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// shown is text from a server as the form writes it on the terminal. The
// host cleans what a user reads (the message, titles, descriptions), but
// not what the server must get back as it sent it — property names, enum
// and const values — so these may hold terminal escapes or invisible
// characters: such text is written quoted, with them escaped.
func shown(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) < 0 {
		return s
	}
	return strconv.QuoteToGraphic(s)
}

// form asks elicitation questions, one field a line.
type form struct {
	mu  sync.Mutex // one question at a time: a run's parallel calls may ask at once
	out io.Writer
	in  *lineReader
}

// lineReader reads stdin line by line on a goroutine of its own, so that a
// question can stop waiting when its request ends (the call timed out, the
// server withdrew it, Ctrl-C). The goroutine lives until stdin ends, which
// for the CLI is the end of the process.
type lineReader struct {
	r     io.Reader
	once  sync.Once
	lines chan string
	err   error // why lines was closed; read after it is
}

// next returns the next line without its line ending, or io.EOF (Ctrl-D),
// or ctx's error.
func (l *lineReader) next(ctx context.Context) (string, error) {
	l.once.Do(func() {
		l.lines = make(chan string)
		go func() {
			br := bufio.NewReader(l.r)
			for {
				line, err := br.ReadString('\n')
				if line != "" || err == nil {
					l.lines <- strings.TrimRight(line, "\r\n")
				}
				if err != nil {
					l.err = err
					close(l.lines)
					return
				}
			}
		}()
	})
	select {
	case line, ok := <-l.lines:
		if !ok {
			return "", l.err
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ask is the host.ElicitationHandler of a terminal: it asks whether to
// answer, then each field of the requested schema, checking each answer
// against the field's schema (as the host checks a tool's arguments)
// before the next. "n" declines; Ctrl-D, or the request ending, cancels.
func (f *form) ask(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fields, err := formFields(req.RequestedSchema)
	if err != nil {
		fmt.Fprintf(f.out, "\nServer %q asks: %s\nswitchboard: declined: %s\n", server, shown(oneLine(req.Message)), shown(err.Error()))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	fmt.Fprintf(f.out, "\nServer %q asks: %s\n", server, shownLines(req.Message))
	cancelled := func(err error) (*mcp.ElicitResult, error) {
		if errors.Is(err, io.EOF) {
			fmt.Fprintf(f.out, "\n(cancelled)\n")
		} else {
			fmt.Fprintf(f.out, "\n(the question was withdrawn: %v)\n", err)
		}
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	for {
		fmt.Fprint(f.out, "Answer? [Y/n] (n declines, Ctrl-D cancels) ")
		line, err := f.in.next(ctx)
		if err != nil {
			return cancelled(err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes":
		case "n", "no":
			return &mcp.ElicitResult{Action: "decline"}, nil
		default:
			fmt.Fprintln(f.out, "  answer y or n")
			continue
		}
		break
	}
	content := map[string]any{}
	for _, fd := range fields {
		fmt.Fprintf(f.out, "  %s\n", fd.label())
		for {
			fmt.Fprintf(f.out, "    %s: ", fd.hint())
			line, err := f.in.next(ctx)
			if err != nil {
				return cancelled(err)
			}
			v, set, problem := fd.parse(strings.TrimSpace(line))
			if problem == "" && set {
				problem = fd.validate(v)
			}
			if problem != "" {
				fmt.Fprintf(f.out, "    %s\n", shown(problem))
				continue
			}
			if set {
				content[fd.name] = v
			}
			break
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// field is one property of a requested schema, as the form asks it. MCP
// allows flat objects of strings (with a format, or an enum), numbers,
// integers, booleans and arrays of enum strings (a multi-select).
type field struct {
	name, title, desc string
	typ               string // string, number, integer, boolean, array
	format            string // string: email, uri, date, date-time
	required          bool
	def               any      // decoded; nil when none
	options           []option // an enum: one of (string), any of (array)
	min, max          *float64 // number bounds, for the hint
	check             *schema.Schema
}

type option struct{ value, title string }

// propSchema is what the form reads of a property's schema.
type propSchema struct {
	Type        any             `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Default     json.RawMessage `json:"default"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []titledConst   `json:"oneOf"`
	AnyOf       []titledConst   `json:"anyOf"`
	Items       *propSchema     `json:"items"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
}

type titledConst struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// formFields reads the fields of a requested schema, required ones first,
// each group in name order (a decoded schema has lost the server's
// order).
func formFields(requested any) ([]field, error) {
	raw, err := json.Marshal(requested)
	if err != nil {
		return nil, fmt.Errorf("the requested schema is not JSON: %v", err)
	}
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if string(raw) != "null" {
		if err := json.Unmarshal(raw, &root); err != nil {
			return nil, fmt.Errorf("the requested schema is not an object schema: %v", err)
		}
	}
	var out []field
	for name, pr := range root.Properties {
		var p propSchema
		if err := json.Unmarshal(pr, &p); err != nil {
			return nil, fmt.Errorf("field %q: %v", name, err)
		}
		fd := field{name: name, title: p.Title, desc: p.Description, format: p.Format, min: p.Minimum, max: p.Maximum}
		fd.typ, _ = p.Type.(string)
		for _, r := range root.Required {
			fd.required = fd.required || r == name
		}
		if len(p.Default) > 0 {
			if err := json.Unmarshal(p.Default, &fd.def); err != nil {
				return nil, fmt.Errorf("field %q: default: %v", name, err)
			}
		}
		fd.options = options(&p)
		if fd.typ == "array" && p.Items != nil {
			fd.options = options(p.Items)
		}
		if fd.typ == "" && len(fd.options) > 0 {
			fd.typ = "string"
		}
		// The field alone, checked as the host checks arguments: what the
		// form accepts, the server's schema accepts.
		one := fmt.Sprintf(`{"type":"object","properties":{%s:%s}}`, strconv.Quote(name), pr)
		if s, err := schema.Compile(json.RawMessage(one)); err == nil {
			fd.check = s
		}
		out = append(out, fd)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].required != out[j].required {
			return out[i].required
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

// options are an enum's choices: enum (titled by enumNames), or oneOf /
// anyOf entries of const and title.
func options(p *propSchema) []option {
	var out []option
	for i, v := range p.Enum {
		o := option{value: fmt.Sprint(v)}
		if i < len(p.EnumNames) {
			o.title = p.EnumNames[i]
		}
		out = append(out, o)
	}
	for _, c := range append(append([]titledConst{}, p.OneOf...), p.AnyOf...) {
		if c.Const != nil {
			out = append(out, option{value: fmt.Sprint(c.Const), title: c.Title})
		}
	}
	return out
}

// label is the field's line: its title (or name), required mark and
// description.
func (fd *field) label() string {
	s := shown(fd.name)
	if fd.title != "" && fd.title != fd.name {
		s = shown(oneLine(fd.title)) + " (" + shown(fd.name) + ")"
	}
	if fd.required {
		s += " *"
	}
	if d := oneLine(fd.desc); d != "" && d != fd.title {
		s += " — " + shown(d)
	}
	return s
}

// hint says what to type, and the default Enter takes.
func (fd *field) hint() string {
	var h string
	switch {
	case len(fd.options) > 0:
		var opts []string
		for i, o := range fd.options {
			s := fmt.Sprintf("%d) %s", i+1, shown(o.value))
			if o.title != "" && o.title != o.value {
				s = fmt.Sprintf("%d) %s (%s)", i+1, shown(oneLine(o.title)), shown(o.value))
			}
			opts = append(opts, s)
		}
		if fd.typ == "array" {
			h = "any of, comma-separated: " + strings.Join(opts, "  ")
		} else {
			h = "one of: " + strings.Join(opts, "  ")
		}
	case fd.typ == "boolean":
		h = "yes or no"
	case fd.typ == "number" || fd.typ == "integer":
		h = map[string]string{"number": "a number", "integer": "a whole number"}[fd.typ]
		switch {
		case fd.min != nil && fd.max != nil:
			h += fmt.Sprintf(" from %g to %g", *fd.min, *fd.max)
		case fd.min != nil:
			h += fmt.Sprintf(", at least %g", *fd.min)
		case fd.max != nil:
			h += fmt.Sprintf(", at most %g", *fd.max)
		}
	default:
		h = "text"
		if fd.format != "" {
			h = map[string]string{"email": "an email address", "uri": "a URI", "date": "a date (YYYY-MM-DD)",
				"date-time": "a date and time (RFC 3339, 2006-01-02T15:04:05Z)"}[fd.format]
			if h == "" {
				h = "text (" + fd.format + ")"
			}
		}
	}
	switch {
	case fd.def != nil:
		h += " [" + shown(fd.show(fd.def)) + "]"
	case fd.required:
		h += " (required)"
	default:
		h += " (Enter to skip)"
	}
	return h
}

// show is a value as the form writes it: a choice by its title.
func (fd *field) show(v any) string {
	for _, o := range fd.options {
		if s, ok := v.(string); ok && s == o.value && o.title != "" {
			return o.title
		}
	}
	switch v := v.(type) {
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case []any:
		var s []string
		for _, x := range v {
			s = append(s, fd.show(x))
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprint(v)
}

// parse reads an answer: set is false when the field is left out (an
// empty answer to an optional field without a default); problem says what
// is wrong with it.
func (fd *field) parse(s string) (v any, set bool, problem string) {
	if s == "" {
		switch {
		case fd.def != nil:
			return fd.def, true, ""
		case fd.required:
			return nil, false, "an answer is required (Ctrl-D cancels)"
		}
		return nil, false, ""
	}
	switch {
	case fd.typ == "array":
		var out []any
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			c, ok := fd.choose(part)
			if !ok {
				return nil, false, fmt.Sprintf("%q is not one of the choices", part)
			}
			out = append(out, c)
		}
		return out, true, ""
	case len(fd.options) > 0:
		c, ok := fd.choose(s)
		if !ok {
			return nil, false, "not one of the choices; type its number, value or title"
		}
		return c, true, ""
	case fd.typ == "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1", "on":
			return true, true, ""
		case "n", "no", "false", "0", "off":
			return false, true, ""
		}
		return nil, false, "answer yes or no"
	case fd.typ == "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false, "not a whole number"
		}
		return n, true, ""
	case fd.typ == "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, false, "not a number"
		}
		return n, true, ""
	}
	if p := formatProblem(fd.format, s); p != "" {
		return nil, false, p
	}
	return s, true, ""
}

// choose finds an option by its number, value or title (case aside).
func (fd *field) choose(s string) (string, bool) {
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(fd.options) {
		return fd.options[i-1].value, true
	}
	for _, o := range fd.options {
		if o.value == s {
			return o.value, true
		}
	}
	for _, o := range fd.options {
		if strings.EqualFold(o.value, s) || o.title != "" && strings.EqualFold(o.title, s) {
			return o.value, true
		}
	}
	return "", false
}

// formatProblem checks the string formats MCP allows, which JSON Schema
// validators treat as annotations.
func formatProblem(format, s string) string {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return "not an email address"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return "not a URI (it needs a scheme, such as https:)"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "not a date (YYYY-MM-DD)"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "not a date and time (RFC 3339, such as 2006-01-02T15:04:05Z)"
		}
	}
	return ""
}

// validate checks v against the field's own schema: lengths, bounds,
// patterns, the choices.
func (fd *field) validate(v any) string {
	if fd.check == nil {
		return ""
	}
	raw, err := json.Marshal(map[string]any{fd.name: v})
	if err != nil {
		return err.Error()
	}
	if _, err := fd.check.Validate(raw); err != nil {
		var ve *schema.ValidationError
		if errors.As(err, &ve) && len(ve.Problems) > 0 {
			var msgs []string
			for _, p := range ve.Problems {
				msgs = append(msgs, p.Message)
			}
			return strings.Join(msgs, "; ")
		}
		return err.Error()
	}
	return ""
}
