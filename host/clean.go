package host

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What servers declare — tool, prompt and resource names, titles and
// descriptions, schema annotations, serverInfo, instructions — is shown in
// terminals and read by models. A server can hide things in it: terminal
// escape sequences (a clear screen, a recoloured or rewritten line, a
// hyperlink that says one thing and goes to another), and characters that
// display as nothing but that a model reads (Unicode tag characters, which
// spell ASCII invisibly; bidirectional controls, which show text in
// another order than it is read; zero-width characters; runs of variation
// selectors, which can carry bytes after an emoji). And it can send a
// megabyte of description to every model request. The host cleans and
// bounds all of it once, when it lists it, so that every face (the CLI, an
// agent, the gateway's clients) gets the clean version; what it changed is
// reported in the server's status and logged.
//
// Identifiers are never changed, since the server must get them back
// exactly: a tool or prompt whose name (or a prompt argument's name) holds
// such characters, or is longer than the name bound, is not offered, and
// neither is a resource or template whose URI holds them. An invisible
// character in an identifier has no use but to make one name look like
// another (a tool that shadows another server's), so refusing is the
// safe reading.

// limits bound the text servers declare (Options.MaxDescriptionBytes,
// Options.MaxNameBytes).
type limits struct {
	desc, name int
	redact     func(string) string // nil: none
}

// change says what cleanText did to one string.
type change struct {
	escapes   int // terminal escape sequences removed
	invisible int // control and invisible characters removed
	from, to  int // the length in bytes before and after a cut; 0 if not cut
}

func (c change) none() bool { return c == change{} }

func (c change) String() string {
	var parts []string
	if c.from > 0 {
		parts = append(parts, fmt.Sprintf("cut from %d to %d bytes", c.from, c.to))
	}
	switch {
	case c.escapes > 0 && c.invisible > 0:
		parts = append(parts, fmt.Sprintf("%s and %s removed", count(c.escapes, "terminal escape sequence"), count(c.invisible, "control or invisible character")))
	case c.escapes > 0:
		parts = append(parts, count(c.escapes, "terminal escape sequence")+" removed")
	case c.invisible > 0:
		parts = append(parts, count(c.invisible, "control or invisible character")+" removed")
	}
	return strings.Join(parts, ", ")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// cleanText returns s without terminal escape sequences and control and
// invisible characters (newlines and tabs are kept; CRLF becomes LF), cut
// to at most max bytes, and what it changed. Text from which something was
// removed is redacted again: a secret split by invisible characters is
// whole once they are gone. Clean ASCII within the bound is returned as it
// is, without allocating.
func (l *limits) cleanText(s string, max int) (string, change) {
	return l.clean(s, max, false)
}

// CleanText returns s without terminal escape sequences (CSI, OSC and the
// other string sequences, whole) and control and invisible characters
// (tag characters, bidi controls, zero-width characters, stray variation
// selectors), newlines and tabs kept and CRLF made LF: the cleaning the
// host gives what servers declare, for what it passes on as it is — a
// tool's result, a resource's contents, an event that quotes them — where a
// face shows it on a terminal (the CLI's text output) or gives it to a
// model (an agent's tool results). It does not redact: text from which
// something was removed may hold a secret that was split, so redact after.
// Clean ASCII is returned as it is, without allocating.
func CleanText(s string) string {
	s, _ = (&limits{}).clean(s, len(s), false)
	return s
}

// cleanLine is cleanText for a one-line field (a title, a version): a
// newline or tab there is a control character, replaced by a space.
func (l *limits) cleanLine(s string) (string, change) {
	return l.clean(s, l.name, true)
}

func (l *limits) clean(s string, max int, oneLine bool) (string, change) {
	var c change
	plain := true
	for i := 0; i < len(s); i++ {
		if b := s[i]; b >= utf8.RuneSelf || (b < ' ' && (oneLine || (b != '\n' && b != '\t'))) || b == 0x7f {
			plain = false
			break
		}
	}
	if !plain {
		s, c.escapes, c.invisible = strip(s, oneLine)
		if c.escapes+c.invisible > 0 && l.redact != nil {
			s = l.redact(s)
		}
	}
	if len(s) > max {
		c.from = len(s)
		s = cut(s, max)
		c.to = len(s)
	}
	return s, c
}

// hidden reports whether the identifier s holds anything a one-line
// field may not (see strip).
func hidden(s string) bool {
	_, e, i := strip(s, true)
	return e+i > 0
}

// strip removes escape sequences and control and invisible characters. In
// a oneLine field newlines and tabs are control characters too, replaced
// by a space; elsewhere a line or paragraph separator becomes a newline.
func strip(s string, oneLine bool) (out string, escapes, invisible int) {
	var b strings.Builder
	kept := 0     // s[kept:i] is kept and not yet written
	base := false // the last character kept can take a variation selector
	drop := func(i, n int) {
		if kept == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[kept:i])
		kept = i + n
	}
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		switch {
		case r >= ' ' && r < 0x7f:
			base = true
		case r == '\r' && !oneLine && strings.HasPrefix(s[i+1:], "\n"):
			drop(i, 1) // a line ending, not a hidden character
		case (r == '\n' || r == '\t') && !oneLine:
			base = true
		case r == 0x1b:
			n = escapeLen(s[i:])
			drop(i, n)
			escapes++
		case r == '\n' || r == '\t' || r == '\u2028' || r == '\u2029':
			drop(i, n)
			if oneLine {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\n')
			}
			invisible++
			base = false
		case r < ' ' || (r >= 0x7f && r < 0xa0) || (r == utf8.RuneError && n == 1):
			drop(i, n)
			invisible++
		case unicode.Is(unicode.Variation_Selector, r):
			// One presentation selector (text or emoji style) after a
			// character is how emoji are written; any other, or a run,
			// carries nothing visible.
			if base && (r == '\uFE0E' || r == '\uFE0F') {
				base = false
				break
			}
			drop(i, n)
			invisible++
		case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
			drop(i, n)
			invisible++
		default:
			base = true
		}
		i += n
	}
	if kept == 0 {
		return s, 0, 0
	}
	b.WriteString(s[kept:])
	return b.String(), escapes, invisible
}

