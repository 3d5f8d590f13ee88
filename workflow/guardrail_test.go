package workflow

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
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

// TestStepGuardrailRecords: a tool step whose result holds an e-mail
// address, under a pii rule that masks results: the step's step:completed
// event lists what the rule did (filter, action, direction, part, kind,
// count), its output is masked, and the address is in none of the run's
// events; a step the guardrails left alone has no records.
func TestStepGuardrailRecords(t *testing.T) {
	chain, err := guardrail.New([]guardrail.Rule{{Name: "pii-out", Filter: guardrail.PII{}, Action: guardrail.Mask, Direction: guardrail.Results}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg)}},
		&host.Options{Guardrails: chain})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	wf := &Workflow{ID: "mail", Steps: []*Step{echo("mail", "write to bob@example.org"), echo("plain", "nothing personal")},
		Outputs: []Output{{Name: "mail", Value: tpl("{{.steps.mail.result}}")}}}
	e, err := New(ctx, &EngineOptions{Database: filepath.Join(dir, "state.db"), Host: h, Workflows: registry(wf)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r := &rig{h: h, e: e}

	st := r.run(t, "mail", nil)
	if st.State != RunCompleted || st.Outputs["mail"] != "write to [masked:email]" {
		t.Fatalf("run = %s %+v %v, want completed with the address masked", st.State, st.Outputs, st.Error)
	}
	evs := r.events(t, st.ID)
	want := []guardrail.Record{{Rule: "pii-out", Filter: "pii", Action: guardrail.Mask, Direction: guardrail.Results, Part: "content[0].text", Kind: "email", Count: 1}}
	var seen int
	for _, ev := range evs {
		if ev.Type != EventStepCompleted {
			continue
		}
		seen++
		switch ev.Step {
		case "mail":
			if !slices.Equal(ev.Guardrails, want) {
				t.Errorf("step:completed mail guardrails = %+v, want %+v", ev.Guardrails, want)
			}
		default:
			if len(ev.Guardrails) != 0 {
				t.Errorf("step:completed %s guardrails = %+v, want none", ev.Step, ev.Guardrails)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d step:completed events, want 2: %+v", seen, evs)
	}
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "bob@example.org") {
		t.Errorf("the run's events hold the address: %s", b)
	}
	if !strings.Contains(string(b), `"guardrails":[{"rule":"pii-out","filter":"pii","action":"mask","direction":"results","part":"content[0].text","kind":"email","count":1}]`) {
		t.Errorf("the events' JSON lacks the record: %s", b)
	}
}
