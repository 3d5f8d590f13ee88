package toolscan

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// Most texts match no rule, and a regular expression that starts with an
// alternation of words is tried at every position of the text. So each
// pattern carries the literals one of which any match must contain
// (required), read from its syntax tree, and runs only on text that holds
// one: a check of a few substrings instead of a backtracking match. A
// pattern that yields no such set (one that may match without a literal)
// always runs.

// required returns clauses of lowercase strings: every match of pattern
// contains one string of each clause. Nil if it cannot tell.
func required(pattern string) [][]string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	return clauses(re)
}

// maxExact bounds the strings exact expands a pattern into.
const maxExact = 64

// exact returns every string re matches, lowercased, when they are few
// and re matches nothing else (a literal, an alternation of them, a
// concatenation of such); nil otherwise.
func exact(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil // case folding beyond ASCII: do not guess
			}
		}
		return []string{strings.ToLower(string(re.Rune))}
	case syntax.OpEmptyMatch:
		return []string{""}
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			e := exact(sub)
			if e == nil || len(all)+len(e) > maxExact {
				return nil
			}
			all = append(all, e...)
		}
		return all
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			e := exact(sub)
			if e == nil || len(out)*len(e) > maxExact {
				return nil
			}
			var next []string
			for _, a := range out {
				for _, b := range e {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out
	}
	return nil
}

// clauses returns clauses one string of each of which every match of re
// contains; nil for none known.
func clauses(re *syntax.Regexp) [][]string {
	if e := exact(re); e != nil {
		if slices.Contains(e, "") {
			return nil
		}
		return [][]string{e}
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return clauses(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return clauses(re.Sub[0])
		}
	case syntax.OpConcat:
		// runs of exact children are joined (send + s? = send, sends);
		// every other child adds its own clauses.
		var out [][]string
		run := []string{""}
		flush := func() {
			if !slices.Contains(run, "") {
				out = append(out, run)
			}
			run = []string{""}
		}
		for _, sub := range re.Sub {
			if e := exact(sub); e != nil && len(run)*len(e) <= maxExact {
				var next []string
				for _, a := range run {
					for _, b := range e {
						next = append(next, a+b)
					}
				}
				run = next
				continue
			}
			flush()
			out = append(out, clauses(sub)...)
		}
		flush()
		return out
	case syntax.OpAlternate:
		// one clause: each branch's most selective one.
		var all []string
		for _, sub := range re.Sub {
			cs := clauses(sub)
			if cs == nil {
				return nil
			}
			all = append(all, best(cs)...)
		}
		return [][]string{all}
	}
	return nil
}

// best returns the clause whose shortest string is longest.
func best(cs [][]string) []string {
	var b []string
	bl := -1
	for _, c := range cs {
		m := len(c[0])
		for _, s := range c {
			m = min(m, len(s))
		}
		if m > bl {
			b, bl = c, m
		}
	}
	return b
}

// mayMatch reports whether lower (the text, lowercased) holds a string of
// every clause; true when there are none.
func mayMatch(lower string, clauses [][]string) bool {
	for _, c := range clauses {
		if !slices.ContainsFunc(c, func(s string) bool { return strings.Contains(lower, s) }) {
			return false
		}
	}
	return true
}
