package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The schema dialects of Transform.
const (
	DialectOpenAI    = "openai"    // Chat Completions function parameters
	DialectAnthropic = "anthropic" // Messages API input_schema
)

// Bounds of Transform.
const (
	// maxRefRepeat is how many times one $ref may be open on the path from
	// the root: a recursive type unfolds this deep, then is cut to {}.
	maxRefRepeat = 2
	// maxRefExpansions caps all $ref expansions of one schema: refs that fan
	// out (A→B twice, B→C twice, …) would otherwise grow exponentially.
	maxRefExpansions = 1000
)

// Transform rewrites an MCP tool's inputSchema into what a provider's tool
// parameters accept, keeping as much of it as the provider can take. Both
// dialects (DialectOpenAI, DialectAnthropic) get:
//
//   - local $refs ("#/$defs/X", "#/definitions/X", any "#/…" pointer)
//     inlined; a recursive ref unfolds a little, then is cut to the
//     permissive schema {}; remote and unresolvable refs become {};
//   - $schema, $id, $anchor, $defs and definitions removed (after inlining
//     nothing refers to them);
//   - tuple "items": [...] rewritten to prefixItems, as the 2020-12 draft
//     the result is read as says;
//   - at the root: "type": "object" and "properties": {} added when absent
//     (both providers refuse a root without them); oneOf/anyOf at the root
//     merged into one object with the union of the branches' properties
//     (required: those every branch requires), allOf merged with the union of
//     requirements; root enum, const, not and if/then/else dropped.
//
// Transform never drops a tool: what it loosens is still enforced, since the
// host validates every call's arguments against the original schema. An
// empty or null schema is an object taking anything.
func Transform(schema json.RawMessage, dialect string) (json.RawMessage, error) {
	switch dialect {
	case DialectOpenAI, DialectAnthropic:
	default:
		return nil, fmt.Errorf("llm: unknown schema dialect %q", dialect)
	}
	var root any = map[string]any{}
	if s := bytes.TrimSpace(schema); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		d := json.NewDecoder(bytes.NewReader(s))
		d.UseNumber() // keep integers beyond 2^53 exact
		if err := d.Decode(&root); err != nil {
			return nil, fmt.Errorf("llm: tool schema: %w", err)
		}
	}
	t := &transformer{root: root, open: map[string]int{}}
	out := t.walk(root)
	obj := t.rootObject(out)
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("llm: tool schema: %w", err)
	}
	return b, nil
}

type transformer struct {
	root       any
	open       map[string]int // $refs being expanded on the current path
	expansions int
}

// Keywords whose value is a schema, a map of schemas, or an array of schemas.
// Everything else (enum, const, default, examples, required, …) is data and
// is copied as is: a property named "$ref" is not a reference.
var (
	schemaKeywords = map[string]bool{
		"additionalProperties": true, "additionalItems": true, "items": true,
		"contains": true, "not": true, "if": true, "then": true, "else": true,
		"propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true,
		"contentSchema": true,
	}
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "dependentSchemas": true,
		"dependencies": true, "$defs": true, "definitions": true,
	}
	schemaArrayKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true,
	}
	// Keywords that lose their meaning once refs are inlined.
	droppedKeywords = map[string]bool{
		"$schema": true, "$id": true, "$anchor": true, "$dynamicAnchor": true,
		"$dynamicRef": true, "$recursiveRef": true, "$recursiveAnchor": true,
		"$defs": true, "definitions": true,
	}
)

