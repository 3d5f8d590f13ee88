package interop

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
)

// canaryAlphabet has characters that JSON, Go quoting and URL escaping all
// change, so that a secret leaked in escaped form is caught too.
const canaryAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789+/=&<>\"%"

// NewCanary returns a fresh random secret for leak tests: 24 bytes that
// start and end with letters (so it cannot hide in a longer token) and hold
// characters every common escaping changes.
func NewCanary(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Cy")
	for range 20 {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(canaryAlphabet))))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteByte(canaryAlphabet[n.Int64()])
	}
	b.WriteString("zQ")
	return b.String()
}

// CanaryForms are the spellings of the canary that must never appear:
// itself, Go- and JSON-quoted (with and without HTML escaping),
// URL-escaped.
func CanaryForms(c string) []string {
	j, _ := json.Marshal(c)
	forms := []string{
		c,
		strings.Trim(strconv.Quote(c), `"`),
		strings.Trim(string(j), `"`),
		url.QueryEscape(c),
		url.PathEscape(c),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(c)
	return append(forms, strings.Trim(strings.TrimSpace(buf.String()), `"`))
}

// CanaryFragment is the length of a canary fragment that counts as a leak:
// a secret cut by a truncation is still a leak.
const CanaryFragment = 12

// Leaks describes each place text holds the canary, in any of its
// [CanaryForms] or as a fragment of [CanaryFragment] bytes, with some
// context; nil when it holds none.
func Leaks(text, canary string) []string {
	var out []string
	for _, f := range CanaryForms(canary) {
		if i := strings.Index(text, f); i >= 0 {
			out = append(out, fmt.Sprintf("the canary (as %q) at byte %d: %s", f, i, Excerpt(text, i)))
		}
	}
	// Every form the redactor knows, base64 in each alignment included.
	red := secret.NewRedactor()
	red.Add(canary)
	if r := red.Redact(text); r != text && len(out) == 0 {
		i := 0
		for i < len(r) && i < len(text) && r[i] == text[i] {
			i++
		}
		out = append(out, fmt.Sprintf("an encoded form of the canary at byte %d: %s", i, Excerpt(text, i)))
	}
	for i := 0; i+CanaryFragment <= len(canary); i++ {
		if j := strings.Index(text, canary[i:i+CanaryFragment]); j >= 0 {
			out = append(out, fmt.Sprintf("a %d-byte fragment of the canary at byte %d: %s", CanaryFragment, j, Excerpt(text, j)))
			break
		}
	}
	return out
}

// Excerpt is the text around byte i.
func Excerpt(s string, i int) string {
	lo, hi := max(0, i-200), min(len(s), i+200)
	return s[lo:hi]
}
