package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func mustCompile(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Compile(%q) = %v", raw, err)
	}
	return s
}

// problems returns the problems of a *ValidationError, failing on any
// other non-nil error.
func problems(t *testing.T, err error) []Problem {
	t.Helper()
	if err == nil {
		return nil
	}
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	return verr.Problems
}

func TestDrafts(t *testing.T) {
	const (
		draft04 = `"$schema": "http://json-schema.org/draft-04/schema#",`
		draft06 = `"$schema": "http://json-schema.org/draft-06/schema#",`
		draft07 = `"$schema": "http://json-schema.org/draft-07/schema#",`
		draft19 = `"$schema": "https://json-schema.org/draft/2019-09/schema",`
		draft20 = `"$schema": "https://json-schema.org/draft/2020-12/schema",`
	)
	tests := []struct {
		name   string
		schema string
		args   string
		want   []Problem
	}{
		// prefixItems exists only from 2020-12 on, so it tells the drafts apart.
		{"default is 2020-12", `{"properties": {"a": {"prefixItems": [{"type": "string"}]}}}`, `{"a": [1]}`,
			[]Problem{{"/a/0", "got number, want string"}}},
		{"explicit 2020-12", `{` + draft20 + `"properties": {"a": {"prefixItems": [{"type": "string"}]}}}`, `{"a": [1]}`,
			[]Problem{{"/a/0", "got number, want string"}}},
		{"draft-07 ignores prefixItems", `{` + draft07 + `"properties": {"a": {"prefixItems": [{"type": "string"}]}}}`, `{"a": [1]}`, nil},
		{"draft-07 items array", `{` + draft07 + `"properties": {"a": {"items": [{"type": "string"}]}}}`, `{"a": [1]}`,
			[]Problem{{"/a/0", "got number, want string"}}},
		{"draft-04 boolean exclusiveMaximum fails at the bound", `{` + draft04 + `"properties": {"n": {"maximum": 10, "exclusiveMaximum": true}}}`, `{"n": 10}`,
			[]Problem{{"/n", "exclusiveMaximum: got 10, want 10"}}},
		{"draft-04 boolean exclusiveMaximum passes below", `{` + draft04 + `"properties": {"n": {"maximum": 10, "exclusiveMaximum": true}}}`, `{"n": 9}`, nil},
		{"draft-04 definitions", `{` + draft04 + `"properties": {"a": {"$ref": "#/definitions/s"}}, "definitions": {"s": {"type": "string"}}}`, `{"a": 1}`,
			[]Problem{{"/a", "got number, want string"}}},
		{"draft-06 numeric exclusiveMaximum", `{` + draft06 + `"properties": {"n": {"exclusiveMaximum": 10}}}`, `{"n": 10}`,
			[]Problem{{"/n", "exclusiveMaximum: got 10, want 10"}}},
		{"2019-09 dependentRequired", `{` + draft19 + `"dependentRequired": {"a": ["b"]}}`, `{"a": 1}`,
			[]Problem{{"", "properties 'b' required, if 'a' exists"}}},
		{"draft-07 ignores dependentRequired", `{` + draft07 + `"dependentRequired": {"a": ["b"]}}`, `{"a": 1}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			_, err := s.Validate(json.RawMessage(tt.args))
			if diff := cmp.Diff(tt.want, problems(t, err)); diff != "" {
				t.Errorf("Validate(%q) problems (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestCompileOK(t *testing.T) {
	tests := []struct {
		name, schema, args string
		wantErr            bool
	}{
		{"nil", "", `{"anything": [1, {"x": null}]}`, false},
		{"null", "null", `{"a": 1}`, false},
		{"empty object", "{}", `{"a": 1}`, false},
		{"type object", `{"type": "object"}`, `{}`, false},
		{"type includes object", `{"type": ["object", "null"]}`, `{}`, false},
		{"$defs", `{"$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s"}}}`, `{"a": 1}`, true},
		{"definitions in 2020-12", `{"definitions": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/definitions/s"}}}`, `{"a": 1}`, true},
		{"$anchor", `{"$defs": {"s": {"$anchor": "str", "type": "string"}}, "properties": {"a": {"$ref": "#str"}}}`, `{"a": 1}`, true},
		{"ref relative to $id", `{"$id": "https://example.com/tool.json", "$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "tool.json#/$defs/s"}}}`, `{"a": 1}`, true},
		{"embedded $id resource", `{"$defs": {"s": {"$id": "https://example.com/s.json", "type": "string"}}, "properties": {"a": {"$ref": "https://example.com/s.json"}}}`, `{"a": 1}`, true},
		{"ref chain", `{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}`, `{"x": "ok"}`, false},
		{"recursion through a property", `{"properties": {"name": {"type": "string"}, "child": {"$ref": "#"}}}`, `{"child": {"child": {"name": 1}}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			_, err := s.Validate(json.RawMessage(tt.args))
			if (err != nil) != tt.wantErr {
				t.Errorf("Validate(%q) = %v, want error: %v", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	nested := func(n int) string {
		return strings.Repeat(`{"not":`, n) + `{}` + strings.Repeat(`}`, n)
	}
	tests := []struct {
		name, schema string
		wantReason   string // substring of Reason
	}{
		{"remote https $ref", `{"properties": {"a": {"$ref": "https://example.com/s.json"}}}`, "remote $ref https://example.com/s.json is not allowed"},
		{"remote http $ref", `{"$ref": "http://example.com/s.json#/x"}`, "remote $ref http://example.com/s.json is not allowed"},
		{"file $ref", `{"$ref": "file:///etc/passwd"}`, "file $ref file:///etc/passwd is not allowed"},
		{"relative $ref", `{"$ref": "other.json"}`, `$ref to another document "other.json" is not allowed`},
		{"remote via $id", `{"$id": "https://example.com/a.json", "properties": {"x": {"$ref": "b.json"}}}`, "remote $ref https://example.com/b.json is not allowed"},
		{"unknown $schema", `{"$schema": "https://example.com/meta"}`, `unsupported $schema "https://example.com/meta"`},
		{"self $ref", `{"$ref": "#"}`, `$ref cycle at "#"`},
		{"mutual $refs", `{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`, "$ref cycle"},
		{"cycle through allOf", `{"allOf": [{"$ref": "#"}]}`, "$ref cycle"},
		{"cycle below a property", `{"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "properties": {"x": {"$ref": "#/$defs/a"}}}`, "$ref cycle"},
		{"missing anchor", `{"properties": {"a": {"$ref": "#nope"}}}`, `anchor in "#nope" not found in the schema`},
		{"duplicate anchor", `{"$defs": {"a": {"$anchor": "x"}, "b": {"$anchor": "x"}}}`, `duplicate anchor "x" in the schema`},
		{"missing $defs entry", `{"$ref": "#/$defs/nope"}`, `"#/$defs/nope" not found`},
		{"depth bomb", nested(100), "nested deeper than 64 levels"},
		{"too large", `{"description": "` + strings.Repeat("x", 1<<20) + `"}`, "more than the 1048576 allowed"},
		{"type is a number", `{"type": 5}`, "not a valid 2020-12 schema: /type: "},
		{"minLength is a string", `{"properties": {"a": {"minLength": "x"}}}`, "/properties/a/minLength: got string, want integer"},
		{"draft-04 numeric exclusiveMaximum", `{"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMaximum": 3}`, "/exclusiveMaximum: got number, want boolean"},
		{"bad regex", `{"properties": {"a": {"pattern": "("}}}`, "/properties/a/pattern: not a valid regex"},
		{"type string", `{"type": "string"}`, `type must be "object", got "string"`},
		{"type without object", `{"type": ["string", "number"]}`, `type must be "object", got "number, string"`},
		{"array", `[]`, "schema must be a JSON object, got array"},
		{"boolean", `true`, "schema must be a JSON object, got boolean"},
		{"not JSON", `{"type": }`, "invalid JSON"},
		{"trailing data", `{} {}`, "unexpected data after the top-level value"},
		{"duplicate key", `{"type": "object", "type": "string"}`, "/type: duplicate key"},
		{"$schema not a string", `{"$schema": 7}`, "$schema must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(json.RawMessage(tt.schema))
			if err == nil {
				t.Fatalf("Compile(%.80q) = %v, want error containing %q", tt.schema, s, tt.wantReason)
			}
			var cerr *CompileError
			if !errors.As(err, &cerr) {
				t.Fatalf("Compile(%.80q) error %v (%T) is not a *CompileError", tt.schema, err, err)
			}
			if !strings.Contains(cerr.Reason, tt.wantReason) {
				t.Errorf("Compile(%.80q).Reason = %q, want it to contain %q", tt.schema, cerr.Reason, tt.wantReason)
			}
			if msg := err.Error(); strings.Contains(msg, "*jsonschema") || strings.Contains(msg, "mem:///") || strings.Contains(msg, "\n") {
				t.Errorf("Compile(%.80q) error %q has internal noise", tt.schema, msg)
			}
		})
	}
}

func TestCompileErrorUnwrap(t *testing.T) {
	_, err := Compile(json.RawMessage(`{"$ref": "https://example.com/s.json"}`))
	var lerr *jsonschema.LoadURLError
	if !errors.As(err, &lerr) {
		t.Fatalf("Compile error %v does not unwrap to *jsonschema.LoadURLError", err)
	}
	if lerr.URL != "https://example.com/s.json" {
		t.Errorf("LoadURLError.URL = %q, want %q", lerr.URL, "https://example.com/s.json")
	}
}

const toolSchema = `{
	"type": "object",
	"properties": {
		"path":   {"type": "string", "pattern": "^/"},
		"mode":   {"enum": ["read", "write"]},
		"count":  {"type": "integer", "minimum": 1},
		"opts":   {"$ref": "#/$defs/opts"},
		"env":    {"type": "object", "additionalProperties": {"type": "string"}},
		"items":  {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
	},
	"required": ["path"],
	"additionalProperties": false,
	"$defs": {
		"opts": {"type": "object", "properties": {"verbose": {"type": "boolean"}}, "additionalProperties": false}
	}
}`

func TestValidate(t *testing.T) {
	s := mustCompile(t, toolSchema)
	tests := []struct {
		name string
		args string
		want map[string]any // when valid
		errs []Problem      // when not
	}{
		{"valid", `{"path": "/tmp", "mode": "read", "opts": {"verbose": true}}`,
			map[string]any{"path": "/tmp", "mode": "read", "opts": map[string]any{"verbose": true}}, nil},
		{"int64 max kept exactly", `{"path": "/", "count": 9223372036854775807}`,
			map[string]any{"path": "/", "count": json.Number("9223372036854775807")}, nil},
		{"free-form keys where nothing is declared", `{"path": "/", "env": {"PATH": "/bin", "Path": "x"}}`,
			map[string]any{"path": "/", "env": map[string]any{"PATH": "/bin", "Path": "x"}}, nil},
		{"paired surrogate escape", `{"path": "/\ud83d\ude00"}`, map[string]any{"path": "/\U0001F600"}, nil},
		{"escaped backslash before u", `{"path": "/\\ud800"}`, map[string]any{"path": `/\ud800`}, nil},

		{"missing required", `{}`, nil, []Problem{{"", `missing property "path"`}}},
		{"wrong type and missing", `{"count": "x"}`, nil, []Problem{{"", `missing property "path"`}, {"/count", "got string, want integer"}}},
		{"pattern", `{"path": "relative"}`, nil, []Problem{{"/path", `does not match pattern "^/"`}}},
		{"enum", `{"path": "/", "mode": "delete"}`, nil, []Problem{{"/mode", "value must be one of 'read', 'write'"}}},
		{"minimum", `{"path": "/", "count": 0}`, nil, []Problem{{"/count", "minimum: got 0, want 1"}}},
		{"additionalProperties false", `{"path": "/", "extra": 1, "x/y": 2}`, nil,
			[]Problem{{"/extra", "property not allowed"}, {"/x~1y", "property not allowed"}}},
		{"nested through $ref", `{"path": "/", "opts": {"verbose": "yes", "other": 1}}`, nil,
			[]Problem{{"/opts/other", "property not allowed"}, {"/opts/verbose", "got string, want boolean"}}},
		{"array items", `{"path": "/", "items": [{"name": "a"}, {}, {"name": 3}]}`, nil,
			[]Problem{{"/items/1", `missing property "name"`}, {"/items/2/name", "got number, want string"}}},
		{"additionalProperties schema", `{"path": "/", "env": {"A": 1}}`, nil, []Problem{{"/env/A", "got number, want string"}}},

		{"duplicate key", `{"path": "/", "path": "/etc"}`, nil, []Problem{{"/path", "duplicate key"}}},
		{"duplicate nested key", `{"path": "/", "opts": {"verbose": true, "verbose": false}}`, nil, []Problem{{"/opts/verbose", "duplicate key"}}},
		{"duplicate key in array item", `{"path": "/", "items": [{"name": "a", "name": "b"}]}`, nil, []Problem{{"/items/0/name", "duplicate key"}}},

		{"case variant", `{"PATH": "/etc"}`, nil, []Problem{{"/PATH", `differs only in case from declared property "path"`}}},
		{"case variant beside the exact key", `{"path": "/ok", "Path": "/etc"}`, nil, []Problem{{"/Path", `differs only in case from declared property "path"`}}},
		{"case variant nested through $ref", `{"path": "/", "opts": {"Verbose": true}}`, nil, []Problem{{"/opts/Verbose", `differs only in case from declared property "verbose"`}}},
		{"case variant in array item", `{"path": "/", "items": [{"NAME": "a"}]}`, nil, []Problem{{"/items/0/NAME", `differs only in case from declared property "name"`}}},
		{"upper-case variant of an object property", `{"path": "/", "opts": {"verbose": true}, "mode": "read", "count": 1, "ENV": {}}`, nil, []Problem{{"/ENV", `differs only in case from declared property "env"`}}},

		{"array args", `[]`, nil, []Problem{{"", "arguments must be a JSON object, got array"}}},
		{"string args", `"x"`, nil, []Problem{{"", "arguments must be a JSON object, got string"}}},
		{"number args", `1`, nil, []Problem{{"", "arguments must be a JSON object, got number"}}},
		{"trailing data", `{"path": "/"} {}`, nil, []Problem{{"", "invalid JSON: unexpected data after the top-level value"}}},
		{"trailing garbage", `{"path": "/"}x`, nil, []Problem{{"", "invalid JSON: unexpected data after the top-level value"}}},
		{"truncated", `{"path": `, nil, []Problem{{"", "invalid JSON: unexpected end of input"}}},
		{"invalid UTF-8", "{\"path\": \"/\xff\"}", nil, []Problem{{"", "invalid JSON: not valid UTF-8"}}},
		{"lone high surrogate", `{"path": "/\ud800"}`, nil, []Problem{{"", "invalid JSON: unpaired UTF-16 surrogate escape"}}},
		{"lone low surrogate", `{"path": "/\udc00x"}`, nil, []Problem{{"", "invalid JSON: unpaired UTF-16 surrogate escape"}}},
		{"too deep", `{"path": "/", "env": ` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, nil,
			[]Problem{{"", "invalid JSON: nested deeper than 256 levels"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Validate(json.RawMessage(tt.args))
			if diff := cmp.Diff(tt.errs, problems(t, err)); diff != "" {
				t.Errorf("Validate(%.80q) problems (-want +got):\n%s", tt.args, diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate(%.80q) value (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestCaseVariantKelvin(t *testing.T) {
	// U+212A KELVIN SIGN folds to "k"; encoding/json would match it to a
	// field named "key".
	s := mustCompile(t, `{"properties": {"key": {"type": "string"}}}`)
	_, err := s.Validate(json.RawMessage(`{"\u212aey": 1}`))
	want := []Problem{{"/\u212aey", `differs only in case from declared property "key"`}}
	if diff := cmp.Diff(want, problems(t, err)); diff != "" {
		t.Errorf("Validate problems (-want +got):\n%s", diff)
	}
}

func TestCaseVariantBranches(t *testing.T) {
	s := mustCompile(t, `{
		"anyOf": [{"properties": {"url": {"type": "string"}}}, {"properties": {"file": {"type": "string"}}}],
		"if": {"required": ["x"]}, "then": {"properties": {"depth": {"type": "integer"}}}
	}`)
	for _, args := range []string{`{"URL": "a"}`, `{"File": "a"}`, `{"Depth": 1}`} {
		_, err := s.Validate(json.RawMessage(args))
		if len(problems(t, err)) == 0 {
			t.Errorf("Validate(%q) = nil, want a case-variant problem", args)
		}
	}
	if _, err := s.Validate(json.RawMessage(`{"url": "a", "other": {"URL": 1}}`)); err != nil {
		t.Errorf("Validate of an undeclared nested object = %v, want nil", err)
	}
}

func TestPropertyNames(t *testing.T) {
	s := mustCompile(t, `{"propertyNames": {"maxLength": 3}, "properties": {"o": {"propertyNames": false}}}`)
	_, err := s.Validate(json.RawMessage(`{"abcd": 1, "o": {"x": 1}}`))
	want := []Problem{{"/abcd", "property name: maxLength: got 4, want 3"}, {"/o/x", "property name: not allowed"}}
	if diff := cmp.Diff(want, problems(t, err)); diff != "" {
		t.Errorf("Validate problems (-want +got):\n%s", diff)
	}
}

func TestNullArgs(t *testing.T) {
	for _, args := range []string{"", "null", "  null\n", " "} {
		s := mustCompile(t, `{"properties": {"a": {"type": "string"}}}`)
		got, err := s.Validate(json.RawMessage(args))
		if err != nil {
			t.Errorf("Validate(%q) = %v, want nil", args, err)
		}
		if diff := cmp.Diff(map[string]any{}, got); diff != "" {
			t.Errorf("Validate(%q) value (-want +got):\n%s", args, diff)
		}
	}
	s := mustCompile(t, `{"required": ["a"]}`)
	_, err := s.Validate(nil)
	if diff := cmp.Diff([]Problem{{"", `missing property "a"`}}, problems(t, err)); diff != "" {
		t.Errorf("Validate(nil) against required (-want +got):\n%s", diff)
	}
}

func TestBigNumberRoundTrip(t *testing.T) {
	s := mustCompile(t, `{"properties": {"n": {"type": "integer"}, "f": {"type": "number"}, "g": {"type": "number"}}}`)
	const args = `{"f":1.00000000000000000001,"g":12345678901234567890,"n":9223372036854775807}`
	got, err := s.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("Validate(%q) = %v", args, err)
	}
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != args {
		t.Errorf("json.Marshal(Validate(%q)) = %s, want it unchanged", args, out)
	}
}

// Numbers no server can read as numbers are refused where they are, with
// why (issue 11 §3); integers beyond int64 only where the schema wants an
// integer.
func TestOutOfRangeNumbers(t *testing.T) {
	s := mustCompile(t, `{"properties": {
		"i": {"type": "integer"},
		"f": {"type": "number"},
		"any": {},
		"either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
		"list": {"type": "array", "items": {"type": "integer"}},
		"whole": {"type": "number", "multipleOf": 1},
		"o": {"type": "object", "properties": {"i": {"$ref": "#/$defs/int"}}}
	}, "$defs": {"int": {"type": "integer", "minimum": 0}}}`)
	const (
		floatRange = "is out of range: servers read JSON numbers as 64-bit floats, which end near ±1.8e308"
		intRange   = "is out of range: servers read integers as 64-bit, from -9223372036854775808 to 9223372036854775807"
	)
	tests := []struct {
		args string
		want []Problem // nil: accepted, and kept digit for digit
	}{
		{`{"f": 1e400}`, []Problem{{"/f", "number 1e400 " + floatRange}}},
		{`{"f": -1.8e308}`, []Problem{{"/f", "number -1.8e308 " + floatRange}}},
		{`{"any": 1e400}`, []Problem{{"/any", "number 1e400 " + floatRange}}},
		{`{"i": 1e400}`, []Problem{{"/i", "number 1e400 " + floatRange}}},
		{`{"f": 1e2000}`, []Problem{{"/f", "number 1e2000 is out of range: its exponent is beyond ±1000"}}},
		{`{"f": 1.7976931348623157e308}`, nil},
		{`{"f": 1e-400}`, nil}, // reads as 0: small, not out of range
		{`{"i": 9223372036854775807}`, nil},
		{`{"i": -9223372036854775808}`, nil},
		{`{"i": 9007199254740993}`, nil}, // beyond 2^53: inexact in JavaScript only
		{`{"i": 9223372036854775808}`, []Problem{{"/i", "integer 9223372036854775808 " + intRange}}},
		{`{"i": -9223372036854775809}`, []Problem{{"/i", "integer -9223372036854775809 " + intRange}}},
		{`{"i": 1e19}`, []Problem{{"/i", "integer 1e19 " + intRange}}},
		{`{"i": 9223372036854775808.0}`, []Problem{{"/i", "integer 9223372036854775808.0 " + intRange}}},
		{`{"i": 123456789012345678901234567890123456789012345678901234567890}`,
			[]Problem{{"/i", "integer 1234567890123456789012345678901234567890… " + intRange}}},
		{`{"f": 9223372036854775808}`, nil},
		{`{"any": 123456789012345678901234567890}`, nil},
		{`{"either": 9223372036854775808}`, []Problem{{"/either", "integer 9223372036854775808 " + intRange}}},
		{`{"either": "9223372036854775808"}`, nil},
		{`{"list": [1, 18446744073709551616]}`, []Problem{{"/list/1", "integer 18446744073709551616 " + intRange}}},
		{`{"whole": 1e19}`, []Problem{{"/whole", "integer 1e19 " + intRange}}},
		{`{"o": {"i": 9223372036854775808}, "f": 9223372036854775808}`, []Problem{{"/o/i", "integer 9223372036854775808 " + intRange}}},
		// An integer the schema refuses anyway is refused for that.
		{`{"o": {"i": -9223372036854775809}}`, []Problem{{"/o/i", "minimum: got -9.223372036854776×10¹⁸, want 0"}}},
	}
	for _, tt := range tests {
		got, err := s.Validate(json.RawMessage(tt.args))
		if diff := cmp.Diff(tt.want, problems(t, err)); diff != "" {
			t.Errorf("Validate(%s) problems (-want +got):\n%s", tt.args, diff)
			continue
		}
		if tt.want != nil {
			continue
		}
		out, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(tt.args, " ", ""); string(out) != want {
			t.Errorf("Validate(%s) forwards %s, want the number kept as written", tt.args, out)
		}
	}
	_, err := s.Validate(json.RawMessage(`{"i": 9223372036854775808}`))
	if want := "invalid arguments: /i: integer 9223372036854775808 " + intRange; err == nil || err.Error() != want {
		t.Errorf("Validate error = %v, want %q", err, want)
	}
	// A schema document may hold such numbers: only arguments are checked.
	mustCompile(t, `{"properties": {"n": {"type": "number", "maximum": 1e400}}}`)
}

func TestValidationErrorString(t *testing.T) {
	s := mustCompile(t, `{"properties": {"a": {"type": "number"}}, "required": ["b"]}`)
	_, err := s.Validate(json.RawMessage(`{"a": "x"}`))
	const want = `invalid arguments: (root): missing property "b"; /a: got string, want number`
	if err == nil || err.Error() != want {
		t.Errorf("Validate error = %v, want %q", err, want)
	}
}

func TestProblemsBounded(t *testing.T) {
	s := mustCompile(t, `{"properties": {"xs": {"items": {"type": "string"}}}}`)
	args := `{"xs": [` + strings.TrimSuffix(strings.Repeat("1,", 30), ",") + `]}`
	_, err := s.Validate(json.RawMessage(args))
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Validate = %v, want *ValidationError", err)
	}
	if len(verr.Problems) != 20 || verr.Omitted != 10 {
		t.Errorf("Validate: %d problems, %d omitted; want 20, 10", len(verr.Problems), verr.Omitted)
	}
	if !strings.HasSuffix(err.Error(), "; and 10 more") {
		t.Errorf("Validate error %q does not end with %q", err, "; and 10 more")
	}
}

func TestRaw(t *testing.T) {
	raw := json.RawMessage(`{"type": "object"}`)
	s := mustCompile(t, string(raw))
	got := s.Raw()
	if string(got) != string(raw) {
		t.Errorf("Raw() = %s, want %s", got, raw)
	}
	got[0] = 'X'
	if string(s.Raw()) != string(raw) {
		t.Errorf("Raw() shares memory with its caller")
	}
}

func TestConcurrentValidate(t *testing.T) {
	s := mustCompile(t, toolSchema)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				args := fmt.Sprintf(`{"path": "/%d", "count": %d, "opts": {"verbose": true}}`, i, j+1)
				if _, err := s.Validate(json.RawMessage(args)); err != nil {
					t.Errorf("Validate(%q) = %v", args, err)
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkValidate(b *testing.B) {
	s := mustCompile(b, toolSchema)
	args := json.RawMessage(`{"path": "/tmp/file.txt", "mode": "read", "count": 3, "opts": {"verbose": true}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzValidate(f *testing.F) {
	schemas := []string{
		toolSchema,
		`{}`,
		`{"properties": {"child": {"$ref": "#"}, "name": {"type": "string"}}}`,
		`{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"n": {"maximum": 1, "exclusiveMaximum": true}}}`,
		`{"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer", "exclusiveMinimum": 9223372036854775808}}]}}}`,
		linearIssueSchema,
	}
	for _, a := range []string{
		`{"path": "/", "opts": {"verbose": true}}`,
		`{"PATH": 1, "path": "x", "path": "y"}`,
		`{"child": {"child": {"name": 5}}}`,
		`{"n": 12345678901234567890}`,
		`{"count": 9223372036854775808}`, `{"count": -9223372036854775809}`, `{"count": 1e19}`,
		`{"path": "/", "count": 9223372036854775807}`, `{"n": 1e400}`, `{"n": -1e309}`, `{"n": 1e-400}`,
		`{"n": [1e19, 18446744073709551616]}`,
		`[]`, `null`, ``, `{"a":"\ud800"}`, "{\"\xff\":1}", `{} {}`,
		`{"id": "ENG-123", "slug": "a-b", "twice": "ab-ab", "env": {"HOME": "/"}}`, `{"id": "e", "env": {"1": 1}}`,
	} {
		for i := range schemas {
			f.Add(uint8(i), a)
		}
	}
	compiled := make([]*Schema, len(schemas))
	for i, raw := range schemas {
		compiled[i] = mustCompile(f, raw)
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		s := compiled[int(which)%len(compiled)]
		got, err := s.Validate(json.RawMessage(args))
		if err != nil {
			var verr *ValidationError
			if !errors.As(err, &verr) || len(verr.Problems) == 0 {
				t.Fatalf("Validate(%q) = %v (%T), want a *ValidationError with problems", args, err, err)
			}
			return
		}
		// What Validate accepts and returns must itself be accepted again:
		// it is what the server receives.
		out, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("json.Marshal(Validate(%q)) = %v", args, err)
		}
		again, err := s.Validate(out)
		if err != nil {
			t.Fatalf("Validate(%s) (re-encoded from %q) = %v", out, args, err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("re-validating %s changed the value (-first +second):\n%s", out, diff)
		}
	})
}

// linearIssueSchema has the kind of pattern a Linear MCP server declares:
// lookahead, which Go's RE2 lacks (such tools were dropped).
const linearIssueSchema = `{
	"type": "object",
	"properties": {
		"id":    {"type": "string", "pattern": "^(?=.*[A-Z])[A-Z0-9]{1,7}-\\d+$"},
		"slug":  {"type": "string", "pattern": "^(?!-)[a-z0-9-]+(?<!-)$"},
		"twice": {"type": "string", "pattern": "^([a-z]+)-\\1$"},
		"env":   {"type": "object", "patternProperties": {"^(?![0-9])\\w+$": {"type": "string"}}, "additionalProperties": false}
	},
	"required": ["id"]
}`

// TestECMAPatterns: patterns are ECMA-262, as JSON Schema defines them:
// lookahead, lookbehind and backreferences compile, and arguments are
// checked against them; Go-only syntax still compiles (RE2).
func TestECMAPatterns(t *testing.T) {
	s := mustCompile(t, linearIssueSchema)
	tests := []struct {
		args string
		errs []Problem
	}{
		{`{"id": "ENG-123"}`, nil},
		{`{"id": "ENG-123", "slug": "a-b", "twice": "ab-ab", "env": {"HOME": "/root"}}`, nil},
		{`{"id": "123-456"}`, []Problem{{"/id", `does not match pattern "^(?=.*[A-Z])[A-Z0-9]{1,7}-\\d+$"`}}},
		{`{"id": "eng-123"}`, []Problem{{"/id", `does not match pattern "^(?=.*[A-Z])[A-Z0-9]{1,7}-\\d+$"`}}},
		{`{"id": "ENG-1", "slug": "-a"}`, []Problem{{"/slug", `does not match pattern "^(?!-)[a-z0-9-]+(?<!-)$"`}}},
		{`{"id": "ENG-1", "slug": "a-"}`, []Problem{{"/slug", `does not match pattern "^(?!-)[a-z0-9-]+(?<!-)$"`}}},
		{`{"id": "ENG-1", "twice": "ab-cd"}`, []Problem{{"/twice", `does not match pattern "^([a-z]+)-\\1$"`}}},
		{`{"id": "ENG-1", "env": {"1X": "y"}}`, []Problem{{"/env/1X", "property not allowed"}}},
	}
	for _, tt := range tests {
		_, err := s.Validate(json.RawMessage(tt.args))
		if diff := cmp.Diff(tt.errs, problems(t, err)); diff != "" {
			t.Errorf("Validate(%s) problems (-want +got):\n%s", tt.args, diff)
		}
	}
	// ECMA-262 with the "u" flag: \p{…} classes, "." is one code point.
	u := mustCompile(t, `{"properties": {"w": {"type": "string", "pattern": "^\\p{Letter}.$"}}}`)
	if _, err := u.Validate(json.RawMessage(`{"w": "é😀"}`)); err != nil {
		t.Errorf(`Validate("é😀") against ^\p{Letter}.$ = %v, want valid`, err)
	}
	// Written for a Go server: RE2 syntax that ECMA-262 lacks.
	g := mustCompile(t, `{"properties": {"n": {"type": "string", "pattern": "^(?P<word>[a-z]+)\\z"}}}`)
	if _, err := g.Validate(json.RawMessage(`{"n": "abc"}`)); err != nil {
		t.Errorf("Validate against an RE2 pattern = %v, want valid", err)
	}
	if _, err := Compile(json.RawMessage(`{"properties": {"a": {"pattern": "(?=a"}}}`)); err == nil {
		t.Errorf("an unterminated lookahead compiled")
	}
}

// TestCatastrophicPattern: a pattern that backtracks exponentially on an
// argument is given up after its time bound, with an error naming the
// pattern and the argument (never its value), instead of hanging the call;
// many such arguments cost one bound, not one each.
func TestCatastrophicPattern(t *testing.T) {
	s := mustCompile(t, `{"properties": {
		"id":  {"type": "string", "pattern": "^(a+)+$"},
		"ids": {"type": "array", "items": {"type": "string", "pattern": "^(a|aa)+$"}}
	}}`)
	evil := strings.Repeat("a", 40) + "!"
	many := make([]string, 50)
	for i := range many {
		many[i] = evil
	}
	manyJSON, _ := json.Marshal(many)
	for _, tc := range []struct{ args, ptr, pattern string }{
		{`{"id": "` + evil + `"}`, "/id", "^(a+)+$"},
		{`{"ids": ` + string(manyJSON) + `}`, "/ids/0", "^(a|aa)+$"},
	} {
		start := time.Now()
		_, err := s.Validate(json.RawMessage(tc.args))
		d := time.Since(start)
		got := problems(t, err)
		if len(got) != 1 || got[0].Pointer != tc.ptr || !strings.Contains(got[0].Message, fmt.Sprintf("pattern %q took longer than %s to match", tc.pattern, patternTimeout)) {
			t.Errorf("Validate(%.60s…) = %v, want one problem at %s saying pattern %q took too long", tc.args, err, tc.ptr, tc.pattern)
		}
		if strings.Contains(err.Error(), evil) {
			t.Errorf("the error quotes the argument: %v", err)
		}
		// regexp2's clock is coarse: a bound of 100 ms ends after up to
		// about 200 ms; 2 s leaves room for a loaded machine.
		if d > 2*time.Second {
			t.Errorf("Validate took %s, want about one bound of %s", d, patternTimeout)
		}
	}
	// The same pattern answers at once where it does not backtrack.
	if _, err := s.Validate(json.RawMessage(`{"id": "aaaa", "ids": ["aa"]}`)); err != nil {
		t.Errorf("Validate(aaaa) = %v, want valid", err)
	}
}
