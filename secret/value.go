package secret

import (
	"encoding/json"
	"reflect"
	"slices"
	"sync"
)

// RedactValue returns v with every registered value redacted from every
// string and byte slice reachable from it: exported struct fields, map keys
// and values, slice, array and pointer elements, and values held in
// interfaces, recursively. A json.RawMessage is redacted as JSON (its
// strings and keys), so that it stays valid.
//
// v itself is never modified. Where nothing needed redacting the result is
// v, shares all of v's memory and costs no allocation; otherwise the
// containers on the path to each redacted string are copied (copy on
// write) and the rest is shared. So a value that other goroutines read
// (a cached tool list, a registered tool) can be redacted without a data
// race, and the common case, output with no secret in it, stays cheap.
//
// Unexported fields are copied as they are, not inspected: they are not
// marshalled, so they do not leave the process. RedactValue is meant for
// values about to be written out as JSON, such as MCP results and
// notifications. A nil Redactor redacts nothing.
func RedactValue[T any](r *Redactor, v T) T {
	if r == nil {
		return v
	}
	set := r.set.Load()
	if len(set.values) == 0 {
		return v
	}
	if out, ok := redactAny(set, v); ok {
		return out.(T)
	}
	return v
}

// redactAny is RedactValue's walk, apart so that v escapes to the heap only
// when a secret is registered.
func redactAny(set *valueSet, v any) (any, bool) {
	w := valueWalker{set: set}
	w.path = w.buf[:0]
	nv, changed := w.walk(reflect.ValueOf(v))
	if !changed {
		return nil, false
	}
	return nv.Interface(), true
}

// valueWalker walks a value for RedactValue.
type valueWalker struct {
	set *valueSet
	// path holds the pointers and maps on the path being walked, so that a
	// cycle ends the walk instead of recursing forever. Values that came
	// off the wire are shallow trees: a linear search of a short slice
	// beats a map, and buf keeps it off the heap.
	path  []uintptr
	buf   [16]uintptr
	depth int
}

// maxValueDepth bounds the recursion. JSON decoded by encoding/json is at
// most 10,000 levels deep; a deeper value cannot have come off the wire.
const maxValueDepth = 10000

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	anyType        = reflect.TypeFor[any]()
	mapAnyType     = reflect.TypeFor[map[string]any]()
)

// walk returns a redacted copy of v, of v's type, and true, when anything in
// v needed redacting; otherwise an invalid Value and false.
func (w *valueWalker) walk(v reflect.Value) (reflect.Value, bool) {
	if w.depth >= maxValueDepth {
		return reflect.Value{}, false
	}
	w.depth++
	nv, changed := w.walkKind(v)
	w.depth--
	return nv, changed
}

func (w *valueWalker) walkKind(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if out := w.redact(s); out != s {
			nv := reflect.New(v.Type()).Elem()
			nv.SetString(out)
			return nv, true
		}
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Value{}, false
		}
		if v.Type() == rawMessageType {
			return w.rawMessage(v)
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s := string(v.Bytes())
			if out := w.redact(s); out != s {
				nv := reflect.MakeSlice(v.Type(), len(out), len(out))
				reflect.Copy(nv, reflect.ValueOf([]byte(out)))
				return nv, true
			}
			return reflect.Value{}, false
		}
		var out reflect.Value
		for i := range v.Len() {
			if nv, ok := w.walk(v.Index(i)); ok {
				if !out.IsValid() {
					out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
					reflect.Copy(out, v)
				}
				out.Index(i).Set(nv)
			}
		}
		return out, out.IsValid()
	case reflect.Array:
		var out reflect.Value
		for i := range v.Len() {
			if nv, ok := w.walk(v.Index(i)); ok {
				if !out.IsValid() {
					out = reflect.New(v.Type()).Elem()
					out.Set(v)
				}
				out.Index(i).Set(nv)
			}
		}
		return out, out.IsValid()
	case reflect.Map:
		if v.IsNil() || !w.enter(v.Pointer()) {
			return reflect.Value{}, false
		}
		defer w.leave(v.Pointer())
		if v.Type().Key().Kind() == reflect.String && v.Type().Elem() == anyType {
			return w.jsonObject(v)
		}
		type entry struct{ k, v reflect.Value }
		var changed []entry
		var dropped []reflect.Value
		var iter reflect.MapIter
		iter.Reset(v)
		for iter.Next() {
			k, val := iter.Key(), iter.Value()
			nk, kok := w.walk(k)
			nval, vok := w.walk(val)
			if !kok && !vok {
				continue
			}
			if kok {
				dropped = append(dropped, k)
			} else {
				nk = k
			}
			if !vok {
				nval = val
			}
			changed = append(changed, entry{nk, nval})
		}
		if len(changed) == 0 {
			return reflect.Value{}, false
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter.Reset(v)
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		for _, k := range dropped {
			out.SetMapIndex(k, reflect.Value{})
		}
		for _, e := range changed {
			out.SetMapIndex(e.k, e.v)
		}
		return out, true
	case reflect.Pointer:
		if v.IsNil() || !w.enter(v.Pointer()) {
			return reflect.Value{}, false
		}
		defer w.leave(v.Pointer())
		if nv, ok := w.walk(v.Elem()); ok {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(nv)
			return p, true
		}
	case reflect.Interface:
		if v.IsNil() {
			return reflect.Value{}, false
		}
		if nv, ok := w.walk(v.Elem()); ok {
			out := reflect.New(v.Type()).Elem()
			out.Set(nv)
			return out, true
		}
	case reflect.Struct:
		var out reflect.Value
		t := v.Type()
		for _, i := range fieldsOf(t) {
			if nv, ok := w.walk(v.Field(i)); ok {
				if !out.IsValid() {
					out = reflect.New(t).Elem()
					out.Set(v)
				}
				out.Field(i).Set(nv)
			}
		}
		return out, out.IsValid()
	}
	return reflect.Value{}, false
}

