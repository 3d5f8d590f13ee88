// Package schema compiles MCP tool input schemas and validates call
// arguments against them before any call reaches a server.
//
// A host compiles each tool's inputSchema once, when it discovers the tool,
// and validates the arguments of every tools/call against it:
//
//	s, err := schema.Compile(tool.InputSchema) // at discovery
//	args, err := s.Validate(params.Arguments)  // on every call
//	// forward args, never params.Arguments
//
// # Compiling
//
// [Compile] accepts JSON Schema drafts 4, 6, 7, 2019-09 and 2020-12, chosen
// by "$schema" (2020-12 when absent). References must stay inside the
// schema: "#/$defs/x", "#/definitions/x", "$anchor" names and refs relative
// to an embedded "$id" work; a $ref (or $schema) naming another document,
// whether http(s), file or relative, is refused rather than fetched, so a
// tool cannot make the host reach out to the network or read its disk. A
// $ref cycle that never descends into the arguments (such as {"$ref":"#"})
// is refused, as are schemas over 1 MiB or nested deeper than 64 levels.
// Patterns ("pattern", "patternProperties", "format": "regex") are
// ECMA-262 regular expressions, as JSON Schema defines them: lookahead,
// lookbehind and backreferences work (a pattern only Go's RE2 accepts
// keeps RE2). Each match is bounded in time (100 ms): a pattern that
// backtracks catastrophically refuses the call with an error naming it,
// instead of hanging it.
//
// # Validating
//
// [Schema.Validate] decodes the arguments itself and refuses input that
// different JSON decoders read differently, because the server that
// eventually runs the tool may not decode it the way the host did:
//
//   - a duplicate key at any depth ({"a":1,"a":2}): Go keeps the last
//     value, other decoders keep the first;
//   - a key that differs only in case from a property the schema declares
//     at that level (PATH where the schema says path): a Go server decoding
//     into a struct matches field names case-insensitively and would read
//     the unvalidated PATH as path;
//   - invalid UTF-8 or an unpaired UTF-16 surrogate escape, which decoders
//     variously reject, replace or pass through;
//   - anything after the arguments object.
//
// Numbers are kept as [json.Number], so 9223372036854775807 reaches the
// server digit for digit. A number no server can read as one is refused at
// its pointer: one beyond a 64-bit float's range (1e400), anywhere, and an
// integer beyond int64's (9223372036854775808, 1e19) where the schema
// wants an integer; where it says "number", or nothing, such an integer is
// kept. Validate returns the decoded value; callers must
// forward that value (re-encoded), not the bytes they received. The value
// is exactly what was validated, and re-encoding it yields one canonical
// reading of the arguments, so no server can find in the bytes it receives
// a meaning the validator did not see.
//
// Every error Validate returns is a [*ValidationError] listing each problem
// with the JSON Pointer of the offending value. Messages never quote a
// string argument (a pattern failure names the pattern, not the string),
// so a secret passed in an argument does not reach a log through an error.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Bounds on what Compile accepts. Tool schemas are written by servers the
// host does not control; these keep one of them from exhausting the
// compiler's stack or the host's memory.
const (
	maxSchemaSize  = 1 << 20 // 1 MiB; real tool schemas are a few KiB
	maxSchemaDepth = 64      // nesting of objects and arrays in the schema document
)

// maxArgsDepth bounds the nesting of call arguments. Decoding and
// validation both recurse once per level; real arguments nest a handful of
// levels deep.
const maxArgsDepth = 256

// baseURL names the schema document inside the compiler. Its scheme is one
// no loader serves, so a relative $ref to another document resolves to a
// URL the refusing loader sees, rather than silently back to this one.
const baseURL = "mem:///input-schema.json"

// A Schema is a compiled tool input schema. It is safe for concurrent use.
type Schema struct {
	raw json.RawMessage
	sch *jsonschema.Schema
}

// A CompileError reports why a tool's input schema cannot be used.
type CompileError struct {
	Reason string // short, human-readable
	Err    error  // underlying error, if any
}

func (e *CompileError) Error() string { return "invalid input schema: " + e.Reason }

// Unwrap returns the underlying error, which may be nil.
func (e *CompileError) Unwrap() error { return e.Err }

func compileErr(err error, format string, args ...any) *CompileError {
	return &CompileError{Reason: fmt.Sprintf(format, args...), Err: err}
}

