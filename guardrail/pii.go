package guardrail

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// PII kinds, as PII.Kinds names them.
const (
	KindEmail = "email"
	KindPhone = "phone"
	KindCard  = "card"
	KindIBAN  = "iban"
)

// PIIKinds are the kinds PII finds.
var PIIKinds = []string{KindEmail, KindPhone, KindCard, KindIBAN}

// PII finds personal data: e-mail addresses, phone numbers, payment card
// numbers (13 to 19 digits, spaced or not, that pass the Luhn check) and
// IBANs (that pass their mod-97 check). Phone numbers are found
// conservatively, to spare ids, dates and amounts: an international
// number ("+" and 8 to 15 digits) or a North American one written
// "(555) 123-4567" or "555-123-4567".
type PII struct {
	// Kinds limits the filter to these kinds; empty means all.
	Kinds []string
}

func (PII) Name() string { return "pii" }

// CheckPIIKinds returns an error naming a kind PII does not know.
func CheckPIIKinds(kinds []string) error {
	for _, k := range kinds {
		if !slices.Contains(PIIKinds, k) {
			return fmt.Errorf("unknown kind %q (want %s)", k, strings.Join(PIIKinds, ", "))
		}
	}
	return nil
}

func (f PII) want(kind string) bool { return len(f.Kinds) == 0 || slices.Contains(f.Kinds, kind) }

func (f PII) Scan(_ context.Context, _ Call, _ Direction, parts []Part) ([]Finding, error) {
	var fs []Finding
	for i, p := range parts {
		s := p.Text
		if f.want(KindEmail) && strings.IndexByte(s, '@') >= 0 {
			for _, r := range emails(s) {
				fs = append(fs, Finding{Part: i, Start: r[0], End: r[1], Kind: KindEmail})
			}
		}
		if f.want(KindIBAN) {
			for _, r := range ibans(s) {
				fs = append(fs, Finding{Part: i, Start: r[0], End: r[1], Kind: KindIBAN})
			}
		}
		if f.want(KindCard) || f.want(KindPhone) {
			numbers(s, func(n *number) {
				switch {
				case f.want(KindCard) && n.card():
					fs = append(fs, Finding{Part: i, Start: n.start, End: n.end, Kind: KindCard})
				case f.want(KindPhone) && n.phone():
					fs = append(fs, Finding{Part: i, Start: n.start, End: n.end, Kind: KindPhone})
				}
			})
		}
	}
	return fs, nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// emails finds addresses local@domain.tld around each '@'.
func emails(s string) [][2]int {
	var out [][2]int
	local := func(c byte) bool { return isAlnum(c) || strings.IndexByte("._%+-", c) >= 0 }
	domain := func(c byte) bool { return isAlnum(c) || c == '.' || c == '-' }
	last := 0
	for i := strings.IndexByte(s, '@'); i >= 0; {
		start := i
		for start > last && local(s[start-1]) {
			start--
		}
		end := i + 1
		for end < len(s) && domain(s[end]) {
			end++
		}
		for end > i+1 && (s[end-1] == '.' || s[end-1] == '-') {
			end-- // the sentence's full stop
		}
		d := s[i+1 : end]
		dot := strings.LastIndexByte(d, '.')
		if start < i && dot > 0 && len(d)-dot-1 >= 2 && letters(d[dot+1:]) {
			out = append(out, [2]int{start, end})
			last = end
		}
		j := strings.IndexByte(s[i+1:], '@')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return out
}

func letters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
			return false
		}
	}
	return true
}

// ibans finds IBANs: two capital letters, two check digits and 11 to 30
// letters and digits (spaces allowed between groups of four), that pass
// the ISO 7064 mod-97 check.
func ibans(s string) [][2]int {
	var out [][2]int
	for i := 0; i+15 <= len(s); i++ {
		if !isUpper(s[i]) || !isUpper(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) || (i > 0 && isAlnum(s[i-1])) {
			continue
		}
		var b []byte
		end := i
		for j := i; j < len(s) && len(b) < 34; j++ {
			c := s[j]
			if isDigit(c) || isUpper(c) {
				b = append(b, c)
				end = j + 1
				continue
			}
			if c == ' ' && j+1 < len(s) && isAlnum(s[j+1]) && len(b)%4 == 0 {
				continue
			}
			break
		}
		if end < len(s) && isAlnum(s[end]) {
			continue
		}
		if len(b) >= 15 && mod97(b) {
			out = append(out, [2]int{i, end})
			i = end
		}
	}
	return out
}

