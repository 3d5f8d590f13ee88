package workflow

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestStepGuardrails: a workflow's tool steps call through the host's
// guardrails: the server is sent the masked arguments (the fixture's call
// log), the step's output is the masked result, and a rejected result
// fails the run at its step with an error naming the rule, not the text.
func TestStepGuardrails(t *testing.T) {
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.PII{}, Action: guardrail.Mask, Direction: guardrail.Arguments},
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`forbidden`)}}, Action: guardrail.Reject, Direction: guardrail.Results, Name: "no-forbidden"},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	callLog := filepath.Join(dir, "calls.log")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg), Args: []string{"-call-log", callLog}}},
		&host.Options{Guardrails: chain})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ok := &Workflow{ID: "ok", Steps: []*Step{echo("mail", "mail bob@example.org"), echo("tok", "token ghp_1234567890abcdefghijABCDEFGHIJ123456")},
		Outputs: []Output{{Name: "mail", Value: tpl("{{.steps.mail.result}}")}, {Name: "tok", Value: tpl("{{.steps.tok.result}}")}}}
	bad := &Workflow{ID: "bad", Steps: []*Step{echo("boom", "a forbidden word")}}
	e, err := New(ctx, &EngineOptions{Database: filepath.Join(dir, "state.db"), Host: h, Workflows: registry(ok, bad)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r := &rig{h: h, e: e, callLog: callLog}

	st := r.run(t, "ok", nil)
	if st.State != RunCompleted || st.Outputs["mail"] != "mail [masked:email]" || st.Outputs["tok"] != "token [masked:github-token]" {
		t.Errorf("run = %s %+v %v", st.State, st.Outputs, st.Error)
	}
	sent := strings.Join(r.calls(t), "\n")
	if strings.Contains(sent, "bob@example.org") || !strings.Contains(sent, "[masked:email]") {
		t.Errorf("the server was sent: %s", sent)
	}
	st = r.run(t, "bad", nil)
	if st.State != RunFailed || st.Error == nil || st.Error.Step != "boom" || !strings.Contains(st.Error.Message, `guardrail "no-forbidden" rejected the result`) ||
		strings.Contains(st.Error.Message, "forbidden word") {
		t.Errorf("rejected run = %s %+v", st.State, st.Error)
	}
}
