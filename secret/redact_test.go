package secret

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		secrets []string
		in      string
		want    string
	}{
		{nil, "nothing registered", "nothing registered"},
		{[]string{"hunter22"}, "", ""},
		{[]string{"hunter22"}, "pw=hunter22.", "pw=[REDACTED]."},
		{[]string{"hunter22"}, "hunter22hunter22", "[REDACTED][REDACTED]"},
		{[]string{"a", "ab", "abc"}, "a ab abc", "a ab abc"}, // too short to register
		{[]string{"abcd"}, "abc abcd", "abc [REDACTED]"},
		{[]string{"token", "token-long"}, "token-long token", "[REDACTED] [REDACTED]"},
		{[]string{"token-long", "token"}, "token-longer", "[REDACTED]er"},
		{[]string{"abcdef", "defghi"}, "xabcdefghix", "x[REDACTED]x"}, // overlap: the union goes
		{[]string{"aaaa"}, "aaaaaa", "[REDACTED]"},                    // self-overlap
		{[]string{"s3cr\"et"}, `{"k":"s3cr\"et"}`, `{"k":"[REDACTED]"}`},
		{[]string{"p&ss<word>"}, `"p\u0026ss\u003cword\u003e"`, `"[REDACTED]"`},
		{[]string{"p ss/wörd"}, "?q=p+ss%2Fw%C3%B6rd", "?q=[REDACTED]"},
		{[]string{"line1\nline2"}, `"line1\nline2"`, `"[REDACTED]"`},
	}
	for _, tt := range tests {
		r := NewRedactor()
		for _, s := range tt.secrets {
			r.Add(s)
		}
		if got := r.Redact(tt.in); got != tt.want {
			t.Errorf("with %q: Redact(%q) = %q, want %q", tt.secrets, tt.in, got, tt.want)
		}
	}
}

// TestRedactBase64: a secret inside base64 text is caught wherever it sits
// in the encoded bytes (a Basic Authorization header, a token inside an
// encoded JSON blob), in both alphabets, with at most two bytes of it at
// each end left mixed into a group with its neighbours. Forms shorter than
// 8 characters, which would match ordinary words, are not registered.
func TestRedactBase64(t *testing.T) {
	const secret = "s3cr3t-T0k3n/with+more?bytes"
	r := NewRedactor()
	r.Add(secret)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
		for _, prefix := range []string{"", "u:", "user:", "{\"token\":\""} {
			for _, suffix := range []string{"", "\"}", "x"} {
				plain := prefix + secret + suffix
				encoded := enc.EncodeToString([]byte(plain))
				got := r.Redact("Authorization: Basic " + encoded + " end")
				if !strings.Contains(got, Redacted) {
					t.Errorf("%q encoded as %q: not redacted", plain, encoded)
					continue
				}
				// What is left of the encoding is the prefix's and the
				// suffix's groups: each end may hold one group (4
				// characters) mixed with up to two bytes of the secret.
				kept := strings.TrimSuffix(strings.TrimPrefix(got, "Authorization: Basic "), " end")
				kept = strings.Replace(kept, Redacted, "", 1)
				if max := (len(prefix)+2)/3*4 + (len(suffix)+2)/3*4 + 8; len(kept) > max {
					t.Errorf("%q encoded as %q: %q left, more than the ends' groups", plain, encoded, got)
				}
			}
		}
	}
	// A short secret's encoding alone is caught; its 4-character core
	// (from 3 bytes) is not registered.
	short := NewRedactor()
	short.Add("abcd")
	if got := short.Redact("YWJjZA== YWJj"); got != Redacted+" YWJj" {
		t.Errorf("Redact = %q, want the padded encoding only", got)
	}
}

// flushWriter gets the *Writer out of Redactor.Writer.
func flushWriter(t *testing.T, w io.Writer) *Writer {
	t.Helper()
	rw, ok := w.(*Writer)
	if !ok {
		t.Fatalf("Redactor.Writer returned %T, want *Writer", w)
	}
	return rw
}

