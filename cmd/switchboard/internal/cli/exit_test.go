package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestFailureCodes: a failure's --json code and exit code come from what
// the error is (its kind in the daemon's table), matched with errors.Is and
// errors.As, never by its text: also an engine's refusal that crossed the
// local socket (an answer its gate's schema refuses exited 2 only because
// its message said "the answer").
func TestFailureCodes(t *testing.T) {
	wire := func(err error) error { return classify(err).Errorf("%s", err) } // an answer of the daemon, decoded
	for _, tc := range []struct {
		err  error
		kind daemon.Kind
		exit int
	}{
		{fmt.Errorf("%w %q", host.ErrUnknownTool, "x"), daemon.KindUnknownTool, ExitUsage},
		{&host.CallError{Server: "s", Tool: "t", Err: fmt.Errorf("%w: /a", host.ErrInvalidArguments)}, daemon.KindInvalidArguments, ExitUsage},
		{&host.CallError{Server: "s", Tool: "t", Err: host.ErrTimeout}, daemon.KindTimeout, ExitFailed},
		{&host.StartError{Failed: []*host.ServerError{{Server: "s", Err: errors.New("boom")}}}, daemon.KindStartFailed, ExitFailed},
		{daemon.KindUnknownPrompt.Errorf("no prompt"), daemon.KindUnknownPrompt, ExitUsage},
		{fmt.Errorf("agent x: %w", agent.ErrNotFound), daemon.KindUnknownAgent, ExitUsage},
		{fmt.Errorf("%w: run r", workflow.ErrNoRun), daemon.KindUnknownRun, ExitUsage},
		{fmt.Errorf("%w: gate g", workflow.ErrGateAnswered), daemon.KindAnswered, ExitUsage},
		{fmt.Errorf("gate g: the answer: %w", &schema.ValidationError{}), daemon.KindInvalid, ExitUsage},
		{fmt.Errorf("gate g: the answer: /x %w", workflow.ErrHoldsSecret), daemon.KindInvalid, ExitUsage},
		{errors.New("the answer: anything"), daemon.KindFailed, ExitFailed},
	} {
		for _, err := range []error{tc.err, wire(tc.err)} {
			var ee *exitError
			if !errors.As(failed(err), &ee) || ee.kind != tc.kind || ee.kind.Exit() != tc.exit {
				t.Errorf("failed(%v) = %+v, want kind %q, exit %d", err, ee, tc.kind, tc.exit)
			}
		}
	}
	if err := wire(fmt.Errorf("%w: gate g", workflow.ErrGateAnswered)); !errors.Is(err, workflow.ErrGateAnswered) {
		t.Errorf("%v from the wire does not match workflow.ErrGateAnswered", err)
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
