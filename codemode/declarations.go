package codemode

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Header is the text [Declarations] starts with: the convention a model
// writes its program to.
const Header = `// Write the body of an async JavaScript function: use await freely and
// "return" a JSON-serialisable value; it is the result of the run.
// Each tool is an async function of one argument object:
//   const r = await tools.<namespace>.<function>({ ... });
// It resolves to the tool's structured content when it has some, else to
// its text. A tool error is thrown as an Error with the tool's text.
// console.log/info/warn/error are returned with the result.
// There is no filesystem, network, timers, require/import, eval or Function.
type ToolResult = any;
`

// maxSchemaDepth bounds how deep a schema is rendered: a declaration is
// for a model to read, and a deeper schema reads as unknown there.
const maxSchemaDepth = 8

// Declarations renders tools as a TypeScript declaration of the global
// tools object, preceded by [Header]:
//
//	declare const tools: {
//	  github: {
//	    /** Search issues. */
//	    search_issues(args: { q: string; limit?: number }): Promise<ToolResult>;
//	  };
//	};
//
// Argument types come from each tool's JSON Schema: objects (required and
// optional properties, property descriptions as comments,
// additionalProperties as Record), arrays, enum and const as literal
// unions, anyOf/oneOf as unions, a list of types as a union; what cannot
// be read ($ref, a schema deeper than 8, a malformed one) is unknown.
// Namespaces and functions are made identifiers with [Identifier] and
// sorted; when two tools map to the same function, the first is kept
// ([Run] refuses such a list).
func Declarations(tools []Tool) string {
	byNS := map[string][]Tool{}
	seen := map[string]bool{}
	for _, t := range tools {
		ns, fn := Identifier(t.Namespace), Identifier(t.Function)
		if seen[ns+"."+fn] {
			continue
		}
		seen[ns+"."+fn] = true
		byNS[ns] = append(byNS[ns], t)
	}
	names := make([]string, 0, len(byNS))
	for ns := range byNS {
		names = append(names, ns)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(Header)
	b.WriteString("declare const tools: {\n")
	for _, ns := range names {
		b.WriteString("  " + ns + ": {\n")
		list := byNS[ns]
		slices.SortFunc(list, func(a, c Tool) int { return strings.Compare(Identifier(a.Function), Identifier(c.Function)) })
		for _, t := range list {
			writeComment(&b, "    ", t.Description)
			b.WriteString("    " + Identifier(t.Function) + "(args: " + argType(t, "    ") + "): Promise<ToolResult>;\n")
		}
		b.WriteString("  };\n")
	}
	b.WriteString("};\n")
	return b.String()
}

// Signature is one tool's call as a program writes it, typed as
// [Declarations] types it: "tools.github.search_issues(args: { q: string;
// limit?: number }): Promise<ToolResult>", on one line or more.
func Signature(t Tool) string {
	return "tools." + Identifier(t.Namespace) + "." + Identifier(t.Function) + "(args: " + argType(t, "") + "): Promise<ToolResult>"
}

// argType is t's argument object's type, from its input schema.
func argType(t Tool, indent string) string {
	var schema any
	if len(t.InputSchema) > 0 && json.Unmarshal(t.InputSchema, &schema) != nil {
		schema = nil
	}
	if schema == nil {
		return "{}"
	}
	return tsType(schema, indent, 0)
}

func writeComment(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "* /"))
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		b.WriteString(indent + "/** " + lines[0] + " */\n")
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(indent + " * " + strings.TrimRight(l, " \t\r") + "\n")
	}
	b.WriteString(indent + " */\n")
}

