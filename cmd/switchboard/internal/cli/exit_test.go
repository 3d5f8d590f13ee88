package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// TestFailureCodes: a failure's --json code and exit code come from what
// the error is, and an exitError made without a code gets one that agrees
// with its exit code (a usage error was "failed" with exit 2).
func TestFailureCodes(t *testing.T) {
	for _, tc := range []struct {
		err        error
		kind       string
		exit       int
		madeAsCode int // for kindOf: an exitError with this code and no kind
		kindOf     string
	}{
		{fmt.Errorf("%w %q", host.ErrUnknownTool, "x"), codeUnknownTool, ExitUsage, ExitUsage, codeUnknownTool},
		{&host.CallError{Server: "s", Tool: "t", Err: fmt.Errorf("%w: /a", host.ErrInvalidArguments)}, codeInvalidArguments, ExitUsage, ExitFailed, codeFailed},
		{&host.CallError{Server: "s", Tool: "t", Err: host.ErrTimeout}, codeTimeout, ExitFailed, ExitFailed, codeTimeout},
		{&host.StartError{Failed: []*host.ServerError{{Server: "s", Err: errors.New("boom")}}}, codeStartFailed, ExitFailed, ExitFailed, codeStartFailed},
		{notFoundErr(errUnknownPrompt, "no prompt"), codeUnknownPrompt, ExitUsage, ExitUsage, codeUnknownPrompt},
		{errors.New("anything"), codeFailed, ExitFailed, ExitUsage, codeUsage},
		{errors.New("anything"), codeFailed, ExitFailed, ExitInterrupted, codeInterrupted},
	} {
		var ee *exitError
		if !errors.As(failed(tc.err), &ee) || ee.kind != tc.kind || ee.code != tc.exit {
			t.Errorf("failed(%v) = %+v, want kind %q, exit %d", tc.err, ee, tc.kind, tc.exit)
		}
		if got := kindOf(&exitError{code: tc.madeAsCode, err: tc.err}); got != tc.kindOf {
			t.Errorf("kindOf(exit %d, %v) = %q, want %q", tc.madeAsCode, tc.err, got, tc.kindOf)
		}
	}
}

// TestProblemDetails: configuration problems, joined and wrapped, become
// fields; anything else a message alone.
func TestProblemDetails(t *testing.T) {
	p1 := &config.Problem{Pos: config.Position{File: "a.toml", Line: 3}, Field: "mcp_servers[0].url", Msg: "bad"}
	p2 := &config.Problem{Pos: config.Position{File: "b.md"}, Field: "model", Msg: "worse"}
	err := errors.Join(p1, fmt.Errorf("agent x: %w", p2), errors.New("plain"))
	want := []problemJSON{
		{File: "a.toml", Line: 3, Path: "mcp_servers[0].url", Message: "bad"},
		{File: "b.md", Path: "model", Message: "worse"},
		{Message: "plain"},
	}
	if diff := cmp.Diff(want, problemDetails(err)); diff != "" {
		t.Errorf("problemDetails (-want +got):\n%s", diff)
	}
}