// mod97 is the IBAN check: the first four characters moved to the end,
// letters as 10 to 35, the number modulo 97 is 1.
func mod97(b []byte) bool {
	r := 0
	for k := range b {
		c := b[(k+4)%len(b)]
		switch {
		case isDigit(c):
			r = (r*10 + int(c-'0')) % 97
		case isUpper(c):
			r = (r*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return r == 1
}

// A number is a run of digits with single separators (space, '-', '.')
// between them, and what comes before it. Its arrays are fixed, so that
// finding one allocates nothing: prose is full of short numbers.
type number struct {
	start, end int
	digits     [20]byte // the first 20 digits
	nd         int      // how many digits
	seps       [8]byte  // the first separators, in order
	ns         int
	groups     [8]int // the lengths of the first digit groups
	ng         int
	plus       bool // preceded by '+'
	paren      bool // its first group is in parentheses: "(555) 123-4567"
}

func (n *number) digit(c byte) {
	if n.nd < len(n.digits) {
		n.digits[n.nd] = c
	}
	n.nd++
}

func (n *number) sep(c byte) {
	if n.ns < len(n.seps) {
		n.seps[n.ns] = c
	}
	n.ns++
}

func (n *number) group(g int) {
	if n.ng < len(n.groups) {
		n.groups[n.ng] = g
	}
	n.ng++
}

// minNumber is the fewest digits of any number PII looks for (a "+"
// phone number's 8): shorter ones are passed over at once.
const minNumber = 8

// numbers calls fn with each run of digits of s, not inside a word, of at
// least minNumber digits.
func numbers(s string, fn func(n *number)) {
	var n number
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && s[i] != '(' {
			continue
		}
		if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_') {
			for i < len(s) && isAlnum(s[i]) {
				i++
			}
			continue
		}
		n = number{start: i}
		j := i
		if s[j] == '(' {
			if j+4 < len(s) && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) && s[j+4] == ')' {
				n.paren = true
				n.digit(s[j+1])
				n.digit(s[j+2])
				n.digit(s[j+3])
				n.group(3)
				j += 5
				if j < len(s) && s[j] == ' ' {
					n.sep(' ')
					j++
				}
			} else {
				continue
			}
		}
		for j < len(s) {
			g := 0
			for j < len(s) && isDigit(s[j]) {
				n.digit(s[j])
				j++
				g++
			}
			if g == 0 {
				break
			}
			n.group(g)
			n.end = j
			if j+1 < len(s) && (s[j] == ' ' || s[j] == '-' || s[j] == '.') && isDigit(s[j+1]) {
				n.sep(s[j])
				j++
				continue
			}
			break
		}
		if n.end == 0 {
			continue
		}
		i = n.end - 1
		if n.end < len(s) && (isAlnum(s[n.end]) || s[n.end] == '_') {
			i = n.end
			continue // part of a word: "4111…x"
		}
		if n.nd < minNumber {
			continue
		}
		n.plus = n.start > 0 && s[n.start-1] == '+'
		if n.plus {
			n.start--
		}
		fn(&n)
	}
}

// card reports whether n is a payment card number: 13 to 19 digits, in
// one run or in groups separated the same way, passing the Luhn check.
func (n *number) card() bool {
	if n.plus || n.paren || n.nd < 13 || n.nd > 19 || n.digits[0] == '0' || n.ns > len(n.seps) {
		return false
	}
	for _, c := range n.seps[:n.ns] {
		if c != n.seps[0] || c == '.' {
			return false
		}
	}
	return luhn(n.digits[:n.nd])
}

// luhn is the Luhn (mod 10) check of a digit string.
func luhn(d []byte) bool {
	sum := 0
	for i := range d {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// phone reports whether n is a phone number, conservatively: "+" and 8 to
// 15 digits; or 10 digits as (555) 123-4567, 555-123-4567 or 555.123.4567.
func (n *number) phone() bool {
	if n.plus {
		return n.nd >= 8 && n.nd <= 15
	}
	if n.nd != 10 || n.ng != 3 || n.groups[0] != 3 || n.groups[1] != 3 || n.groups[2] != 4 {
		return false
	}
	if n.paren {
		return n.ns >= 1 && n.seps[n.ns-1] == '-'
	}
	return n.ns == 2 && n.seps[0] == n.seps[1] && n.seps[0] != ' '
}