// escapeLen returns the length of the escape sequence at the start of s
// (ECMA-48): CSI (ESC [ ... final byte), OSC and the other string
// sequences (ESC ] ... BEL or ESC \), or ESC, intermediate bytes and a
// final byte. An unterminated string sequence is only its introducer: the
// rest, without the ESC, is inert text.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch s[1] {
	case '[':
		i := 2
		for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
			i++
		}
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
		return i
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(s); i++ {
			switch {
			case s[i] == 0x07:
				return i + 1
			case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
				return i + 2
			}
		}
		return 2
	}
	i := 1
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// cut shortens s to at most max bytes, at a character boundary, ending in
// an ellipsis so that a reader (or a model) knows there was more.
func cut(s string, max int) string {
	const ellipsis = "…"
	if max < len(ellipsis) {
		return ""
	}
	i := max - len(ellipsis)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + ellipsis
}

// shown is how an identifier is named in reports: as it is when it is
// plain, else escaped (\u200b, \x1b, \"), and bounded. Between double
// quotes it reads as a Go string.
func shown(s string) string {
	const max = 128
	q := strconv.QuoteToGraphic(s)
	q = q[1 : len(q)-1]
	if len(q) > max {
		q = cut(q, max)
	}
	return q
}

// checkName says why an identifier cannot be offered, or returns "".
func (l *limits) checkName(name string) string {
	switch {
	case hidden(name):
		return "its name holds control or invisible characters or terminal escapes (a name that looks like another is not offered)"
	case len(name) > l.name:
		return fmt.Sprintf("its name is %d bytes, more than max_name_bytes (%d)", len(name), l.name)
	}
	return ""
}

// edits collects what cleaning changed in one item, field by field.
type edits []string

func (e *edits) add(field string, c change) {
	if !c.none() {
		*e = append(*e, field+" "+c.String())
	}
}

func (e *edits) addSchema(field string, sc schemaChange) {
	if !sc.change.none() {
		*e = append(*e, field+" "+sc.String())
	}
}

func (e edits) note(kind, name string) string {
	return fmt.Sprintf(`%s "%s": %s`, kind, shown(name), strings.Join(e, "; "))
}

// cleanTool returns t with its text cleaned (a copy when anything
// changed), a note saying what changed ("" if nothing), and why it cannot
// be offered ("" if it can).
func (l *limits) cleanTool(t *mcp.Tool) (_ *mcp.Tool, note, refused string) {
	if why := l.checkName(t.Name); why != "" {
		return t, "", why
	}
	title, ct := l.cleanLine(t.Title)
	desc, cd := l.cleanText(t.Description, l.desc)
	ann, ca := t.Annotations, change{}
	if a := t.Annotations; a != nil && a.Title != "" {
		var at string
		if at, ca = l.cleanLine(a.Title); at != a.Title {
			ac := *a
			ac.Title = at
			ann = &ac
		}
	}
	var sc, oc schemaChange
	in := l.cleanSchema(t.InputSchema, 0, &sc)
	outSchema := l.cleanSchema(t.OutputSchema, 0, &oc)
	if title == t.Title && desc == t.Description && ann == t.Annotations && !sc.changed && !oc.changed {
		return t, "", "" // the common case, without allocating
	}
	out := *t
	out.Title, out.Description, out.Annotations, out.InputSchema, out.OutputSchema = title, desc, ann, in, outSchema
	var e edits
	e.add("title", ct)
	e.add("description", cd)
	e.add("annotations.title", ca)
	e.addSchema("input schema", sc)
	e.addSchema("output schema", oc)
	if len(e) == 0 {
		return &out, "", ""
	}
	return &out, e.note("tool", t.Name), ""
}