// Compile compiles a tool's inputSchema. An absent schema (nil, empty or
// null) and {} accept any arguments object. The schema must be a JSON
// object; when it has a "type", that type must include "object", since MCP
// tool arguments are always an object. All errors are [*CompileError].
func Compile(raw json.RawMessage) (_ *Schema, err error) {
	// Compiling matches the schema against its metaschema, whose patterns
	// go through the same bounded engine.
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*patternError)
			if !ok {
				panic(r)
			}
			p := pe.problem(nil)
			err = compileErr(pe.err, "%s", p.Message)
		}
	}()
	s := &Schema{raw: slices.Clone(raw)}
	var doc any
	if isAbsent(raw) {
		doc = map[string]any{}
	} else {
		if len(raw) > maxSchemaSize {
			return nil, compileErr(nil, "schema is %d bytes, more than the %d allowed", len(raw), maxSchemaSize)
		}
		v, problems, err := decode(raw, maxSchemaDepth)
		if err != nil {
			return nil, compileErr(err, "%v", err)
		}
		if len(problems) > 0 {
			return nil, compileErr(nil, "%s", problems[0])
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, compileErr(nil, "schema must be a JSON object, got %s", jsonType(v))
		}
		doc = obj
	}
	draft, err := draftOf(doc.(map[string]any))
	if err != nil {
		return nil, err
	}

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	c.UseRegexpEngine(compileRegexp)
	if err := c.AddResource(baseURL, doc); err != nil {
		return nil, compileErr(err, "%s", trimBase(err.Error()))
	}
	sch, err := c.Compile(baseURL)
	if err != nil {
		return nil, compileErr(err, "%s", compileReason(err, draft))
	}
	if sch.Types != nil && !sch.Types.IsEmpty() && !slices.Contains(sch.Types.ToStrings(), "object") {
		return nil, compileErr(nil, `type must be "object", got %q`, strings.Join(sch.Types.ToStrings(), ", "))
	}
	if loc := findCycle(sch); loc != "" {
		return nil, compileErr(nil, "$ref cycle at %q: it refers back to itself without descending into the arguments", trimBase(loc))
	}
	s.sch = sch
	return s, nil
}

// Raw returns the schema as it was given to Compile.
func (s *Schema) Raw() json.RawMessage { return slices.Clone(s.raw) }

// Validate decodes args, checks them against the schema and returns the
// decoded value, which is what the caller must forward to the server. Nil,
// empty or null args mean {}. Every error is a [*ValidationError].
func (s *Schema) Validate(args json.RawMessage) (_ map[string]any, err error) {
	// Arguments come from models and remote clients: whatever they hold,
	// a failure inside the validator is a refusal, never a crash of the
	// host.
	var obj map[string]any
	defer func() {
		if r := recover(); r != nil {
			if pe, ok := r.(*patternError); ok {
				err = newValidationError([]Problem{pe.problem(obj)})
				return
			}
			err = newValidationError([]Problem{{Message: fmt.Sprintf("the validator could not check these arguments (%v)", r)}})
		}
	}()
	var wide []wideInt
	if isAbsent(args) {
		obj = map[string]any{}
	} else {
		v, problems, w, err := decodeArgs(args)
		if err != nil {
			return nil, newValidationError([]Problem{{Message: err.Error()}})
		}
		var ok bool
		if obj, ok = v.(map[string]any); !ok {
			return nil, newValidationError([]Problem{{Message: "arguments must be a JSON object, got " + jsonType(v)}})
		}
		problems = append(problems, caseVariants(obj, s.sch)...)
		if len(problems) > 0 {
			return nil, newValidationError(problems)
		}
		wide = w
	}
	if err := s.sch.Validate(obj); err != nil {
		// Models (and some clients) send null for an optional argument
		// they mean to leave out. When the schema refuses the null but
		// would take the call without it, the argument is dropped: the
		// value forwarded is the one that validated.
		if stripped, ok := s.withoutOptionalNulls(obj); ok && s.sch.Validate(stripped) == nil {
			if problems := s.integerProblems(stripped, wide); len(problems) > 0 {
				return nil, newValidationError(problems)
			}
			return stripped, nil
		}
		var verr *jsonschema.ValidationError
		if !errors.As(err, &verr) {
			// Validate documents no other error; keep the reason anyway.
			return nil, newValidationError([]Problem{{Message: err.Error()}})
		}
		return nil, newValidationError(leafProblems(verr, nil))
	}
	if problems := s.integerProblems(obj, wide); len(problems) > 0 {
		return nil, newValidationError(problems)
	}
	return obj, nil
}