// walk returns a transformed copy of the schema s.
func (t *transformer) walk(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s // true, false, or something that is not a schema: keep
	}
	if ref, ok := m["$ref"].(string); ok {
		return t.ref(ref, m)
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case droppedKeywords[k]:
		case k == "items":
			if arr, ok := v.([]any); ok {
				// Draft ≤ 2019-09 tuple form; 2020-12 calls it prefixItems.
				out["prefixItems"] = t.walkArray(arr)
				if ai, ok := m["additionalItems"]; ok {
					out["items"] = t.walk(ai)
				}
			} else {
				out[k] = t.walk(v)
			}
		case k == "additionalItems":
			if _, tuple := m["items"].([]any); !tuple {
				out[k] = t.walk(v) // meaningless without tuple items, but harmless
			}
		case schemaKeywords[k]:
			out[k] = t.walk(v)
		case schemaMapKeywords[k]:
			mm, ok := v.(map[string]any)
			if !ok {
				out[k] = v
				continue
			}
			nm := make(map[string]any, len(mm))
			for name, sub := range mm {
				if _, isList := sub.([]any); isList && k == "dependencies" {
					nm[name] = sub // draft-04..07 property dependencies: names, not a schema
					continue
				}
				nm[name] = t.walk(sub)
			}
			out[k] = nm
		case schemaArrayKeywords[k]:
			if arr, ok := v.([]any); ok {
				out[k] = t.walkArray(arr)
			} else {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

func (t *transformer) walkArray(arr []any) []any {
	out := make([]any, len(arr))
	for i, v := range arr {
		out[i] = t.walk(v)
	}
	return out
}

// ref inlines the schema m whose "$ref" is ref.
func (t *transformer) ref(ref string, m map[string]any) any {
	target, ok := t.resolve(ref)
	var resolved any = map[string]any{}
	if ok && t.open[ref] < maxRefRepeat && t.expansions < maxRefExpansions {
		t.expansions++
		t.open[ref]++
		resolved = t.walk(target)
		t.open[ref]--
	}
	// Keywords beside $ref (allowed since 2019-09) still apply.
	siblings := map[string]any{}
	for k, v := range m {
		if k != "$ref" {
			siblings[k] = v
		}
	}
	if len(siblings) == 0 {
		return resolved
	}
	sib := t.walk(siblings).(map[string]any)
	rm, ok := resolved.(map[string]any)
	if !ok { // a boolean schema
		if resolved == false {
			return false
		}
		return sib
	}
	merged := make(map[string]any, len(rm)+len(sib))
	for k, v := range rm {
		merged[k] = v
	}
	for k, v := range sib {
		if old, clash := merged[k]; clash && !isAnnotation(k) && !jsonEqual(old, v) {
			return map[string]any{"allOf": []any{rm, sib}}
		}
		merged[k] = v
	}
	return merged
}

func isAnnotation(k string) bool {
	switch k {
	case "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment":
		return true
	}
	return false
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// resolve follows a local ref ("#", "#/a/b") in the root document.
func (t *transformer) resolve(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false // remote, or relative to an $id we do not follow
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" {
		return t.root, true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, false // a plain-name anchor
	}
	cur := t.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// rootObject makes the transformed root an object schema with properties.
func (t *transformer) rootObject(s any) map[string]any {
	m, ok := s.(map[string]any)
	if !ok {
		m = map[string]any{}
		if s == false {
			m["additionalProperties"] = false // a tool that takes no arguments
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		delete(m, "allOf")
		m = mergeAll(m, all)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if branches, ok := m[k].([]any); ok {
			delete(m, k)
			m = mergeUnion(m, branches)
		}
	}
	for _, k := range []string{"enum", "const", "not", "if", "then", "else"} {
		delete(m, k)
	}
	m["type"] = "object"
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

// objectParts returns a branch's properties and required names, looking into
// nested allOf/oneOf/anyOf of objects. ok is false for a branch that cannot
// be an object (a string, a number, false).
func objectParts(s any) (props map[string]any, required []string, ok bool) {
	m, isMap := s.(map[string]any)
	if !isMap {
		return nil, nil, s == true
	}
	if typ, has := m["type"]; has && !typeAllows(typ, "object") {
		return nil, nil, false
	}
	n := m
	if all, has := m["allOf"].([]any); has {
		n = mergeAll(copyMap(m), all)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if branches, has := n[k].([]any); has {
			n = copyMap(n)
			delete(n, k)
			n = mergeUnion(n, branches)
		}
	}
	props, _ = n["properties"].(map[string]any)
	return props, stringList(n["required"]), true
}

func typeAllows(typ any, want string) bool {
	switch t := typ.(type) {
	case string:
		return t == want
	case []any:
		for _, x := range t {
			if x == want {
				return true
			}
		}
	}
	return false
}

func copyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func stringList(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func toAnyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// mergeAll merges allOf branches into base: every branch's properties (a
// property constrained by several branches gets their allOf) and every
// branch's required.
func mergeAll(base map[string]any, branches []any) map[string]any {
	props := map[string]any{}
	if p, ok := base["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	required := stringList(base["required"])
	for _, b := range branches {
		bp, breq, ok := objectParts(b)
		if !ok {
			continue
		}
		for k, v := range bp {
			if old, has := props[k]; has && !jsonEqual(old, v) {
				props[k] = map[string]any{"allOf": []any{old, v}}
			} else {
				props[k] = v
			}
		}
		required = append(required, breq...)
		if bm, ok := b.(map[string]any); ok {
			copyDescription(base, bm)
		}
	}
	base["properties"] = props
	setRequired(base, required)
	return base
}

// mergeUnion merges oneOf/anyOf branches into base: the union of the
// branches' properties (one that differs between branches gets their
// anyOf), required only where every object branch requires it.
func mergeUnion(base map[string]any, branches []any) map[string]any {
	props := map[string]any{}
	if p, ok := base["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	var common []string
	first := true
	variants := map[string][]any{}
	for _, b := range branches {
		bp, breq, ok := objectParts(b)
		if !ok {
			continue
		}
		for k, v := range bp {
			if !slices.ContainsFunc(variants[k], func(x any) bool { return jsonEqual(x, v) }) {
				variants[k] = append(variants[k], v)
			}
		}
		if first {
			common, first = slices.Clone(breq), false
		} else {
			common = slices.DeleteFunc(common, func(r string) bool { return !slices.Contains(breq, r) })
		}
	}
	for k, vs := range variants {
		var merged any = vs[0]
		if len(vs) > 1 {
			merged = map[string]any{"anyOf": vs}
		}
		if old, has := props[k]; has {
			merged = map[string]any{"allOf": []any{old, merged}}
		}
		props[k] = merged
	}
	base["properties"] = props
	setRequired(base, append(stringList(base["required"]), common...))
	return base
}

func copyDescription(dst, src map[string]any) {
	if _, has := dst["description"]; !has {
		if d, ok := src["description"]; ok {
			dst["description"] = d
		}
	}
}

func setRequired(m map[string]any, required []string) {
	slices.Sort(required)
	required = slices.Compact(required)
	if len(required) == 0 {
		delete(m, "required")
		return
	}
	m["required"] = toAnyList(required)
}