// schemaChange sums what cleaning did to a schema's annotations.
type schemaChange struct {
	change       // counts summed; from is the number of annotations cut
	changed bool // any string differs
}

func (sc *schemaChange) add(c change, changed bool) {
	sc.escapes += c.escapes
	sc.invisible += c.invisible
	if c.from > 0 {
		sc.from++
	}
	sc.changed = sc.changed || changed
}

// String reports cuts by count: one schema may hold many descriptions.
func (sc schemaChange) String() string {
	c := sc.change
	c.from, c.to = 0, 0
	parts := []string{}
	if sc.from > 0 {
		parts = append(parts, count(sc.from, "annotation")+" cut")
	}
	if s := c.String(); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Keywords whose values are schemas, arrays of schemas and maps of
// schemas, in every draft the schema package accepts. Of the keywords that
// hold data, default and examples are hints, cleaned like annotations;
// enum and const are values the server must get back exactly, kept as
// they are (as names are; an emoji sequence there may need its zero-width
// joiner). Numbers, names and patterns are kept.
var (
	schemaKeywords = map[string]bool{"items": true, "additionalItems": true, "additionalProperties": true,
		"contains": true, "propertyNames": true, "not": true, "if": true, "then": true, "else": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true,
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	schemaMapKeywords = map[string]bool{"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true, "dependencies": true}
)

// maxCleanDepth bounds the walk: the schema package refuses schemas nested
// deeper than 64 levels anyway.
const maxCleanDepth = 64

// cleanSchema returns the schema v (as the go-sdk decodes one:
// map[string]any) with its "title", "description" and "$comment"
// annotations cleaned, copying only the maps and arrays on the way to a
// change.
func (l *limits) cleanSchema(v any, depth int, sc *schemaChange) any {
	m, ok := v.(map[string]any)
	if !ok || depth > maxCleanDepth {
		if a, ok := v.([]any); ok && depth <= maxCleanDepth { // an array of schemas
			var out []any
			for i, e := range a {
				if ne := l.cleanSchema(e, depth+1, sc); !same(ne, e) {
					if out == nil {
						out = slices.Clone(a)
					}
					out[i] = ne
				}
			}
			if out != nil {
				return out
			}
		}
		return v
	}
	var out map[string]any
	set := func(k string, nv any) {
		if out == nil {
			out = maps.Clone(m)
		}
		out[k] = nv
	}
	for k, e := range m {
		switch {
		case k == "title" || k == "description" || k == "$comment":
			s, ok := e.(string)
			if !ok {
				continue
			}
			var ns string
			var c change
			if k == "title" {
				ns, c = l.cleanLine(s)
			} else {
				ns, c = l.cleanText(s, l.desc)
			}
			sc.add(c, ns != s)
			if ns != s {
				set(k, ns)
			}
		case k == "default" || k == "examples":
			if ne := l.cleanData(e, depth+1, sc); !same(ne, e) {
				set(k, ne)
			}
		case schemaKeywords[k]:
			if ne := l.cleanSchema(e, depth+1, sc); !same(ne, e) {
				set(k, ne)
			}
		case schemaMapKeywords[k]:
			sub, ok := e.(map[string]any)
			if !ok {
				continue
			}
			var nsub map[string]any
			for name, se := range sub {
				if ne := l.cleanSchema(se, depth+1, sc); !same(ne, se) {
					if nsub == nil {
						nsub = maps.Clone(sub)
					}
					nsub[name] = ne
				}
			}
			if nsub != nil {
				set(k, nsub)
			}
		}
	}
	if out != nil {
		return out
	}
	return v
}

// cleanData cleans every string in a JSON value, copying only the maps
// and arrays on the way to a change.
func (l *limits) cleanData(v any, depth int, sc *schemaChange) any {
	if depth > maxCleanDepth {
		return v
	}
	switch x := v.(type) {
	case string:
		ns, c := l.cleanText(x, l.desc)
		sc.add(c, ns != x)
		return ns
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if ne := l.cleanData(e, depth+1, sc); !same(ne, e) {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out != nil {
			return out
		}
	case []any:
		var out []any
		for i, e := range x {
			if ne := l.cleanData(e, depth+1, sc); !same(ne, e) {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out != nil {
			return out
		}
	}
	return v
}

// same reports whether cleanSchema returned its argument: maps and slices
// are not comparable, but a changed one is always a new one.
func same(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return true // other scalars are returned as they are
}

// cleanPrompt is cleanTool for a prompt; its arguments' names are
// identifiers too.
func (l *limits) cleanPrompt(p *mcp.Prompt) (_ *mcp.Prompt, note, refused string) {
	if why := l.checkName(p.Name); why != "" {
		return p, "", why
	}
	for _, a := range p.Arguments {
		if a == nil {
			continue
		}
		if why := l.checkName(a.Name); why != "" {
			return p, "", fmt.Sprintf("argument %q: %s", shown(a.Name), why)
		}
	}
	out := *p
	var e edits
	var c change
	out.Title, c = l.cleanLine(p.Title)
	e.add("title", c)
	out.Description, c = l.cleanText(p.Description, l.desc)
	e.add("description", c)
	changed := out.Title != p.Title || out.Description != p.Description
	cloned := false
	for i, a := range p.Arguments {
		if a == nil {
			continue
		}
		title, ct := l.cleanLine(a.Title)
		desc, cd := l.cleanText(a.Description, l.desc)
		if title == a.Title && desc == a.Description {
			continue
		}
		if !cloned {
			out.Arguments = slices.Clone(p.Arguments)
			cloned = true
		}
		changed = true
		na := *a
		na.Title, na.Description = title, desc
		out.Arguments[i] = &na
		e.add(fmt.Sprintf("argument %q title", a.Name), ct)
		e.add(fmt.Sprintf("argument %q description", a.Name), cd)
	}
	if !changed {
		return p, "", ""
	}
	if len(e) == 0 {
		return &out, "", ""
	}
	return &out, e.note("prompt", p.Name), ""
}

// cleanResource cleans a resource; its URI is its identifier. Its name is
// not (resources are read by URI), so it is cleaned like a title.
func (l *limits) cleanResource(r *mcp.Resource) (_ *mcp.Resource, note, refused string) {
	if hidden(r.URI) {
		return r, "", "its URI holds control or invisible characters or terminal escapes"
	}
	out := *r
	e, changed := l.cleanNamed(&out.Name, &out.Title, &out.Description)
	if !changed {
		return r, "", ""
	}
	if len(e) == 0 {
		return &out, "", ""
	}
	return &out, e.note("resource", r.URI), ""
}

// cleanTemplate is cleanResource for a resource template.
func (l *limits) cleanTemplate(t *mcp.ResourceTemplate) (_ *mcp.ResourceTemplate, note, refused string) {
	if hidden(t.URITemplate) {
		return t, "", "its URI template holds control or invisible characters or terminal escapes"
	}
	out := *t
	e, changed := l.cleanNamed(&out.Name, &out.Title, &out.Description)
	if !changed {
		return t, "", ""
	}
	if len(e) == 0 {
		return &out, "", ""
	}
	return &out, e.note("resource template", t.URITemplate), ""
}

// cleanNamed cleans, in place, the name and title (lines) and the
// description of a resource or template, and says what changed.
func (l *limits) cleanNamed(name, title, desc *string) (e edits, changed bool) {
	var c change
	for _, f := range []struct {
		what string
		s    *string
		text bool
	}{{"name", name, false}, {"title", title, false}, {"description", desc, true}} {
		old := *f.s
		if f.text {
			*f.s, c = l.cleanText(old, l.desc)
		} else {
			*f.s, c = l.cleanLine(old)
		}
		e.add(f.what, c)
		changed = changed || *f.s != old
	}
	return e, changed
}

// cleanInit cleans what a server says of itself in initialize: its
// serverInfo and instructions. A websiteUrl that needs cleaning is
// dropped: a cut or altered link is worse than none.
func (l *limits) cleanInit(res *mcp.InitializeResult) (*mcp.InitializeResult, []string) {
	if res == nil {
		return nil, nil
	}
	out := *res
	var notes []string
	var c change
	out.Instructions, c = l.cleanText(res.Instructions, l.desc)
	if !c.none() {
		notes = append(notes, "instructions "+c.String())
	}
	if si := res.ServerInfo; si != nil {
		ni := *si
		var e edits
		ni.Name, c = l.cleanLine(si.Name)
		e.add("name", c)
		ni.Title, c = l.cleanLine(si.Title)
		e.add("title", c)
		ni.Version, c = l.cleanLine(si.Version)
		e.add("version", c)
		ni.Description, c = l.cleanText(si.Description, l.desc)
		e.add("description", c)
		if hidden(si.WebsiteURL) || len(si.WebsiteURL) > l.name {
			ni.WebsiteURL = ""
			e = append(e, "websiteUrl dropped (control or invisible characters, or longer than max_name_bytes)")
		}
		if ni.Name != si.Name || ni.Title != si.Title || ni.Version != si.Version || ni.Description != si.Description || ni.WebsiteURL != si.WebsiteURL {
			out.ServerInfo = &ni
		}
		if len(e) > 0 {
			notes = append(notes, "serverInfo "+strings.Join(e, "; "))
		}
	}
	return &out, notes
}
