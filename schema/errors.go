package schema

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxProblems bounds a ValidationError, so that a large argument array
// failing item by item yields a readable message of bounded size.
const maxProblems = 20

// A Problem is one reason arguments were refused.
type Problem struct {
	Pointer string // JSON Pointer to the offending value, like /items/0/name; "" for the root
	Message string // what is wrong there
}

func (p Problem) String() string {
	loc := p.Pointer
	if loc == "" {
		loc = "(root)"
	}
	return loc + ": " + p.Message
}

// A ValidationError reports why call arguments were refused. Problems are
// sorted by pointer, then message, and hold at most 20 entries; Omitted
// counts the ones left out.
type ValidationError struct {
	Problems []Problem
	Omitted  int
}

func (e *ValidationError) Error() string { return "invalid arguments: " + e.list() }

func (e *ValidationError) list() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "; and %d more", e.Omitted)
	}
	return b.String()
}

// newValidationError sorts, deduplicates and bounds problems.
func newValidationError(problems []Problem) *ValidationError {
	slices.SortFunc(problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Pointer, b.Pointer), cmp.Compare(a.Message, b.Message))
	})
	problems = slices.Compact(problems)
	e := &ValidationError{Problems: problems}
	if len(problems) > maxProblems {
		e.Problems, e.Omitted = problems[:maxProblems:maxProblems], len(problems)-maxProblems
	}
	return e
}

var printer = message.NewPrinter(language.English)

// leafProblems appends a problem for each leaf of verr's cause tree: the
// deepest failing location and the keyword that failed there. The inner
// nodes only say that a subschema ('allOf', $ref, ...) failed.
func leafProblems(verr *jsonschema.ValidationError, out []Problem) []Problem {
	var b []byte
	for _, tok := range verr.InstanceLocation {
		b = appendEscaped(append(b, '/'), tok)
	}
	ptr := string(b)
	if len(verr.Causes) > 0 {
		if k, ok := verr.ErrorKind.(*kind.PropertyNames); ok {
			// The causes are located at the object; point at the name.
			var inner []Problem
			for _, c := range verr.Causes {
				inner = leafProblems(c, inner)
			}
			at := string(appendEscaped(append(b, '/'), k.Property))
			for _, p := range inner {
				out = append(out, Problem{at, "property name: " + p.Message})
			}
			return out
		}
		for _, c := range verr.Causes {
			out = leafProblems(c, out)
		}
		return out
	}
	// Rewrite the kinds whose stock message quotes with single quotes,
	// names a whole set at once, or echoes the offending value (which may
	// be a secret headed for a log).
	switch k := verr.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			out = append(out, Problem{ptr, fmt.Sprintf("missing property %q", name)})
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			out = append(out, Problem{string(appendEscaped(append(b, '/'), name)), "property not allowed"})
		}
	case *kind.FalseSchema:
		out = append(out, Problem{ptr, "not allowed"})
	case *kind.Pattern:
		out = append(out, Problem{ptr, fmt.Sprintf("does not match pattern %q", k.Want)})
	case *kind.Format:
		out = append(out, Problem{ptr, fmt.Sprintf("not a valid %s", k.Want)})
	case *kind.PropertyNames:
		out = append(out, Problem{string(appendEscaped(append(b, '/'), k.Property)), "property name not allowed"})
	default:
		out = append(out, Problem{ptr, k.LocalizedString(printer)})
	}
	return out
}