// tsType renders one schema; indent is the indentation of the line the
// type starts on.
func tsType(s any, indent string, depth int) string {
	if depth > maxSchemaDepth {
		return "unknown"
	}
	m, ok := s.(map[string]any)
	if !ok {
		return "unknown" // true, false or malformed
	}
	if c, ok := m["const"]; ok {
		return literal(c)
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		parts := make([]string, len(e))
		for i, v := range e {
			parts[i] = literal(v)
		}
		return strings.Join(parts, " | ")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			return union(alts, indent, depth)
		}
	}
	switch t := m["type"].(type) {
	case string:
		return typeNamed(t, m, indent, depth)
	case []any:
		parts := make([]string, 0, len(t))
		for _, v := range t {
			if name, ok := v.(string); ok {
				parts = append(parts, typeNamed(name, m, indent, depth))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " | ")
		}
	}
	if _, ok := m["properties"]; ok {
		return typeNamed("object", m, indent, depth)
	}
	if _, ok := m["items"]; ok {
		return typeNamed("array", m, indent, depth)
	}
	return "unknown"
}

func union(alts []any, indent string, depth int) string {
	parts := make([]string, 0, len(alts))
	for _, a := range alts {
		p := tsType(a, indent, depth+1)
		if strings.Contains(p, " | ") && strings.HasSuffix(p, "]") {
			p = "(" + p + ")"
		}
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " | ")
}

func typeNamed(t string, m map[string]any, indent string, depth int) string {
	switch t {
	case "string", "boolean", "null":
		return t
	case "number", "integer":
		return "number"
	case "array":
		item := "unknown"
		if it, ok := m["items"]; ok {
			item = tsType(it, indent, depth+1)
		}
		if strings.ContainsAny(item, "|&") && !strings.HasPrefix(item, "{") {
			item = "(" + item + ")"
		}
		return item + "[]"
	case "object":
		return objectType(m, indent, depth)
	}
	return "unknown"
}

func objectType(m map[string]any, indent string, depth int) string {
	props, _ := m["properties"].(map[string]any)
	if len(props) == 0 {
		if ap, ok := m["additionalProperties"]; ok {
			if ap == false {
				return "{}"
			}
			return "Record<string, " + tsType(ap, indent, depth+1) + ">"
		}
		return "Record<string, unknown>"
	}
	required := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, v := range r {
			if s, ok := v.(string); ok {
				required[s] = true
			}
		}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// A small object without comments stays on one line.
	inline := len(keys) <= 4
	for _, k := range keys {
		if p, ok := props[k].(map[string]any); ok {
			if d, _ := p["description"].(string); d != "" {
				inline = false
			}
		}
	}
	var fields []string
	inner := indent + "  "
	for _, k := range keys {
		name := k
		if !isIdentifier(k) {
			q, _ := json.Marshal(k)
			name = string(q)
		}
		if !required[k] {
			name += "?"
		}
		f := inner
		if p, ok := props[k].(map[string]any); ok && !inline {
			if d, _ := p["description"].(string); d != "" {
				var b strings.Builder
				writeComment(&b, inner, d)
				f = b.String() + inner
			}
		}
		var ty string
		if inline {
			ty = tsType(props[k], indent, depth+1)
		} else {
			ty = tsType(props[k], inner, depth+1)
		}
		fields = append(fields, f+name+": "+ty)
	}
	if inline {
		for i, f := range fields {
			fields[i] = strings.TrimPrefix(f, inner)
		}
		return "{ " + strings.Join(fields, "; ") + " }"
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, f := range fields {
		b.WriteString(f + ";\n")
	}
	b.WriteString(indent + "}")
	return b.String()
}

func literal(v any) string {
	j, err := json.Marshal(v)
	if err != nil {
		return "unknown"
	}
	return string(j)
}

var identRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`) })

func isIdentifier(s string) bool { return identRE().MatchString(s) }

// Identifier makes s a JavaScript identifier: every character other than
// an ASCII letter, digit, _ or $ becomes _, a leading digit gets a leading
// _, and "" becomes "_". (Reserved words are kept: they are valid property
// names, so tools.files.delete(...) works.) Different names can map to
// the same identifier ("a-b" and "a.b" both give "a_b"): [Run] refuses a
// tool list where two tools do.
func Identifier(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '$':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || (out[0] >= '0' && out[0] <= '9') {
		out = "_" + out
	}
	return out
}
