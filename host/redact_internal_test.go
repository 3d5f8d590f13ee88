package host

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/transport"
)

// A secret cut in two by a bound must not leak its first part: the redactor
// only recognises it whole.
func TestCutSecretsDoNotLeak(t *testing.T) {
	const canary = "CANARY-0123456789abcdef-secret"
	red := secret.NewRedactor()
	red.Add(canary)
	half := canary[:len(canary)/2]

	t.Run("stderr line over the bound", func(t *testing.T) {
		var out bytes.Buffer
		l := &lineLogger{log: slog.New(red.Handler(slog.NewTextHandler(&out, nil))), red: red}
		// The bound falls in the middle of the canary.
		line := strings.Repeat("x", stderrLineBytes-len(half)) + canary + "\n"
		l.Write([]byte(line))
		if strings.Contains(out.String(), half[:8]) {
			t.Errorf("the first half of a cut secret reached the log: %q", out.String()[len(out.String())-80:])
		}
		if !strings.Contains(out.String(), "[cut]") {
			t.Errorf("the cut line is not marked: %q", out.String())
		}
	})
	t.Run("stderr tail", func(t *testing.T) {
		s := &server{h: &Host{red: red}, stderr: transport.NewTailBuffer(stderrTailBytes)}
		// The tail's start falls in the middle of the canary.
		s.stderr.Write([]byte(canary + strings.Repeat("y", stderrTailBytes-len(half)) + "\nlast line\n"))
		got := s.explain(errors.New("failed")).Error()
		if strings.Contains(got, canary[len(canary)/2:]) {
			t.Errorf("the second half of a cut secret is in the error: %q", got)
		}
		if !strings.Contains(got, "last line") {
			t.Errorf("the tail lost its complete lines: %q", got)
		}
	})
}
