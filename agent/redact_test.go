package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
)

// TestRunNoSecretReachesModelOrEvents: an agent whose tools come from a
// careless server that echoes its canary secret everywhere, and asks the
// agent's model (sampling) and user (elicitation) about it: neither the
// model's requests nor the run's events hold the canary.
func TestRunNoSecretReachesModelOrEvents(t *testing.T) {
	canary := interop.NewCanary(t)
	t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "t", Command: interop.Build(t, fixturePkg), Args: []string{"-leak", "TOKEN"},
		Env: map[string]string{"TOKEN": "{{secrets.canary}}"}}}, &host.Options{ProtocolVersion: "2025-11-25",
		Sampling: func(context.Context, string, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, fmt.Errorf("the run answers sampling itself")
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var elicited []*mcp.ElicitParams
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask(`c1 mcp_t_leak {}`, `c2 mcp_t_leak_error {}`, `c3 mcp_t_leak_tool_error {}`),
		// Alone in their turns: under 2025-11-25 a server's question goes
		// to the server's only call in flight.
		ask(`c4 mcp_t_leak_elicit {}`),
		ask(`c5 mcp_t_leak_sample {}`),
		say("done"),
	}}
	evs := collect(t, ctx, &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 6, AllowSampling: true}, Host: h, Provider: p, Model: "m", Prompt: "go",
		Elicit: func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			elicited = append(elicited, req)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	out, err := json.Marshal(struct {
		Events   []Event
		Requests []*llm.Request
		Elicited []*mcp.ElicitParams
	}{evs, p.requests(), elicited})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range interop.Leaks(string(out), canary) {
		t.Errorf("the run handed over %s", leak)
	}
	for _, want := range []string{"text [REDACTED]", "refused: [REDACTED]", "failed: [REDACTED]", "confirm [REDACTED]", "sample [REDACTED]", "Leaks [REDACTED]"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("nothing the run handed over holds %q: a path was not exercised", want)
		}
	}
}

// TestCodeModeNoSecretReachesModelOrEvents: a run_code program that calls
// the careless server's tools and returns and prints what they answer
// (text, a tool error, a protocol error) hands the model no secret, nor do
// the run's events: each result is redacted (by the host, then by the
// run, as a direct call's) before the program sees it.
func TestCodeModeNoSecretReachesModelOrEvents(t *testing.T) {
	canary := interop.NewCanary(t)
	t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "t", Command: interop.Build(t, fixturePkg), Args: []string{"-leak", "TOKEN"},
		Env: map[string]string{"TOKEN": "{{secrets.canary}}"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	program, _ := json.Marshal(map[string]string{"code": `const out = {};
out.leak = await tools.t.leak({});
for (const f of ["leak_error", "leak_tool_error"]) {
  try { await tools.t[f]({}); } catch (e) { out[f] = String(e); console.log(f, String(e)); }
}
console.log(JSON.stringify(out.leak));
return out;`})
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask("r1 run_code " + string(program)),
		say("done"),
	}}
	evs := collect(t, ctx, &RunOptions{Agent: &Agent{ID: "a", ToolMode: ToolModeCode}, Host: h, Provider: p, Model: "m", Prompt: "go"})
	out, err := json.Marshal(struct {
		Events   []Event
		Requests []*llm.Request
	}{evs, p.requests()})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range interop.Leaks(string(out), canary) {
		t.Errorf("the run handed over %s", leak)
	}
	for _, want := range []string{"text [REDACTED]", "refused: [REDACTED]", "failed: [REDACTED]"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("nothing the run handed over holds %q: a path was not exercised", want)
		}
	}
}
