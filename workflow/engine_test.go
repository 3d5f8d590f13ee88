package workflow

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testserver"

// rig is a host with the fixture server "fx" (its calls logged to
// callLog) and an engine on a SQLite file.
type rig struct {
	h       *host.Host
	e       *Engine
	db      string
	callLog string
}

func tpl(s string) *Template { return &Template{src: s} }

func val(v any) *Value { return &Value{v: v} }

// digested gives each workflow a digest and returns the registry.
func registry(wfs ...*Workflow) map[string]*Workflow {
	m := map[string]*Workflow{}
	for _, wf := range wfs {
		if wf.Digest == "" {
			wf.Digest = "digest-" + wf.ID
		}
		m[wf.ID] = wf
	}
	return m
}

func newHost(t testing.TB, callLog string, flags ...string) *host.Host {
	t.Helper()
	args := append([]string{"-call-log", callLog}, flags...)
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg), Args: args}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func newRig(t testing.TB, opts *EngineOptions, wfs ...*Workflow) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{db: filepath.Join(dir, "state.db"), callLog: filepath.Join(dir, "calls.log")}
	r.h = newHost(t, r.callLog)
	o := EngineOptions{}
	if opts != nil {
		o = *opts
	}
	o.Database, o.Host, o.Workflows = r.db, r.h, registry(wfs...)
	e, err := New(context.Background(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r.e = e
	return r
}

// calls returns the tool calls the fixture received, one "TOOL ARGS" a line.
func (r *rig) calls(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(r.callLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func (r *rig) run(t testing.TB, id string, inputs map[string]any) *RunStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runID, err := r.e.Start(ctx, id, inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.e.Wait(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (r *rig) events(t testing.TB, runID string) []Event {
	t.Helper()
	evs, err := r.e.Events(context.Background(), runID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func echo(id, text string, needs ...string) *Step {
	return &Step{ID: id, Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": text}), Needs: needs}
}

func TestDAG(t *testing.T) {
	wf := &Workflow{ID: "dag",
		Inputs: []Input{{Name: "who", Type: "string", Required: true}, {Name: "n", Type: "integer", Default: 2}},
		Steps: []*Step{
			echo("a", "hello {{.inputs.who}}"),
			{ID: "b", Kind: StepTool, Tool: "mcp_fx_add", Arguments: val(map[string]any{"a": "{{.inputs.n}}", "b": 40})},
			echo("c", "{{.steps.a.result}} and {{.steps.b.result.sum}}", "a", "b"),
			{ID: "d", Kind: StepTool, Tool: "mcp_fx_echo", Arguments: val(map[string]any{"text": "never"}), If: tpl(`{{eq .inputs.who "nobody"}}`)},
			echo("e", "after d: {{.steps.d.result}}", "d"),
		},
		Outputs: []Output{{Name: "text", Value: tpl("{{.steps.c.result}}")}, {Name: "sum", Type: "number", Value: tpl("{{.steps.b.result.sum}}")}},
	}
	r := newRig(t, nil, wf)
	st := r.run(t, "dag", map[string]any{"who": "world"})
	if st.State != RunCompleted {
		t.Fatalf("state = %s, error %v", st.State, st.Error)
	}
	if got, want := st.Outputs["text"], "hello world and 42"; got != want {
		t.Errorf("outputs.text = %v, want %q", got, want)
	}
	if got := st.Outputs["sum"]; got != float64(42) {
		t.Errorf("outputs.sum = %v (%T), want 42", got, got)
	}
	calls := r.calls(t)
	if len(calls) != 4 || slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "never") }) {
		t.Errorf("calls = %q, want 4 calls, none with never", calls)
	}
	evs := r.events(t, st.ID)
	var skipped []string
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, ev.Seq)
		}
		if ev.Skipped {
			skipped = append(skipped, ev.Step)
		}
	}
	if !slices.Equal(skipped, []string{"d"}) {
		t.Errorf("skipped = %q, want [d]", skipped)
	}
	if evs[0].Type != EventRunStarted || evs[len(evs)-1].Type != EventRunCompleted {
		t.Errorf("events run from %s to %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	b, _ := json.Marshal(evs)
	t.Logf("events: %s", b)
}