// Every way of splitting the input into two or three writes gives what
// Redact gives for the whole.
func TestWriterSplits(t *testing.T) {
	cases := []struct {
		secrets []string
		in      string
	}{
		{[]string{"hunter22"}, "a hunter22 b hunter2 hunter22\n"},
		{[]string{"abcdef", "defghi"}, "xxabcdefghiyy abcdef defghi"},
		{[]string{"abab"}, "ababababa abab"},
		{[]string{"XYZW", "ZW12"}, "..XYZW12..ZW12.."},
		{[]string{"tok\nen", "secret-value"}, "tok\nen\nsecret-value\n"},
	}
	for _, c := range cases {
		r := NewRedactor()
		for _, s := range c.secrets {
			r.Add(s)
		}
		want := r.Redact(c.in)
		for i := 0; i <= len(c.in); i++ {
			for j := i; j <= len(c.in); j++ {
				var buf bytes.Buffer
				w := flushWriter(t, r.Writer(&buf))
				for _, part := range []string{c.in[:i], c.in[i:j], c.in[j:]} {
					if n, err := io.WriteString(w, part); n != len(part) || err != nil {
						t.Fatalf("Write(%q) = %d, %v", part, n, err)
					}
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				if got := buf.String(); got != want {
					t.Fatalf("with %q: writes %q|%q|%q gave %q, want %q", c.secrets, c.in[:i], c.in[i:j], c.in[j:], got, want)
				}
			}
		}
	}
}

func TestWriterByteAtATime(t *testing.T) {
	r := NewRedactor()
	r.Add("ghp_0123456789")
	var buf bytes.Buffer
	w := flushWriter(t, r.Writer(&buf))
	in := "token ghp_0123456789 and ghp_012 then ghp_0123456789\n"
	for i := range len(in) {
		w.Write([]byte{in[i]})
		if strings.Contains(buf.String(), "ghp_0123456789") {
			t.Fatalf("secret written after byte %d: %q", i, buf.String())
		}
	}
	// Everything up to the newline is out without a Flush: nothing after it
	// can start a secret.
	if got, want := buf.String(), "token [REDACTED] and ghp_012 then [REDACTED]\n"; got != want {
		t.Errorf("before Flush: %q, want %q", got, want)
	}
}

func TestWriterHoldsAtMostMaxLenMinusOne(t *testing.T) {
	r := NewRedactor()
	r.Add("0123456789")
	var buf bytes.Buffer
	w := flushWriter(t, r.Writer(&buf))
	io.WriteString(w, "xx012345678")
	if got := buf.String(); got != "xx" {
		t.Errorf("held back too much or too little: wrote %q, want %q", got, "xx")
	}
	w.Flush()
	if got := buf.String(); got != "xx012345678" {
		t.Errorf("after Flush: %q", got)
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterError(t *testing.T) {
	w := NewRedactor().Writer(errWriter{})
	if _, err := io.WriteString(w, "hello\n"); err == nil {
		t.Errorf("Write to a failing writer succeeded")
	}
}

func TestRedactorConcurrent(t *testing.T) {
	r := NewRedactor()
	var out bytes.Buffer
	var outMu sync.Mutex
	w := r.Writer(writerFunc(func(p []byte) (int, error) {
		outMu.Lock()
		defer outMu.Unlock()
		return out.Write(p)
	}))
	log := slog.New(r.Handler(slog.NewTextHandler(io.Discard, nil)))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := fmt.Sprintf("secret-%d-value", i)
			r.Add(s)
			for range 100 {
				if got := r.Redact("x " + s + " y"); got != "x [REDACTED] y" {
					t.Errorf("Redact = %q", got)
					return
				}
				fmt.Fprintf(w, "line %s\n", s)
				log.Info("msg "+s, "k", s)
			}
		})
	}
	wg.Wait()
	w.(*Writer).Flush()
	if strings.Contains(out.String(), "-value") {
		t.Errorf("a secret reached the writer")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestHandlerNestedGroupsAndErrors(t *testing.T) {
	r := NewRedactor()
	r.Add("tok_ABCDEFG")
	var buf bytes.Buffer
	log := slog.New(r.Handler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	log.With("bound", "b tok_ABCDEFG").WithGroup("g").Info("call tok_ABCDEFG",
		slog.Group("outer", slog.Group("inner", "auth", "Bearer tok_ABCDEFG", "n", 3)),
		"err", fmt.Errorf("dial: %w", errors.New("401 for tok_ABCDEFG")),
		"clean", errors.New("no secret here"),
	)
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("output %q is not JSON: %v", buf.String(), err)
	}
	want := `{"bound":"b [REDACTED]","g":{"clean":"no secret here","err":"dial: 401 for [REDACTED]","outer":{"inner":{"auth":"Bearer [REDACTED]","n":3}}},"level":"INFO","msg":"call [REDACTED]"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

type stringer struct{ s string }

func (s stringer) String() string { return "stringer(" + s.s + ")" }

type textMarshaler struct{ s string }

func (m textMarshaler) MarshalText() ([]byte, error) { return []byte("text(" + m.s + ")"), nil }

type jsonOnly struct{ s string }

func (j *jsonOnly) MarshalJSON() ([]byte, error) { return json.Marshal(j.s) }

type valuer struct{ s string }

func (v valuer) LogValue() slog.Value { return slog.GroupValue(slog.String("inside", v.s)) }

type formatter struct{ s string }

func (f formatter) Error() string { return "formatter error" }
func (f formatter) Format(s fmt.State, verb rune) {
	io.WriteString(s, "detail: "+f.s)
}

type panicky struct{}

func (*panicky) String() string { panic("nil receiver") }

// The canary is logged every way we can think of; it must never reach the
// output bytes, with a JSON or a text handler underneath.
func TestCanary(t *testing.T) {
	const canary = `CANARY-7f3a"<&>\x`
	r := NewRedactor()
	r.Add(canary)
	type creds struct {
		User, Token string
	}
	for name, newHandler := range map[string]func(io.Writer) slog.Handler{
		"json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
		"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
	} {
		var buf bytes.Buffer
		log := slog.New(r.Handler(newHandler(&buf)))
		log.Info(canary)
		log.Info("msg " + canary + " mid")
		log.Info(fmt.Sprintf("printf %s %q %v", canary, canary, []string{canary}))
		log.Info("attr", "k", canary)
		log.Info("attr", canary, "key is the canary")
		log.Info("attr", slog.String("s", "pre"+canary+"post"))
		log.Info("any", slog.Any("a", canary))
		log.Info("bytes", "b", []byte(canary))
		log.Info("raw json", "j", json.RawMessage(`{"t":"`+canary+`"}`))
		log.Info("error", "err", errors.New(canary))
		log.Info("wrapped", "err", fmt.Errorf("outer: %w", fmt.Errorf("inner: %s", canary)))
		log.Info("joined", "err", errors.Join(errors.New("a"), errors.New(canary)))
		log.Info("formatter", "err", formatter{canary})
		log.Info("stringer", "s", stringer{canary})
		log.Info("textmarshaler", "t", textMarshaler{canary})
		log.Info("jsonmarshaler", "j", &jsonOnly{canary})
		log.Info("struct", "c", creds{"u", canary})
		log.Info("pointer", "c", &creds{"u", canary})
		log.Info("pointers", "c", []*creds{{"u", canary}})
		log.Info("map", "m", map[string]string{"token": canary})
		log.Info("map key", "m", map[string]int{canary: 1})
		log.Info("slice", "s", []string{"x", canary})
		log.Info("nested any", "m", map[string]any{"a": []any{map[string]any{"t": canary}}})
		log.Info("valuer", "v", valuer{canary})
		log.Info("group", slog.Group("g", slog.Group("h", "k", canary, "e", errors.New(canary))))
		log.Info("group name", slog.Group(canary, "k", "v"))
		log.With("bound", canary).Info("with")
		log.With(slog.Group("bg", "k", canary)).Info("with group")
		log.WithGroup(canary).Info("with group name", "k", "v")
		log.WithGroup("wg").With("k", canary).Info("nested with", slog.Group("x", "y", canary))
		log.LogAttrs(context.Background(), slog.LevelWarn, canary, slog.Any("a", canary))
		log.Info("panicky", "p", (*panicky)(nil))
		slog.NewLogLogger(r.Handler(newHandler(&buf)), slog.LevelInfo).Printf("std log %s", canary)
		log.Info("split", "a", canary[:5], "b", canary[5:]) // not a secret once split; see below

		out := buf.String()
		// The halves of a split canary are not the canary; only the whole is.
		if strings.Contains(out, canary) {
			t.Errorf("%s: canary in output:\n%s", name, out)
		}
		for _, form := range []string{`CANARY-7f3a\"`, `CANARY-7f3a\\\"`, `CANARY-7f3a"<`, `CANARY-7f3a\"\u003c`, `CANARY-7f3a\"<`} {
			if strings.Contains(out, form) {
				t.Errorf("%s: canary in encoded form %s in output:\n%s", name, form, out)
			}
		}
		if !strings.Contains(out, Redacted) {
			t.Errorf("%s: no redaction marker in output", name)
		}
	}
}

// The Writer catches the canary in output that was encoded before it.
func TestCanaryWriter(t *testing.T) {
	const canary = `CANARY-7f3a"<&>\x`
	r := NewRedactor()
	r.Add(canary)
	var buf bytes.Buffer
	w := r.Writer(&buf)
	slog.New(slog.NewJSONHandler(w, nil)).Info("m", "k", canary)
	slog.New(slog.NewTextHandler(w, nil)).Info("m", "k", canary)
	log.New(w, "", 0).Printf("%s %q", canary, canary)
	json.NewEncoder(w).Encode(map[string]string{"k": canary})
	w.(*Writer).Flush()
	out := buf.String()
	if strings.Contains(out, "CANARY-7f3a") {
		t.Errorf("canary in output:\n%s", out)
	}
}
