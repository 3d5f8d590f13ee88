package interop

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
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

// LeaksAtRest is [Leaks] for what a database holds: it looks in text and
// in every run of base64 in it, decoded (DBOS keeps workflow inputs,
// outputs and step results as base64 of their JSON, where a quote or an
// angle bracket of the canary is escaped before encoding, so that no
// base64 form of the canary itself appears), and leaves out fragments:
// pieces of a secret a test splits on purpose (halves a template joins)
// are not leaks where they are stored apart.
func LeaksAtRest(text, canary string) []string {
	var out []string
	check := func(where, s string) {
		for _, l := range Leaks(s, canary) {
			if !strings.Contains(l, "-byte fragment of the canary") {
				out = append(out, where+l)
			}
		}
	}
	check("", text)
	for _, m := range base64Run.FindAllString(text, -1) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(m); err == nil {
				check("in base64 decoded: ", string(b))
				break
			}
		}
	}
	return out
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`)

// TableRows returns every row of every table of db, each as text, by
// table ("schema.table" on PostgreSQL): what a test scans for a secret
// kept at rest. postgres says which database db is (SQLite otherwise).
func TableRows(ctx context.Context, db *sql.DB, postgres bool) (map[string][]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if postgres {
		q = `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
			WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, tb := range tables {
		q := `SELECT * FROM "` + tb + `"`
		if postgres {
			q = `SELECT t::text FROM ` + tb + ` t`
		}
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tb, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: %w", tb, err)
			}
			var b strings.Builder
			for i, v := range vals {
				if i > 0 {
					b.WriteString(" | ")
				}
				if bs, ok := v.([]byte); ok {
					b.Write(bs)
				} else {
					fmt.Fprint(&b, v)
				}
			}
			out[tb] = append(out[tb], b.String())
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", tb, err)
		}
	}
	return out, nil
}
