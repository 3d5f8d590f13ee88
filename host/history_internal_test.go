package host

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
)

// A server's history keeps its last HistoryStderrLines stderr lines, each
// within HistoryStderrLineBytes, redacted and cleaned of terminal escapes,
// and counts what it dropped.
func TestHistoryStderrBounds(t *testing.T) {
	const canary = "CANARY-history-0123456789abcdef"
	red := secret.NewRedactor()
	red.Add(canary)
	s := &server{h: &Host{red: red, lim: &limits{}}}
	l := &lineLogger{log: slog.New(slog.NewTextHandler(io.Discard, nil)), red: red, lines: s.stderrLine}
	extra := 50
	for i := range HistoryStderrLines + extra {
		fmt.Fprintf(l, "line %d token=%s \x1b[31mred\x1b[0m\n", i, canary)
	}
	l.Write([]byte(strings.Repeat("x", 3*HistoryStderrLineBytes) + "\n"))
	hs := s.hist.snapshot("s")
	if len(hs.Stderr) != HistoryStderrLines || hs.StderrDropped != extra+1 {
		t.Fatalf("kept %d lines, dropped %d; want %d and %d", len(hs.Stderr), hs.StderrDropped, HistoryStderrLines, extra+1)
	}
	if got, want := hs.Stderr[0].Line, fmt.Sprintf("line %d token=[REDACTED] red", extra+1); got != want {
		t.Errorf("oldest line kept = %q, want %q", got, want)
	}
	last := hs.Stderr[len(hs.Stderr)-1].Line
	if len(last) > HistoryStderrLineBytes+len(" [cut]") || !strings.HasSuffix(last, " [cut]") {
		t.Errorf("a long line is kept as %d bytes ending %q, want at most %d and [cut]", len(last), last[max(0, len(last)-10):], HistoryStderrLineBytes)
	}
	for _, l := range hs.Stderr {
		if strings.Contains(l.Line, canary) || strings.Contains(l.Line, "\x1b") || l.Time.IsZero() {
			t.Fatalf("kept line %q (at %v): a secret, an escape or no time", l.Line, l.Time)
		}
	}
}

// Incidents are bounded too, oldest dropped first.
func TestHistoryIncidentsBounds(t *testing.T) {
	var hs history
	for i := range HistoryIncidents + 3 {
		hs.incident(Incident{Kind: IncidentLost, Reason: fmt.Sprint(i)})
	}
	got := hs.snapshot("s")
	if len(got.Incidents) != HistoryIncidents || got.IncidentsDropped != 3 || got.Incidents[0].Reason != "3" ||
		got.Incidents[HistoryIncidents-1].Reason != fmt.Sprint(HistoryIncidents+2) {
		t.Errorf("kept %d incidents (first %q), dropped %d", len(got.Incidents), got.Incidents[0].Reason, got.IncidentsDropped)
	}
}
