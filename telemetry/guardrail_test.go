package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// TestGuardrailMetrics: each guardrail action counts in
// switchboard.guardrail.actions by server, filter, action and direction.
func TestGuardrailMetrics(t *testing.T) {
	tel, err := telemetry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close(context.Background())
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.PII{}, Action: guardrail.Mask, Direction: guardrail.Arguments},
		{Filter: guardrail.Credentials{}, Action: guardrail.Flag, Direction: guardrail.Results},
	})
	if err != nil {
		t.Fatal(err)
	}
	fx := config.Server{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg)}
	h, err := host.New([]config.Server{fx}, &host.Options{Guardrails: chain})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tel.Watch(h)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := h.CallTool(ctx, "mcp_fx_echo", json.RawMessage(`{"text":"a@example.org ghp_1234567890abcdefghijABCDEFGHIJ123456"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []map[string]string{
		{"switchboard_server": "fx", "switchboard_guardrail_filter": "pii", "switchboard_guardrail_action": "mask", "switchboard_guardrail_direction": "arguments"},
		{"switchboard_server": "fx", "switchboard_guardrail_filter": "credentials", "switchboard_guardrail_action": "flag", "switchboard_guardrail_direction": "results"},
	}
	wait.For(t, "both series to be 2", func() (string, bool) {
		fams := families(t, tel)
		for _, labels := range want {
			if v, _, ok := series(fams["switchboard_guardrail_actions_total"], labels); !ok || v != 2 {
				return labels["switchboard_guardrail_filter"] + " is not", false
			}
		}
		return "", true
	})
}
