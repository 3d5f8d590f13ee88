package schema

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// JSON Schema's "pattern", "patternProperties" and "format": "regex" are
// ECMA-262 regular expressions, and servers written in JavaScript use what
// Go's RE2 lacks: lookahead ((?=…), (?!…)), lookbehind, backreferences.
// A tool whose schema RE2 cannot compile used to be dropped, so patterns
// are compiled by an ECMA-262 engine (regexp2 in ECMAScript mode with the
// "u" flag's semantics, as JSON Schema validators in JavaScript compile
// them). A pattern that engine refuses and RE2 accepts (Go syntax such as
// (?P<name>…), written for a Go server) keeps RE2, as before.
//
// A backtracking engine can take exponential time on a pattern such as
// ^(a+)+$ and a string that nearly matches it. Each match is therefore
// bounded by patternTimeout; a match that exceeds it (or the engine's
// backtracking stack bound) fails the whole validation at once with an
// error naming the pattern and the argument, never the argument's value.

// patternTimeout bounds one match of one pattern against one string: a
// catastrophic pattern from a server costs a call this long (regexp2's
// clock is coarse: up to about twice as long), never a hang. Real
// patterns match in microseconds.
const patternTimeout = 100 * time.Millisecond

// compileRegexp is the compiler's regexp engine (see above).
func compileRegexp(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil {
		if re2, err2 := regexp.Compile(pattern); err2 == nil {
			return re2, nil
		}
		return nil, err
	}
	re.MatchTimeout = patternTimeout
	return ecmaRegexp{re: re, src: pattern}, nil
}

// ecmaRegexp is a compiled ECMA-262 pattern.
type ecmaRegexp struct {
	re  *regexp2.Regexp
	src string
}

func (r ecmaRegexp) String() string { return r.src }

// MatchString reports whether s contains a match. The validator's
// interface has no room for an error, so a match that timed out aborts the
// validation with a panic of a *patternError, which Validate recovers.
func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	if err != nil {
		panic(&patternError{pattern: r.src, input: s, err: err})
	}
	return ok
}

// patternError is a match that could not be finished in its bounds.
type patternError struct {
	pattern string
	input   string // the argument's value: never in a message
	err     error
}

// problem is e as a Problem located in args, the arguments that were being
// validated: at the first string (or property name) equal to the one the
// match gave up on.
func (e *patternError) problem(args any) Problem {
	what := fmt.Sprintf("took longer than %s to match", patternTimeout)
	if errors.Is(e.err, regexp2.ErrBacktrackingStackLimit) {
		what = "exhausted its backtracking stack"
	}
	ptr, _ := findString(args, e.input, nil)
	return Problem{Pointer: ptr, Message: fmt.Sprintf("pattern %q %s, and was given up (a pattern that backtracks catastrophically); the tool's schema needs a pattern that does not", e.pattern, what)}
}

// findString returns the JSON Pointer of the first string value or
// property name in v equal to s, in key order.
func findString(v any, s string, path []byte) (string, bool) {
	switch c := v.(type) {
	case string:
		if c == s {
			return string(path), true
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(c)) {
			at := appendEscaped(append(path, '/'), k)
			if k == s {
				return string(at), true
			}
			if p, ok := findString(c[k], s, at); ok {
				return p, true
			}
		}
	case []any:
		for i, e := range c {
			if p, ok := findString(e, s, fmt.Appendf(path, "/%d", i)); ok {
				return p, true
			}
		}
	}
	return string(path[:0]), false
}
