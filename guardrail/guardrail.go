// Package guardrail filters what passes through a tool call: its arguments
// before the call reaches the server, and its result before any client,
// agent or workflow sees it.
//
// A [Chain] is an ordered list of [Rule]s. Each rule pairs a [Filter] (what
// to look for) with an [Action] (what to do with a match) and a scope (the
// servers, tools and endpoints, by glob, and the [Direction]s it applies to).
// The rules run in order, each on the text the rules before it left: a rule
// that masks hides the match from every rule after it. The text parts a
// filter reads are the JSON strings of the arguments, and of the result its
// text content, the text of its embedded resources and the JSON strings of
// its structured content; each part has a path ("arguments.query",
// "content[0].text", "structuredContent.items[2].email") that names it.
//
// The actions:
//   - [Mask] replaces each match with "[masked:KIND]" (KIND: email,
//     github-token, …) and lets the call go on;
//   - [Reject] fails the call with a *[RejectedError], naming the rule's
//     filter and the part, never the matched text;
//   - [Flag] only records the match.
//
// Every action taken is a [Record]: filter, action, direction, part, kind
// and count, never the matched text. The caller (package host) turns
// records into events, metrics and a line in the call's result _meta.
//
// The built-in filters ([Credentials], [PII], [Size], [Deny]) are plain
// code over the text, linear in its length; [Hook] asks an HTTP endpoint
// of the operator's (a Presidio, LLM Guard or OPA front) over a small JSON
// contract (hook.go). What the filters catch and miss is in
// docs/security.md: they are a net for the common shapes of secrets and
// personal data, not a proof that none passes.
package guardrail

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// A Direction is which side of a call a rule filters.
type Direction uint8

const (
	// Arguments: the call's arguments, before the server sees them.
	Arguments Direction = 1 << iota
	// Results: the call's result, before the caller sees it.
	Results
	// Both directions.
	Both = Arguments | Results
)

func (d Direction) String() string {
	switch d {
	case Arguments:
		return "arguments"
	case Results:
		return "results"
	case Both:
		return "both"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// MarshalText writes the direction as its name.
func (d Direction) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a direction's name.
func (d *Direction) UnmarshalText(b []byte) error {
	v, err := ParseDirection(string(b))
	*d = v
	return err
}

// ParseDirection parses "arguments", "results" or "both".
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "arguments":
		return Arguments, nil
	case "results":
		return Results, nil
	case "both":
		return Both, nil
	}
	return 0, fmt.Errorf("unknown direction %q (want arguments, results or both)", s)
}

// An Action is what a rule does with a match.
type Action string

const (
	Mask   Action = "mask"
	Reject Action = "reject"
	Flag   Action = "flag"
	// Failed is not a rule's action but a record's: a hook that failed
	// open (the call went on unfiltered by it).
	Failed Action = "failed"
)

// ParseAction parses "mask", "reject" or "flag".
func ParseAction(s string) (Action, error) {
	switch a := Action(s); a {
	case Mask, Reject, Flag:
		return a, nil
	}
	return "", fmt.Errorf("unknown action %q (want mask, reject or flag)", s)
}

// A Part is one text a filter reads.
type Part struct {
	// Path names the part: "arguments.query", "content[0].text".
	Path string
	Text string
}

// A Finding is one match of a filter in a part: bytes [Start, End) of
// parts[Part].Text, of kind Kind ("email", "aws-access-key"). With
// Replace set, masking puts Replacement in its place instead of
// "[masked:KIND]" (a hook's own masking). Action, when set (by a hook),
// overrides the rule's action for this finding.
type Finding struct {
	Part        int
	Start, End  int
	Kind        string
	Replace     bool
	Replacement string
	Action      Action
}

// Call is what a filter knows of the call it filters.
type Call struct {
	Server, Tool string
	// Endpoint is the gateway endpoint the call came through ("" for the
	// default one, and for a call of no gateway's: CLI, workflow, agent).
	Endpoint string
}

// A Filter finds what a rule acts on. Scan returns its findings in parts,
// which it must not change; an error fails the call (a hook that fails
// closed) unless the filter handled it itself.
type Filter interface {
	// Name is the filter's name in records and errors: "credentials",
	// "pii", "size", "deny", "hook".
	Name() string
	Scan(ctx context.Context, call Call, dir Direction, parts []Part) ([]Finding, error)
}

// A Rule is one link of a [Chain].
type Rule struct {
	Filter Filter
	Action Action
	// Direction is where the rule applies; 0 means Both.
	Direction Direction
	// Servers, Tools and Endpoints limit the rule to calls whose server id,
	// tool name (the server's own name for it) and endpoint name match one
	// of these globs (path.Match); empty means all. The default endpoint
	// (and a call of no endpoint) is named "".
	Servers, Tools, Endpoints []string
	// Name names the rule in records and errors; "" means the filter's
	// name.
	Name string
}

func (r *Rule) name() string {
	if r.Name != "" {
		return r.Name
	}
	return r.Filter.Name()
}

func (r *Rule) applies(c Call, dir Direction) bool {
	d := r.Direction
	if d == 0 {
		d = Both
	}
	return d&dir != 0 && match(r.Servers, c.Server) && match(r.Tools, c.Tool) && match(r.Endpoints, c.Endpoint)
}

func match(globs []string, s string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, s); ok || g == s {
			return true
		}
	}
	return false
}

// A Record is one action a rule took on a call: never the matched text.
type Record struct {
	Rule      string    `json:"rule"`
	Filter    string    `json:"filter"`
	Action    Action    `json:"action"`
	Direction Direction `json:"direction"`
	Part      string    `json:"part"`
	Kind      string    `json:"kind"`
	Count     int       `json:"count"`
}