// jsonObject walks a map from strings to any (a decoded JSON object, MCP's
// _meta), natively: reflect's map iterator allocates a copy of every key
// and value it hands out.
func (w *valueWalker) jsonObject(v reflect.Value) (reflect.Value, bool) {
	m := v.Convert(mapAnyType).Interface().(map[string]any)
	var out map[string]any
	for k, val := range m {
		nk := w.redact(k)
		nv, ok := w.walk(reflect.ValueOf(val))
		if nk == k && !ok {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
			for k, val := range m {
				out[k] = val
			}
		}
		if nk != k {
			delete(out, k)
		}
		if ok {
			out[nk] = nv.Interface()
		} else {
			out[nk] = val
		}
	}
	if out == nil {
		return reflect.Value{}, false
	}
	return reflect.ValueOf(out).Convert(v.Type()), true
}

func (w *valueWalker) redact(s string) string {
	runs := w.set.runs(s)
	if len(runs) == 0 {
		return s
	}
	return replaceRuns(s, runs)
}

// rawMessage redacts the strings of a JSON value. A value that is not
// valid JSON is redacted as text.
func (w *valueWalker) rawMessage(v reflect.Value) (reflect.Value, bool) {
	raw := v.Bytes()
	if len(w.set.runs(string(raw))) == 0 {
		return reflect.Value{}, false
	}
	var decoded any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		out := w.redact(string(raw))
		return reflect.ValueOf(json.RawMessage(out)), true
	}
	nv, ok := w.walk(reflect.ValueOf(&decoded).Elem())
	if !ok {
		// The match was in the text's escapes or between tokens, not in a
		// decoded string: the value holds no secret once decoded, but its
		// text does. Re-encode it, which drops the escapes' spelling.
		nv = reflect.ValueOf(&decoded).Elem()
	}
	b, err := json.Marshal(nv.Interface())
	if err != nil || len(w.set.runs(string(b))) > 0 {
		return reflect.ValueOf(json.RawMessage(`"` + Redacted + `"`)), true
	}
	return reflect.ValueOf(json.RawMessage(b)), true
}

// fields caches, per struct type, the indexes of the exported fields that
// can hold a string.
var fields sync.Map // reflect.Type -> []int

func fieldsOf(t reflect.Type) []int {
	if f, ok := fields.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && mayHoldString(f.Type, nil) {
			idx = append(idx, i)
		}
	}
	fields.Store(t, idx)
	return idx
}

// mayHoldString reports whether a value of type t can reach a string or a
// byte slice.
func mayHoldString(t reflect.Type, seen []reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Interface, reflect.Map:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8 || mayHoldString(t.Elem(), seen)
	case reflect.Array, reflect.Pointer:
		return mayHoldString(t.Elem(), seen)
	case reflect.Struct:
		if slices.Contains(seen, t) {
			return false // the cycle adds nothing the other fields lack
		}
		seen = append(seen, t)
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldString(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

func (w *valueWalker) enter(p uintptr) bool {
	if slices.Contains(w.path, p) {
		return false
	}
	w.path = append(w.path, p)
	return true
}

func (w *valueWalker) leave(uintptr) { w.path = w.path[:len(w.path)-1] }
