package host_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestCloseEndsWhatItWaitsOn (issue 23 §5): Close returns promptly with
// requests open in both directions — a question a server asked (through
// a call's handler and the host's), whose answerer never answers and whose
// server never withdraws it, and a call whose caller never gives up. The
// go-sdk's ClientSession.Close waits for all of them; Close ends them
// first. The call fails with ErrClosed, the handlers see their context
// end.
func TestCloseEndsWhatItWaitsOn(t *testing.T) {
	asked := make(chan string, 4)
	answered := make(chan error, 4)
	never := func(ctx context.Context, what string) error {
		asked <- what
		<-ctx.Done() // honours its context; nobody answers
		answered <- context.Cause(ctx)
		return ctx.Err()
	}
	opts := &host.Options{
		Elicitation: func(ctx context.Context, server string, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return nil, never(ctx, "elicitation from "+server)
		},
		AdvertiseRoots: true,
		// Where a server asks during the call (2026-07-28 has it ask
		// with an input-required result instead).
		ProtocolVersion: "2025-11-25",
	}
	slow := fixture(t, "slow")
	slow.Timeout = 10 * time.Minute
	h, logs := start(t, []config.Server{fixture(t, "roots"), fixture(t, "elicit"), slow}, opts)

	type outcome struct {
		tool string
		err  error
	}
	ended := make(chan outcome, 3)
	call := func(tool string, args string, o *host.CallOptions) {
		go func() {
			_, err := h.CallTool(context.Background(), tool, []byte(args), o)
			ended <- outcome{tool, err}
		}()
	}
	call("mcp_roots_ask_detached", `{"kind":"roots"}`, &host.CallOptions{
		Roots: func(ctx context.Context, server string) (*mcp.ListRootsResult, error) {
			return nil, never(ctx, "roots from "+server)
		},
	})
	call("mcp_elicit_ask_detached", `{"kind":"elicitation"}`, nil)
	for range 2 {
		select {
		case <-asked:
		case <-time.After(time.Minute):
			t.Fatalf("the handlers were never asked\n%s", logs)
		}
	}
	call("mcp_slow_slow", `{"ms":600000}`, nil)
	wait.Within(t, time.Minute, "the slow call to start", func() (string, bool) {
		s := logs.String()
		return s, strings.Contains(s, "slow: started (600000 ms)")
	})

	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- h.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(20 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("Close still waiting after 20 s with questions and a call open\n%s\ngoroutines:\n%s", logs, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("Close returned after %s", time.Since(start).Round(time.Millisecond))
	for range 2 {
		if cause := <-answered; cause == nil {
			t.Error("a handler's context ended without a cause")
		}
	}
	for range 3 {
		o := <-ended
		if o.tool == "mcp_slow_slow" && !errors.Is(o.err, host.ErrClosed) {
			t.Errorf("the call in flight at Close: %v, want ErrClosed", o.err)
		}
	}
}
