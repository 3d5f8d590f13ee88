package guardrail

import (
	"context"
	"regexp"
	"unicode/utf8"
)

// Size caps the bytes of a call's text parts, all together. A match is
// what lies beyond MaxBytes: masking cuts it (at a character boundary),
// leaving "[masked:size]" in its place; the parts after the cut are
// emptied.
type Size struct{ MaxBytes int }

func (Size) Name() string { return "size" }

func (f Size) Scan(_ context.Context, _ Call, _ Direction, parts []Part) ([]Finding, error) {
	left := f.MaxBytes
	var fs []Finding
	for i, p := range parts {
		if len(p.Text) <= left {
			left -= len(p.Text)
			continue
		}
		cut := max(left, 0)
		for cut > 0 && !utf8.RuneStart(p.Text[cut]) {
			cut--
		}
		fs = append(fs, Finding{Part: i, Start: cut, End: len(p.Text), Kind: "size"})
		left = 0
	}
	return fs, nil
}

// Deny finds matches of the operator's regular expressions (RE2 syntax:
// linear time, whatever the text). Kind names the matches in records and
// masks; "" means "deny".
type Deny struct {
	Patterns []*regexp.Regexp
	Kind     string
}

func (Deny) Name() string { return "deny" }

func (f Deny) Scan(_ context.Context, _ Call, _ Direction, parts []Part) ([]Finding, error) {
	kind := f.Kind
	if kind == "" {
		kind = "deny"
	}
	var fs []Finding
	for i, p := range parts {
		for _, re := range f.Patterns {
			for _, m := range re.FindAllStringIndex(p.Text, -1) {
				if m[1] > m[0] {
					fs = append(fs, Finding{Part: i, Start: m[0], End: m[1], Kind: kind})
				}
			}
		}
	}
	return fs, nil
}
