package secret

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted replaces every registered value.
const Redacted = "[REDACTED]"

// MinLen is the shortest value Add registers. Redacting every "a" or "42"
// would destroy all output while protecting nothing: a secret that short is
// guessable anyway.
const MinLen = 4

// A Redactor replaces registered secret values with "[REDACTED]". The zero
// value is not usable; call NewRedactor. Safe for concurrent use.
type Redactor struct {
	mu  sync.Mutex // serializes Add
	set atomic.Pointer[valueSet]
}

// valueSet is an immutable snapshot of the registered values, so that Redact
// never waits for Add.
type valueSet struct {
	values []string // longest first, no duplicates
	maxLen int
}

// NewRedactor returns an empty Redactor.
func NewRedactor() *Redactor {
	r := &Redactor{}
	r.set.Store(&valueSet{})
	return r
}

// Add registers a secret value. Values shorter than [MinLen] bytes are
// ignored (see MinLen). Besides the value itself, Add registers the forms it
// takes when quoted as a Go or JSON string, when URL-escaped and when
// base64-encoded (see [base64Forms]), so that it is also caught in output
// that was encoded before reaching a [Writer], such as a Basic
// Authorization header.
func (r *Redactor) Add(value string) {
	if len(value) < MinLen {
		return
	}
	forms := []string{value, strconv.Quote(value), url.QueryEscape(value), url.PathEscape(value)}
	if b, err := json.Marshal(value); err == nil {
		forms = append(forms, string(b))
	}
	forms = append(forms, base64Forms(value)...)
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.set.Load()
	values := slices.Clone(old.values)
	for _, f := range forms {
		f = strings.TrimSuffix(strings.TrimPrefix(f, `"`), `"`)
		if len(f) >= MinLen && !slices.Contains(values, f) {
			values = append(values, f)
		}
	}
	if len(values) == len(old.values) {
		return
	}
	// Longest first, so a run is found from its longest value; the union
	// below makes the order matter only for speed.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	r.set.Store(&valueSet{values: values, maxLen: len(values[0])})
}

// minBase64Len is the shortest base64 form registered: shorter ones (from
// fewer than six bytes of a secret) are ordinary words often enough to
// garble unrelated output.
const minBase64Len = 8

// base64Forms returns what a value looks like inside base64 text, in the
// standard and the URL-safe alphabets. Where the value starts in the
// encoded text decides its encoding: each 3 bytes become 4 characters, and
// the characters of a group that holds bytes from around the value depend on
// those bytes. So for each of the three alignments the form is the encoding
// of the whole groups of the value's bytes that the alignment leaves: text
// that holds the value anywhere, encoded, holds one of them. Up to two bytes
// at each end of the value stay visible, mixed into a group with their
// neighbours; the full encoding of the value alone is registered too.
func base64Forms(value string) []string {
	var forms []string
	add := func(b []byte, padded bool) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if !padded {
				enc = enc.WithPadding(base64.NoPadding)
			}
			if f := enc.EncodeToString(b); len(f) >= minBase64Len {
				forms = append(forms, f)
			}
		}
	}
	add([]byte(value), true)
	for skip := range 3 {
		if rest := len(value) - skip; rest >= 3 {
			add([]byte(value[skip:skip+rest/3*3]), false)
		}
	}
	return forms
}

// MaxLen is the length of the longest registered form of a value: text cut
// at an arbitrary point can hold a fragment of a secret only within MaxLen-1
// bytes of the cut.
func (r *Redactor) MaxLen() int { return r.set.Load().maxLen }

// Redact returns s with every registered value replaced. Where occurrences
// overlap ("abcdef" and "defghi" in "abcdefghi") their union is replaced by
// one [REDACTED], so no fragment of either survives.
func (r *Redactor) Redact(s string) string {
	set := r.set.Load()
	runs := set.runs(s)
	if len(runs) == 0 {
		return s
	}
	return replaceRuns(s, runs)
}

// replaceRuns replaces each run of s with [Redacted].
func replaceRuns(s string, runs []run) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, run := range runs {
		b.WriteString(s[last:run.start])
		b.WriteString(Redacted)
		last = run.end
	}
	b.WriteString(s[last:])
	return b.String()
}

type run struct{ start, end int }

// runs returns the merged byte ranges of s covered by registered values,
// in order.
func (set *valueSet) runs(s string) []run {
	var rs []run
	for _, v := range set.values {
		for off := 0; ; {
			i := strings.Index(s[off:], v)
			if i < 0 {
				break
			}
			rs = append(rs, run{off + i, off + i + len(v)})
			off += i + 1 // find overlapping occurrences too
		}
	}
	if len(rs) < 2 {
		return rs
	}
	slices.SortFunc(rs, func(a, b run) int { return a.start - b.start })
	merged := rs[:1]
	for _, r := range rs[1:] {
		last := &merged[len(merged)-1]
		if r.start < last.end {
			last.end = max(last.end, r.end)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// partial returns the length of the longest suffix of s that is a proper
// prefix of a registered value: bytes that may become a secret once more
// input arrives.
func (set *valueSet) partial(s string) int {
	best := 0
	for _, v := range set.values {
		n := min(len(v)-1, len(s))
		for k := n; k > best; k-- {
			if s[len(s)-k] == v[0] && strings.HasPrefix(v, s[len(s)-k:]) {
				best = k
				break
			}
		}
	}
	return best
}

// Writer returns a writer that redacts what it writes to w. The result is a
// *[Writer]; call its Flush when done, or the last few bytes may stay held.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	return &Writer{r: r, w: w}
}

// A Writer redacts a byte stream, also a secret split across Write calls.
// It holds back only a tail that could still become a secret (at most the
// longest registered value's length minus one byte), so a line that ends in
// a newline normally goes out at once. Safe for concurrent use.
type Writer struct {
	r *Redactor
	w io.Writer

	mu sync.Mutex
	// look is raw input already written out, kept so that a secret that
	// starts there (inside an earlier redaction) is still recognised.
	look []byte
	// pending is raw input not yet written out.
	pending []byte
}

// Write redacts p and writes what can no longer be part of a secret to the
// underlying writer. It reports len(p) when that write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.emit(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes out everything held back. It does not close or flush the
// underlying writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.emit(nil, true)
}

func (w *Writer) emit(p []byte, all bool) error {
	set := w.r.set.Load()
	buf := string(w.look) + string(w.pending) + string(p)
	from := len(w.look)
	runs := set.runs(buf)
	cut := len(buf)
	if !all {
		cut = max(from, len(buf)-set.partial(buf))
		// A cut inside a finished match moves to its end: the match is
		// written redacted, and look keeps its bytes for any secret that
		// started inside it.
		for _, r := range runs {
			if r.start < cut && cut < r.end {
				cut = r.end
			}
		}
	}
	var out strings.Builder
	pos := from
	for _, r := range runs {
		if r.end <= from || r.start >= cut {
			continue
		}
		if r.start > pos {
			out.WriteString(buf[pos:r.start])
		}
		// A run that began in look was already announced.
		if r.start >= from {
			out.WriteString(Redacted)
		}
		pos = min(r.end, cut)
	}
	if pos < cut {
		out.WriteString(buf[pos:cut])
	}
	keep := max(0, set.maxLen-1)
	w.look = append(w.look[:0], buf[max(0, cut-keep):cut]...)
	w.pending = append(w.pending[:0], buf[cut:]...)
	if out.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w.w, out.String())
	return err
}
