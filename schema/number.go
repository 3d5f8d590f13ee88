package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Numbers in call arguments are kept digit for digit (json.Number), but a
// server reads them into the types its language has: a 64-bit float for a
// number (Go, JavaScript, Python's float), a 64-bit integer for an integer
// (Go's int64, Java's long, Rust's i64; Python's int is unbounded). A value
// beyond those is valid JSON that no such server can read: 1e400 becomes
// an error or Infinity, 9223372036854775808 an error or a wrapped value, far
// from the call that caused it. Validate refuses them, naming where they
// are, so that the model or client that wrote them can correct the call.
//
// Integers between 2^53 and 2^63 are kept: a JavaScript server reads them
// inexactly, but Go and Python servers read them exactly, and such values
// are real (64-bit ids).

// wideInt is an integer in the arguments beyond int64's range, where it
// is and its value plus one half (see Schema.integerProblems).
type wideInt struct {
	path []any
	n    json.Number
	half json.Number
}

var (
	minInt64 = new(big.Rat).SetInt64(math.MinInt64)
	maxInt64 = new(big.Rat).SetInt64(math.MaxInt64)
	oneHalf  = big.NewRat(1, 2)
)

// numberProblem says why no server can read the JSON number n as a number,
// or returns "".
func numberProblem(n string) string {
	if short(n) {
		return ""
	}
	if !numberInRange(n) {
		// Checked first: the validator computes with exact rationals, and
		// 1E999999999 would cost it gigabytes.
		return fmt.Sprintf("number %s is out of range: its exponent is beyond ±%d", clipNumber(n), maxExponent)
	}
	if f, err := strconv.ParseFloat(n, 64); err != nil && math.IsInf(f, 0) {
		return fmt.Sprintf("number %s is out of range: servers read JSON numbers as 64-bit floats, which end near ±1.8e308", clipNumber(n))
	}
	return ""
}

// beyondInt64 reports whether n is an integer (1e19 and 1.0 are) outside
// int64's range, and returns n + 1/2, an exact decimal that differs from n
// only in not being an integer.
func beyondInt64(n string) (json.Number, bool) {
	if short(n) {
		return "", false
	}
	if !strings.ContainsAny(n, ".eE") {
		if _, err := strconv.ParseInt(n, 10, 64); err == nil {
			return "", false
		}
	} else if f, err := strconv.ParseFloat(n, 64); err == nil && math.Abs(f) < 1<<62 {
		return "", false
	}
	r, ok := new(big.Rat).SetString(n)
	if !ok || !r.IsInt() || (r.Cmp(minInt64) >= 0 && r.Cmp(maxInt64) <= 0) {
		return "", false
	}
	return json.Number(r.Add(r, oneHalf).FloatString(1)), true
}

// short reports whether n is a plain integer of at most 18 digits, which
// every server reads exactly (int64 holds 18 digits): the common case,
// decided without parsing.
func short(n string) bool {
	if len(n) > 19 || (len(n) == 19 && n[0] != '-') {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// clipNumber bounds a number quoted in a message.
func clipNumber(n string) string {
	if len(n) <= 40 {
		return n
	}
	return n[:40] + "…"
}

func wideIntMessage(n json.Number) string {
	return fmt.Sprintf("integer %s is out of range: servers read integers as 64-bit, from %d to %d", clipNumber(string(n)), math.MinInt64, math.MaxInt64)
}
