package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestNoSecretLeavesTheHost gives a careless server a canary secret, which
// it puts in every field a server can fill, and a second one that prints
// it to stderr and crashes; nothing the host hands its caller — catalog,
// statuses, results, errors, notifications, questions, logs — holds it.
// The canary comes from the secret store ({{secrets.NAME}}) or from an
// environment variable ({{env.NAME}}): both are kept out of output.
func TestNoSecretLeavesTheHost(t *testing.T) {
	t.Run("secrets", func(t *testing.T) {
		canary := interop.NewCanary(t)
		t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)
		noSecretLeavesTheHost(t, canary, "{{secrets.canary}}", "2025-11-25")
	})
	// Under 2026-07-28 a server's questions come inside the call's
	// input-required result, which the go-sdk answers from the client's
	// handlers without its receiving middleware.
	t.Run("2026-07-28", func(t *testing.T) {
		canary := interop.NewCanary(t)
		t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)
		noSecretLeavesTheHost(t, canary, "{{secrets.canary}}", host.InputRequiredVersion)
	})
	t.Run("env", func(t *testing.T) {
		canary := interop.NewCanary(t)
		t.Setenv("SB_TEST_CANARY_TOKEN", canary)
		noSecretLeavesTheHost(t, canary, "{{env.SB_TEST_CANARY_TOKEN}}", "2025-11-25")
	})
}

func noSecretLeavesTheHost(t *testing.T, canary, placeholder, version string) {
	leaky := fixture(t, "leaky", "-leak", "TOKEN")
	leaky.Env = map[string]string{"TOKEN": placeholder}
	crashy := fixture(t, "crashy", "-print-env", "-crash-on-call")
	crashy.Env = map[string]string{"TOKEN": "pre-" + placeholder + "-post"}

	var mu sync.Mutex
	var seen []any // everything the host handed over
	keep := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, v)
	}
	events := newStates() // every event the host publishes
	h, logs := start(t, []config.Server{leaky, crashy}, &host.Options{
		ProtocolVersion: version,
		Sampling: func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			keep(req)
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
	}, events)
	ctx := context.Background()
	opts := &host.CallOptions{
		Progress: func(p *mcp.ProgressNotificationParams) { keep(p) },
		Log:      func(server string, p *mcp.LoggingMessageParams) { keep(p) },
		Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			keep(p)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}
	call := func(name string) {
		args := `{}`
		if strings.HasSuffix(name, "_echo") {
			args = `{"text":"x"}`
		}
		res, err := h.CallTool(ctx, name, json.RawMessage(args), opts)
		keep(res)
		if err != nil {
			keep(err.Error())
			var je *jsonrpc.Error
			if errors.As(err, &je) {
				keep(je)
			}
		}
	}
	for _, name := range []string{"mcp_leaky_leak", "mcp_leaky_leak_error", "mcp_leaky_leak_tool_error",
		"mcp_leaky_leak_elicit", "mcp_leaky_leak_sample", "mcp_leaky_leak_input", "mcp_crashy_echo"} {
		call(name)
	}
	for _, tool := range h.Tools() {
		keep(tool.Tool)
	}
	for _, st := range h.Servers() {
		keep(st.Event())
		keep(st.ServerInfo)
		keep(st.Warnings)
	}
	rs, err := h.Resources(ctx)
	keep(rs)
	keep(fmt.Sprint(err))
	ps, err := h.Prompts(ctx)
	keep(ps)
	keep(fmt.Sprint(err))
	rr, err := h.ReadResource(ctx, "leaky", "test://leak", nil)
	keep(rr)
	keep(fmt.Sprint(err))
	gp, err := h.GetPrompt(ctx, "leaky", "leak", nil, nil)
	keep(gp)
	keep(fmt.Sprint(err))

	for _, ev := range drainEvents(events.w) {
		keep(ev)
		keep(ev.Status.Event()) // its JSON form, errors as text
	}
	mu.Lock()
	all, err := json.Marshal(seen)
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	text := string(all) + fmt.Sprintf("%+v", seen) + logs.String()
	for _, leak := range interop.Leaks(text, canary) {
		t.Errorf("the host handed over %s", leak)
	}
	// The paths were taken: the redacted values are there.
	for _, want := range []string{"text [REDACTED]", "refused: [REDACTED]", "input [REDACTED]", "input sample [REDACTED]",
		"progress [REDACTED]", "resource [REDACTED]", "prompt text [REDACTED]", "Leaks [REDACTED]", "connection lost"} {
		if !strings.Contains(text, want) {
			t.Errorf("nothing handed over holds %q: a path was not exercised", want)
		}
	}
}