// ErrRejected is matched by every *RejectedError.
var ErrRejected = errors.New("rejected by a guardrail")

// A RejectedError is a call a rule rejected. It names the rule, the part
// and the kind of what was found, never the text.
type RejectedError struct {
	Rule, Filter string
	Direction    Direction
	Part, Kind   string
	// Err is why a hook failed closed; nil for a match.
	Err error
}

func (e *RejectedError) Error() string {
	what := "arguments"
	if e.Direction == Results {
		what = "result"
	}
	if e.Err != nil {
		return fmt.Sprintf("guardrail %q rejected the %s: its hook failed (fail = closed): %v", e.Rule, what, e.Err)
	}
	return fmt.Sprintf("guardrail %q rejected the %s: %s holds %s", e.Rule, what, e.Part, article(e.Kind))
}

func (e *RejectedError) Is(target error) bool { return target == ErrRejected }
func (e *RejectedError) Unwrap() error        { return e.Err }

func article(kind string) string {
	if kind == "" {
		return "a match"
	}
	return "a match of kind " + kind
}

// A Chain is an ordered list of rules. The zero Chain and a nil *Chain
// filter nothing. A Chain is safe for concurrent use.
type Chain struct {
	rules []Rule
}

// New returns a chain of rules, in order. It fails, naming the rule by its
// index, for a rule without filter or with an unknown action.
func New(rules []Rule) (*Chain, error) {
	var errs []error
	for i, r := range rules {
		if r.Filter == nil {
			errs = append(errs, fmt.Errorf("guardrails[%d]: no filter", i))
			continue
		}
		if _, err := ParseAction(string(r.Action)); err != nil {
			errs = append(errs, fmt.Errorf("guardrails[%d]: %w", i, err))
		}
		for _, g := range slices.Concat(r.Servers, r.Tools, r.Endpoints) {
			if _, err := path.Match(g, ""); err != nil {
				errs = append(errs, fmt.Errorf("guardrails[%d]: bad glob %q", i, g))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Chain{rules: slices.Clone(rules)}, nil
}

// Len is the number of rules.
func (c *Chain) Len() int {
	if c == nil {
		return 0
	}
	return len(c.rules)
}

// Applies reports whether any rule applies to call in dir: when none does,
// the caller can skip extracting the parts.
func (c *Chain) Applies(call Call, dir Direction) bool {
	if c == nil {
		return false
	}
	for i := range c.rules {
		if c.rules[i].applies(call, dir) {
			return true
		}
	}
	return false
}

// Filter runs the rules that apply to call in dir over parts, in order,
// masking in place. It returns what each rule did; changed says whether a
// part's text changed. A rule that rejects stops the chain: the error is a
// *RejectedError, and the records include the rejection.
func (c *Chain) Filter(ctx context.Context, call Call, dir Direction, parts []Part) (recs []Record, changed bool, err error) {
	if c == nil {
		return nil, false, nil
	}
	for i := range c.rules {
		r := &c.rules[i]
		if !r.applies(call, dir) {
			continue
		}
		fs, err := r.Filter.Scan(ctx, call, dir, parts)
		if err != nil {
			var re *RejectedError
			if errors.As(err, &re) {
				re.Rule, re.Filter, re.Direction = r.name(), r.Filter.Name(), dir
				recs = append(recs, Record{Rule: r.name(), Filter: r.Filter.Name(), Action: Reject, Direction: dir, Count: 1})
				return recs, changed, re
			}
			return recs, changed, err
		}
		if len(fs) == 0 {
			continue
		}
		var masks []Finding
		for _, f := range fs {
			a := r.Action
			if f.Action == Failed || f.Action != "" && r.Action != Flag {
				a = f.Action // a hook's word, unless the rule only flags
			}
			part := ""
			if f.Part >= 0 {
				part = parts[f.Part].Path
			}
			recs = addRecord(recs, Record{Rule: r.name(), Filter: r.Filter.Name(), Action: a, Direction: dir, Part: part, Kind: f.Kind, Count: 1})
			switch a {
			case Reject:
				return recs, changed, &RejectedError{Rule: r.name(), Filter: r.Filter.Name(), Direction: dir, Part: part, Kind: f.Kind}
			case Mask:
				masks = append(masks, f)
			}
		}
		if len(masks) > 0 {
			applyMasks(parts, masks)
			changed = true
		}
	}
	return recs, changed, nil
}

// addRecord counts rec in recs, into the record of the same rule, action,
// part and kind if there is one.
func addRecord(recs []Record, rec Record) []Record {
	for i := range recs {
		r := &recs[i]
		if r.Rule == rec.Rule && r.Action == rec.Action && r.Direction == rec.Direction && r.Part == rec.Part && r.Kind == rec.Kind {
			r.Count += rec.Count
			return recs
		}
	}
	return append(recs, rec)
}

// applyMasks replaces each finding's bytes. Overlapping findings of one
// part merge into one replacement, the first's.
func applyMasks(parts []Part, fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if a.Part != b.Part {
			return a.Part - b.Part
		}
		return a.Start - b.Start
	})
	for i := 0; i < len(fs); {
		p := fs[i].Part
		text := parts[p].Text
		var b strings.Builder
		last := 0
		for ; i < len(fs) && fs[i].Part == p; i++ {
			f := fs[i]
			if f.Start < last {
				last = max(last, f.End) // overlaps the previous replacement
				continue
			}
			b.WriteString(text[last:f.Start])
			if f.Replace {
				b.WriteString(f.Replacement)
			} else {
				b.WriteString("[masked:" + f.Kind + "]")
			}
			last = f.End
		}
		b.WriteString(text[last:])
		parts[p].Text = b.String()
	}
}