// integerProblems returns a problem for each integer beyond int64 in v
// (which validated) that the schema holds to be an integer. The validator
// does not say which values it checked as integers, so each is tried again
// as itself plus one half, which only its integrality tells apart (a bound
// or an enum exactly at the value would too; such a schema is refused the
// same way): if v is then refused, the schema wanted an integer there, and
// no server reading 64-bit integers can take it. Where the schema says
// "number", or nothing, the value is kept as it is. Beyond-int64 integers
// are rare, so the common call pays nothing.
func (s *Schema) integerProblems(v map[string]any, wide []wideInt) []Problem {
	var out []Problem
	for _, w := range wide {
		if s.sch.Validate(substitute(v, w.path, w.half)) != nil {
			out = append(out, Problem{Pointer: pointer(w.path), Message: wideIntMessage(w.n)})
		}
	}
	return out
}

// substitute returns v with the value at path replaced by repl, copying
// only the containers on the way.
func substitute(v any, path []any, repl any) any {
	if len(path) == 0 {
		return repl
	}
	switch c := v.(type) {
	case map[string]any:
		if k, ok := path[0].(string); ok {
			m := maps.Clone(c)
			m[k] = substitute(c[k], path[1:], repl)
			return m
		}
	case []any:
		if i, ok := path[0].(int); ok && i < len(c) {
			a := slices.Clone(c)
			a[i] = substitute(c[i], path[1:], repl)
			return a
		}
	}
	return v
}

// withoutOptionalNulls returns obj without its top-level null values for
// properties the schema does not require; ok reports whether any was dropped.
func (s *Schema) withoutOptionalNulls(obj map[string]any) (map[string]any, bool) {
	var out map[string]any
	for k, v := range obj {
		if v != nil || slices.Contains(s.sch.Required, k) {
			continue
		}
		if out == nil {
			out = maps.Clone(obj)
		}
		delete(out, k)
	}
	return out, out != nil
}

func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// draftOf reports the draft doc asks for, refusing a $schema that names
// anything else: the compiler would try to load it as a metaschema.
func draftOf(doc map[string]any) (string, error) {
	v, ok := doc["$schema"]
	if !ok {
		return "2020-12", nil
	}
	u, ok := v.(string)
	if !ok {
		return "", compileErr(nil, "$schema must be a string")
	}
	key := strings.TrimSuffix(u, "#")
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	switch key {
	case "json-schema.org/draft-04/schema":
		return "draft-04", nil
	case "json-schema.org/draft-06/schema":
		return "draft-06", nil
	case "json-schema.org/draft-07/schema":
		return "draft-07", nil
	case "json-schema.org/draft/2019-09/schema":
		return "2019-09", nil
	case "json-schema.org/draft/2020-12/schema":
		return "2020-12", nil
	}
	return "", compileErr(nil, "unsupported $schema %q: want draft-04, -06, -07, 2019-09 or 2020-12", u)
}

// refusingLoader is the compiler's only way to fetch a document, and it
// fetches none: a tool schema must be self-contained.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, &refusedRefError{url: url}
}

type refusedRefError struct{ url string }

func (e *refusedRefError) Error() string {
	switch {
	case strings.HasPrefix(e.url, "http://"), strings.HasPrefix(e.url, "https://"):
		return fmt.Sprintf("remote $ref %s is not allowed", e.url)
	case strings.HasPrefix(e.url, "file:"):
		return fmt.Sprintf("file $ref %s is not allowed", e.url)
	case strings.HasPrefix(e.url, "mem:///"):
		return fmt.Sprintf("$ref to another document %q is not allowed; refer within the schema (#/$defs/...)", strings.TrimPrefix(e.url, "mem:///"))
	}
	return fmt.Sprintf("$ref %s is not allowed; refer within the schema (#/$defs/...)", e.url)
}

// compileReason turns a compiler error into one short line.
func compileReason(err error, draft string) string {
	// LoadURLError has no Unwrap method, so look inside it by hand.
	var lerr *jsonschema.LoadURLError
	if errors.As(err, &lerr) {
		var refused *refusedRefError
		if errors.As(lerr.Err, &refused) {
			return refused.Error()
		}
	}
	var sverr *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &sverr) && errors.As(sverr.Err, &verr) {
		e := newValidationError(leafProblems(verr, nil))
		return fmt.Sprintf("not a valid %s schema: %s", draft, e.list())
	}
	return trimBase(err.Error())
}

// trimBase removes the compiler's internal document name from a message,
// leaving schema-relative locations like "#/$defs/a".
func trimBase(s string) string {
	return baseTrimmer.Replace(s)
}

var baseTrimmer = strings.NewReplacer(
	`schema "`+baseURL+`"`, "the schema",
	`"`+baseURL+`"`, "the schema",
	baseURL, "",
)

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
