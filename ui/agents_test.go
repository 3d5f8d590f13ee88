package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/ui"
)

// stepRunner is an agent runner at the edge we cannot run here (a
// model): its agent "echoer" calls the host's real echo tool with the
// prompt, one event at a time, each released by the test.
type stepRunner struct{ next chan struct{} }

func (stepRunner) ListAgents() ([]daemon.AgentInfo, error) {
	return []daemon.AgentInfo{{ID: "echoer", Description: "Echoes the prompt", File: "echoer.md"}}, nil
}

func (s stepRunner) RunAgent(ctx context.Context, h *host.Host, name, prompt, runID string, emit func(daemon.AgentEvent)) error {
	ev := func(seq int64, typ string, v map[string]any) {
		v["type"], v["seq"], v["run_id"] = typ, seq, runID
		b, _ := json.Marshal(v)
		emit(daemon.AgentEvent{Type: typ, Seq: seq, Terminal: strings.HasPrefix(typ, "run:") && typ != "run:started", Data: b})
	}
	// Each wait ends with the run too: a test that failed meanwhile
	// closes the daemon, which cancels its runs and waits for them.
	wait := func() error {
		select {
		case <-s.next:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ev(1, "run:started", map[string]any{"agent": name, "model": "fake:m"})
	if err := wait(); err != nil {
		return err
	}
	args, _ := json.Marshal(map[string]string{"text": prompt})
	ev(2, "agent:tool_call", map[string]any{"step": 1, "call": map[string]any{"id": "c1", "tool": "mcp_a_echo", "arguments": json.RawMessage(args)}})
	res, err := h.CallTool(ctx, "mcp_a_echo", args, nil)
	ok := err == nil && !res.IsError
	ev(3, "agent:tool_result", map[string]any{"step": 1, "call": map[string]any{"id": "c1", "tool": "mcp_a_echo", "success": ok}})
	if err := wait(); err != nil {
		return err
	}
	ev(4, "run:completed", map[string]any{"text": "said: " + prompt})
	return nil
}

// TestAgents: the agents listed, a run started with a prompt (a missing
// prompt refused next to its field), its events appearing on the run's
// page's poll as they happen, and its answer once it completes.
func TestAgents(t *testing.T) {
	r := stepRunner{next: make(chan struct{})}
	s := serveWith(t, func(o *daemon.Options) { o.AgentRunner = r },
		config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
	csrf := []string{ui.CSRFHeader, "1"}
	status, _, body := s.do("GET", "/agents", nil)
	if status != http.StatusOK || !strings.Contains(body, "Echoes the prompt") || !strings.Contains(body, `<option value="echoer"`) {
		t.Fatalf("GET /agents: %d\n%s", status, body)
	}
	status, _, body = s.do("POST", "/agents/run", url.Values{"agent": {"echoer"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `id="f-prompt-err" class="error">required`) || len(s.d.AgentRuns()) != 0 {
		t.Errorf("no prompt: %d\n%s", status, body)
	}
	status, _, body = s.do("POST", "/agents/run", url.Values{"agent": {"nosuch"}, "prompt": {"x"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `id="f-agent-err"`) {
		t.Errorf("no such agent: %d\n%s", status, body)
	}
	status, hdr, _ := s.do("POST", "/agents/run", url.Values{"agent": {"echoer"}, "prompt": {"hello agent"}}, append(csrf, "HX-Request", "true")...)
	loc := hdr.Get("HX-Redirect")
	if status != http.StatusNoContent || !strings.HasPrefix(loc, "/agents/runs/") {
		t.Fatalf("start: %d HX-Redirect %q", status, loc)
	}
	// pollFor polls the run's page's fragment as the page does, from the
	// seq and state the page shows, until it shows want; it returns the
	// fragments it got.
	_, _, page := s.do("GET", loc, nil)
	live := regexp.MustCompile(`hx-get="(/agents/runs/[^"]+/live\?seq=\d+&amp;state=\w+)"`)
	pollFor := func(want string) string {
		t.Helper()
		var got string
		wait.For(t, fmt.Sprintf("%q on the run's page", want), func() (string, bool) {
			m := live.FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no poll in:\n%s", page)
			}
			status, _, frag := s.do("GET", strings.ReplaceAll(m[1], "&amp;", "&"), nil)
			if status == http.StatusOK {
				page = frag
				got += frag
				return page, strings.Contains(frag, want)
			} else if status != http.StatusNoContent {
				t.Fatalf("poll: %d %s", status, frag)
			}
			return page, false
		})
		return got
	}
	// The run starts on a goroutine of its own: its first event may come
	// after the page was served, and then on the page's poll.
	if !strings.Contains(page, "run:started") {
		pollFor("run:started")
	}
	if strings.Contains(page, "agent:tool_call") {
		t.Fatalf("the run's page before the call:\n%s", page)
	}
	r.next <- struct{}{}
	frag := pollFor("agent:tool_result")
	if !strings.Contains(frag, `hx-swap-oob="beforeend:#agent-events"`) || strings.Contains(frag, "run:started") || !strings.Contains(frag, "hello agent") {
		t.Errorf("the fragment appends only the new events:\n%s", frag)
	}
	r.next <- struct{}{}
	frag = pollFor("run:completed")
	if !strings.Contains(frag, "said: hello agent") || strings.Contains(frag, `hx-trigger="every 1s"`) {
		t.Errorf("the completed run:\n%s", frag)
	}
}
