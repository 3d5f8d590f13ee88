package host

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
)

// FuzzStderrLines: whatever a child writes to stderr, however it is cut
// into writes, the line logger never panics, logs lines within the bound,
// and never logs a registered secret, with or without secrets registered
// (a line over the bound with none registered crashed the process).
func FuzzStderrLines(f *testing.F) {
	f.Add([]byte(strings.Repeat("x", stderrLineBytes+1)+"\n"), uint16(4097), false)
	f.Add([]byte(strings.Repeat("y", 3*stderrLineBytes)+"\nshort\n"), uint16(100), true)
	f.Add([]byte("a\nb\r\n\n"+canaryForFuzz+"\n"), uint16(1), true)
	f.Add([]byte(strings.Repeat("z", stderrLineBytes-5)+canaryForFuzz+"\n"), uint16(7), true)
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint16, withSecret bool) {
		var out bytes.Buffer
		red := secret.NewRedactor()
		if withSecret {
			red.Add(canaryForFuzz)
		}
		log := slog.New(red.Handler(slog.NewTextHandler(&out, &slog.HandlerOptions{ReplaceAttr: dropTime})))
		l := &lineLogger{log: log, red: red}
		n := int(chunk)%(2*stderrLineBytes) + 1
		for p := stream; len(p) > 0; {
			k := min(n, len(p))
			if w, err := l.Write(p[:k]); w != k || err != nil {
				t.Fatalf("Write(%d bytes) = %d, %v", k, w, err)
			}
			p = p[k:]
		}
		l.Write([]byte("\n"))
		if len(l.buf) != 0 {
			t.Fatalf("%d bytes held after a newline", len(l.buf))
		}
		for _, line := range strings.Split(out.String(), "\n") {
			// The logged value is quoted by the text handler, which may
			// escape bytes: bound what the quoting can make of one line.
			if len(line) > 4*stderrLineBytes+200 {
				t.Fatalf("a logged line of %d bytes", len(line))
			}
		}
		if !withSecret {
			return
		}
		if strings.Contains(out.String(), canaryForFuzz) {
			t.Fatalf("the secret reached the log")
		}
		// A line cut inside the secret must not leak its first part; the
		// check holds only when the input has no such part of its own.
		prefix := canaryForFuzz[:12]
		if bytes.Count(stream, []byte(prefix)) == bytes.Count(stream, []byte(canaryForFuzz)) &&
			strings.Contains(out.String(), prefix) {
			t.Fatalf("the first part of a cut secret reached the log")
		}
	})
}

const canaryForFuzz = "CANARY-fuzz-0123456789-secret"

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
