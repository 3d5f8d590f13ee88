package schema

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// inPlace calls f for each subschema that applies to the same value as s
// ($ref, allOf, if/then/else, ...), as opposed to one of its members.
func inPlace(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	each := func(ss ...*jsonschema.Schema) {
		for _, c := range ss {
			if c != nil {
				f(c)
			}
		}
	}
	each(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else)
	if s.DynamicRef != nil {
		each(s.DynamicRef.Ref)
	}
	each(s.AllOf...)
	each(s.AnyOf...)
	each(s.OneOf...)
	for _, c := range s.DependentSchemas {
		each(c)
	}
	for _, c := range s.Dependencies {
		if c, ok := c.(*jsonschema.Schema); ok {
			each(c)
		}
	}
}

// members calls f for each subschema that applies to a member of the value
// s applies to (a property, an item, a property name, decoded content).
func members(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	each := func(ss ...*jsonschema.Schema) {
		for _, c := range ss {
			if c != nil {
				f(c)
			}
		}
	}
	for _, c := range s.Properties {
		each(c)
	}
	for _, c := range s.PatternProperties {
		each(c)
	}
	if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		each(c)
	}
	each(s.UnevaluatedProperties, s.PropertyNames, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	each(s.PrefixItems...)
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		each(it)
	case []*jsonschema.Schema:
		each(it...)
	}
	if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
		each(c)
	}
}

// findCycle returns the location of a schema that reaches itself through
// in-place subschemas alone, or "" if there is none. Such a schema would
// have the validator apply it to the same value forever; the validator
// catches that at run time, but it is a defect of the schema, so it is
// refused once at compile time instead of on every call.
func findCycle(root *jsonschema.Schema) string {
	const (
		unseen = iota
		active // on the current in-place path
		done
	)
	state := map[*jsonschema.Schema]int{}
	var cycle string
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if cycle != "" {
			return
		}
		switch state[s] {
		case active:
			cycle = s.Location
			return
		case done:
			return
		}
		state[s] = active
		inPlace(s, visit)
		state[s] = done
	}
	// Every schema reachable from root, by any edge, starts an in-place walk.
	seen := map[*jsonschema.Schema]bool{}
	queue := []*jsonschema.Schema{root}
	for len(queue) > 0 && cycle == "" {
		s := queue[0]
		queue = queue[1:]
		if seen[s] {
			continue
		}
		seen[s] = true
		visit(s)
		add := func(c *jsonschema.Schema) {
			if !seen[c] {
				queue = append(queue, c)
			}
		}
		inPlace(s, add)
		members(s, add)
	}
	return cycle
}

// caseVariants reports each key of obj, at any depth, that differs only in
// case from a property declared for that object but is not itself declared.
//
// The schemas that apply to a value are found the way the validator finds
// them, through $ref, allOf, anyOf, if/then/else and the like; a property
// declared in any of them counts, whether or not that branch matched. Over-
// approximating only refuses more keys, and a key equal to a declared one
// but for case is a mistake or an attack either way.
func caseVariants(obj map[string]any, root *jsonschema.Schema) []Problem {
	var w caseWalker
	w.value(obj, []*jsonschema.Schema{root})
	return w.problems
}

type caseWalker struct {
	path     []any
	problems []Problem
}

func (w *caseWalker) value(v any, schemas []*jsonschema.Schema) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			return
		}
		all := closure(schemas)
		for key, val := range v {
			w.checkKey(key, all)
			if !isContainer(val) {
				continue
			}
			if next := propSchemas(all, key); len(next) > 0 {
				w.path = append(w.path, key)
				w.value(val, next)
				w.path = w.path[:len(w.path)-1]
			}
		}
	case []any:
		if len(v) == 0 {
			return
		}
		all := closure(schemas)
		for i, val := range v {
			if !isContainer(val) {
				continue
			}
			if next := itemSchemas(all, i); len(next) > 0 {
				w.path = append(w.path, i)
				w.value(val, next)
				w.path = w.path[:len(w.path)-1]
			}
		}
	}
}

func (w *caseWalker) checkKey(key string, all []*jsonschema.Schema) {
	for _, s := range all {
		if _, ok := s.Properties[key]; ok {
			return
		}
	}
	for _, s := range all {
		for name := range s.Properties {
			if strings.EqualFold(name, key) {
				w.path = append(w.path, key)
				w.problems = append(w.problems, Problem{
					Pointer: pointer(w.path),
					Message: fmt.Sprintf("differs only in case from declared property %q", name),
				})
				w.path = w.path[:len(w.path)-1]
				return
			}
		}
	}
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// closure returns schemas and every schema they reach in place, once each.
func closure(schemas []*jsonschema.Schema) []*jsonschema.Schema {
	all := make([]*jsonschema.Schema, 0, len(schemas))
	var add func(s *jsonschema.Schema)
	add = func(s *jsonschema.Schema) {
		for _, t := range all { // closures are small; a map costs more
			if t == s {
				return
			}
		}
		all = append(all, s)
		inPlace(s, add)
	}
	for _, s := range schemas {
		add(s)
	}
	return all
}

// propSchemas returns the schemas that apply to property key of an object
// that the schemas in all apply to.
func propSchemas(all []*jsonschema.Schema, key string) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, s := range all {
		matched := false
		if c, ok := s.Properties[key]; ok {
			out = append(out, c)
			matched = true
		}
		for re, c := range s.PatternProperties {
			if re.MatchString(key) {
				out = append(out, c)
				matched = true
			}
		}
		if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
			out = append(out, c)
		}
		if s.UnevaluatedProperties != nil {
			out = append(out, s.UnevaluatedProperties)
		}
	}
	return out
}

// itemSchemas returns the schemas that apply to item i of an array that
// the schemas in all apply to.
func itemSchemas(all []*jsonschema.Schema, i int) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c *jsonschema.Schema) {
		if c != nil {
			out = append(out, c)
		}
	}
	for _, s := range all {
		if i < len(s.PrefixItems) {
			add(s.PrefixItems[i])
		} else {
			add(s.Items2020)
		}
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			add(it)
		case []*jsonschema.Schema:
			if i < len(it) {
				add(it[i])
			} else if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				add(c)
			}
		}
		add(s.Contains)
		add(s.UnevaluatedItems)
	}
	return out
}
