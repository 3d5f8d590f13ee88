package workflow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestSecretsAtRest: nothing a run writes to the database holds a secret
// the engine's redactor knows (issue 23 §4), in any table — DBOS's
// (workflow inputs and outputs, step results, messages) and the events —
// raw, escaped, or base64 of its JSON as DBOS stores it. The secret reaches
// the run only as two halves, which are not secrets, that templates join:
// in the outputs, a nested workflow's inputs and outputs, an agent's
// prompt, result and error, a gate's message, and the error of a failed
// run. Inputs or a gate's answer that hold the secret itself are refused
// (they would run on, or be stored, otherwise). The status read back is
// redacted.
func TestSecretsAtRest(t *testing.T) { testSecretsAtRest(t, "") }

func testSecretsAtRest(t *testing.T, database string) {
	canary := interop.NewCanary(t)
	a, b := canary[:12], canary[12:]
	const joined = "{{.inputs.a}}{{.inputs.b}}"
	halves := []Input{{Name: "a", Type: "string", Required: true}, {Name: "b", Type: "string", Required: true}}
	inner := &Workflow{ID: "inner", Inputs: []Input{{Name: "x", Type: "string", Required: true}},
		Steps:   []*Step{echo("hold", "held")},
		Outputs: []Output{{Name: "back", Value: tpl("{{.inputs.x}}")}}}
	wf := &Workflow{ID: "halves", Inputs: halves,
		Vars: map[string]*Template{"whole": tpl(joined)},
		Steps: []*Step{
			echo("say", joined), // the host redacts what the tool says back
			{ID: "nested", Kind: StepWorkflow, Workflow: "inner", With: val(map[string]any{"x": joined})},
			{ID: "think", Kind: StepAgent, Agent: "helper", Prompt: tpl("repeat " + joined)},
			{ID: "oops", Kind: StepAgent, Agent: "failing", Prompt: tpl(joined), OnError: OnErrorContinue, Default: "none"},
			{ID: "ask", Kind: StepGate, Gate: &Gate{Message: tpl("Use " + joined + "?"), Timeout: 20 * time.Millisecond, OnTimeout: GateContinue}},
		},
		Outputs: []Output{
			{Name: "joined", Value: tpl(joined)},
			{Name: "var", Value: tpl("{{.vars.whole}}")},
			{Name: "quoted", Value: tpl("{{json .vars.whole}}")}, // JSON-escaped
			{Name: "said", Value: tpl("{{.steps.say.result}}")},
			{Name: "child", Value: tpl("{{.steps.nested.result.back}}")},
			{Name: "think", Value: tpl("{{.steps.think.result.text}}")},
		}}
	broken := &Workflow{ID: "broken", Inputs: halves,
		Steps: []*Step{{ID: "fail", Kind: StepAgent, Agent: "failing", Prompt: tpl(joined)}}}
	agents := agentFunc(func(ctx context.Context, name, prompt string) (*AgentResult, error) {
		if name == "failing" {
			return nil, fmt.Errorf("cannot do %s", prompt)
		}
		return &AgentResult{Text: "you said " + prompt}, nil
	})
	r := newRigOn(t, database, &EngineOptions{Agents: agents}, wf, broken, inner, gateWorkflow(GateFail))
	r.h.Redactor().Add(canary)
	t.Logf("canary %q, halves %q and %q", canary, a, b)
	ctx := context.Background()

	st := r.run(t, "halves", map[string]any{"a": a, "b": b})
	if st.State != RunCompleted {
		t.Fatalf("halves: state %s %+v", st.State, st.Error)
	}
	for _, k := range []string{"joined", "var", "quoted", "child", "think"} {
		if v, _ := st.Outputs[k].(string); !strings.Contains(v, "[REDACTED]") {
			t.Errorf("outputs.%s = %q, want it redacted", k, st.Outputs[k])
		}
	}
	st = r.run(t, "broken", map[string]any{"a": a, "b": b})
	if st.State != RunFailed || st.Error == nil || !strings.Contains(st.Error.Message, "[REDACTED]") {
		t.Errorf("broken: state %s, error %+v: want failed, the message redacted", st.State, st.Error)
	}
	// The secret itself as an input is refused, not run on nor stored.
	if _, err := r.e.Start(ctx, "halves", map[string]any{"a": canary, "b": "x"}, nil); err == nil || !strings.Contains(err.Error(), "inputs.a") {
		t.Errorf("Start with the secret as an input: err = %v, want a refusal naming inputs.a", err)
	}
	// And as a gate's answer.
	id, err := r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "me " + canary}}); err == nil || !strings.Contains(err.Error(), "who") {
		t.Errorf("an answer holding the secret: err = %v, want a refusal naming the field", err)
	}
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "bo"}}); err != nil {
		t.Fatal(err)
	}
	if st, err := r.e.Wait(ctx, id); err != nil || st.State != RunCompleted {
		t.Fatalf("approve: %v %+v", err, st)
	}

	// Every table, every row.
	driver, name := "sqlite", r.db
	if strings.HasPrefix(r.db, "postgres") {
		driver = "pgx"
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := interop.TableRows(ctx, db, driver == "pgx")
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for table, rs := range tables {
		for _, row := range rs {
			rows++
			if leaks := interop.LeaksAtRest(row, canary); len(leaks) > 0 {
				t.Errorf("table %s holds %s", table, leaks[0])
			}
		}
	}
	if tables["workflow_status"] == nil && tables["dbos.workflow_status"] == nil || rows < 20 {
		t.Errorf("%d rows in %d tables: the scan missed DBOS's", rows, len(tables))
	}
	// And the file's bytes, write-ahead log included.
	if driver == "sqlite" {
		for _, f := range []string{r.db, r.db + "-wal"} {
			b, err := os.ReadFile(f)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if leaks := interop.LeaksAtRest(string(b), canary); len(leaks) > 0 {
				t.Errorf("%s holds %s", f, leaks[0])
			}
		}
	}
}
