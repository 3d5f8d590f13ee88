package workflow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

const fullWorkflow = `# every field
id: triage
description: Triage an issue
inputs:
  issue: {type: integer, required: true, description: The issue number}
  tone: {type: string, enum: [short, long], default: short}
  labels: array
vars:
  title: "Issue {{ .inputs.issue }}"
outputs:
  summary: "{{ .steps.summarize.result }}"
  count:
    value: "{{ len .steps.fetch.result.labels }}"
    type: integer
    description: How many labels
concurrency: 2
timeout: 2d
hide_tools: true
steps:
  - id: fetch
    tool: mcp_github_get_issue
    arguments:
      number: "{{ .inputs.issue }}"
      nested: ["{{ .vars.title }}", 3]
    idempotent: true
    retry: {attempts: 3, backoff: 1s, max_delay: 10s}
    timeout: 30s
  - id: summarize
    needs: [fetch]
    agent: summarizer
    prompt: |
      Summarize in a {{ .inputs.tone }} way:
      {{ json .steps.fetch.result }}
    retry: {attempts: 2}
  - id: approve
    needs: [summarize]
    gate:
      message: "Post {{ .steps.summarize.result }}?"
      schema:
        type: object
        properties:
          comment: {type: string, maxLength: 200}
          priority: {type: string, enum: [low, high]}
        required: [priority]
      timeout: 48h
      on_decline: skip_rest
      on_timeout: continue
  - id: each
    needs: [fetch]
    for_each:
      items: "{{ .steps.fetch.result.labels }}"
      as: label
      concurrency: 3
      step:
        tool: mcp_everything_echo
        arguments: {message: "{{ .index }}: {{ .label }} of {{ .steps.fetch.result.title }}"}
        on_error: continue
        default: skipped
  - id: child
    needs: [approve]
    workflow: other
    with: {text: "{{ .vars.title }}"}
    if: "{{ eq .inputs.tone \"long\" }}"
    on_error: continue
    default: {ok: false}
`

func TestParseFull(t *testing.T) {
	w, err := Parse("wf/triage.yaml", []byte(fullWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	if w.ID != "triage" || w.Concurrency != 2 || w.Timeout != 48*time.Hour || !w.HideTools || w.File != "wf/triage.yaml" {
		t.Errorf("workflow = %+v", w)
	}
	wantInputs := []Input{
		{Name: "issue", Type: "integer", Required: true, Description: "The issue number", Line: 5},
		{Name: "tone", Type: "string", Enum: []any{"short", "long"}, Default: "short", Line: 6},
		{Name: "labels", Type: "array", Line: 7},
	}
	if diff := cmp.Diff(wantInputs, w.Inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	if len(w.Outputs) != 2 || w.Outputs[1].Name != "count" || w.Outputs[1].Type != "integer" || w.Outputs[1].Line != 12 {
		t.Errorf("outputs = %+v", w.Outputs)
	}
	if len(w.Steps) != 5 {
		t.Fatalf("%d steps", len(w.Steps))
	}
	fetch, sum, gate, each, child := w.Steps[0], w.Steps[1], w.Steps[2], w.Steps[3], w.Steps[4]
	if fetch.Kind != StepTool || fetch.Tool != "mcp_github_get_issue" || !fetch.Idempotent || fetch.Line != 20 ||
		*fetch.Retry != (Retry{Attempts: 3, Backoff: time.Second, MaxDelay: 10 * time.Second}) || fetch.Timeout != 30*time.Second || fetch.OnError != OnErrorFail {
		t.Errorf("fetch = %+v", fetch)
	}
	if sum.Kind != StepAgent || sum.Agent != "summarizer" || sum.Prompt == nil || sum.Retry.Attempts != 2 {
		t.Errorf("summarize = %+v", sum)
	}
	if gate.Kind != StepGate || gate.Gate.Timeout != 48*time.Hour || gate.Gate.OnDecline != GateSkipRest || gate.Gate.OnTimeout != GateContinue {
		t.Errorf("approve = %+v", gate.Gate)
	}
	var sch map[string]any
	if err := json.Unmarshal(gate.Gate.Schema, &sch); err != nil || sch["type"] != "object" {
		t.Errorf("gate schema = %s, %v", gate.Gate.Schema, err)
	}
	if each.Kind != StepForEach || each.ForEach.As != "label" || each.ForEach.Concurrency != 3 || each.ForEach.Step.Kind != StepTool ||
		each.ForEach.Step.ID != "each" || each.ForEach.Step.OnError != OnErrorContinue || each.ForEach.Step.Default != "skipped" {
		t.Errorf("each = %+v / %+v", each.ForEach, each.ForEach.Step)
	}
	if child.Kind != StepWorkflow || child.Workflow != "other" || child.If == nil || child.OnError != OnErrorContinue {
		t.Errorf("child = %+v", child)
	}
	if diff := cmp.Diff(map[string]any{"ok": false}, child.Default); diff != "" {
		t.Errorf("child default: %s", diff)
	}
	if got := w.Tools(); !cmp.Equal(got, []string{"mcp_everything_echo", "mcp_github_get_issue"}) {
		t.Errorf("Tools() = %v", got)
	}
	if got := w.Agents(); !cmp.Equal(got, []string{"summarizer"}) {
		t.Errorf("Agents() = %v", got)
	}
	if got := w.Workflows(); !cmp.Equal(got, []string{"other"}) {
		t.Errorf("Workflows() = %v", got)
	}
	// A template's line is its own: the prompt's block starts after its key,
	// and the error of a missing key at run time names it.
	_, err = sum.Prompt.Render(&Scope{Inputs: map[string]any{"tone": "short"}, Steps: map[string]any{}})
	if err == nil || err.Error() != `wf/triage.yaml:33: steps[1].prompt: .steps.fetch.result: no key "fetch"` {
		t.Errorf("prompt error = %v", err)
	}
	args, err := fetch.Arguments.Eval(&Scope{Inputs: map[string]any{"issue": float64(7)}, Vars: map[string]any{"title": "Issue 7"}})
	if err != nil || !cmp.Equal(args, map[string]any{"number": float64(7), "nested": []any{"Issue 7", int64(3)}}) {
		t.Errorf("arguments = %v, %v", args, err)
	}
	// A tool step without arguments has empty ones.
	w2, err := Parse("a.yaml", []byte("steps: [{id: a, tool: t}]"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := w2.Steps[0].Arguments.Eval(nil); err != nil || !cmp.Equal(got, map[string]any{}) {
		t.Errorf("no arguments = %v, %v", got, err)
	}
	if w2.ID != "a" {
		t.Errorf("id from the file name = %q", w2.ID)
	}
}

func TestParseDigest(t *testing.T) {
	a, err := Parse("a.yaml", []byte("id: a\nsteps:\n  - {id: x, tool: t, arguments: {m: 1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Comments, layout and key order do not change the digest.
	b, err := Parse("b.yaml", []byte("# comment\nsteps:\n  - tool: t\n    arguments:\n      m: 1\n    id: x\nid: a\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("a.yaml", []byte("id: a\nsteps:\n  - {id: x, tool: t, arguments: {m: 2}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Digest) != 64 || a.Digest != b.Digest || a.Digest == c.Digest {
		t.Errorf("digests %s %s %s: want the first two equal, the third different", a.Digest, b.Digest, c.Digest)
	}
}

// TestParseErrors: every problem is reported at once, each at its file,
// line and field.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"yaml", "steps: [", []string{"wf.yaml:1: invalid YAML"}},
		{"not a mapping", "- a", []string{"wf.yaml:1: must be a mapping of fields"}},
		{"no steps", "id: a\n", []string{"wf.yaml:1: steps: missing: a workflow needs at least one step"}},
		{"empty steps", "steps: []\n", []string{"wf.yaml:1: steps: must be a non-empty list of steps, not a list"}},
		{"unknown key", "id: a\nstep: []\nsteps: [{id: a, tool: t}]\n", []string{`wf.yaml:2: step: unknown field "step"; did you mean steps?`}},
		{"bad id", "id: a b\nsteps: [{id: a, tool: t}]\n", []string{`wf.yaml:1: id: invalid id "a b"`}},
		{"file name id", "steps: [{id: a, tool: t}]\n", nil}, // wf.yaml: id wf
		{"anchor", "steps:\n  - &x {id: a, tool: t}\n", []string{"wf.yaml:2: steps[0]: YAML anchors, aliases and merge keys are not supported"}},
		{"duplicate key", "steps: [{id: a, tool: t}]\nsteps: []\n", []string{`wf.yaml:2: invalid YAML: mapping key "steps" already defined`}},
		{"step unknown key", "steps:\n  - id: a\n    tool: t\n    argments: {}\n", []string{`wf.yaml:4: steps[0].argments: unknown field "argments"; did you mean arguments?`}},
		{"no kind", "steps:\n  - id: a\n", []string{"wf.yaml:2: steps[0]: says nothing to do: give one of tool, agent, gate, for_each, workflow"}},
		{"two kinds", "steps:\n  - id: a\n    tool: t\n    agent: b\n    prompt: p\n", []string{
			"wf.yaml:4: steps[0].agent: a step does one thing: tool and agent are both set",
		}},
		{"missing id", "steps:\n  - tool: t\n", []string{"wf.yaml:2: steps[0]: missing id"}},
		{"bad step id", "steps:\n  - id: a-b\n    tool: t\n", []string{`wf.yaml:2: steps[0].id: invalid step id "a-b"`}},
		{"duplicate id", "steps:\n  - {id: a, tool: t}\n  - {id: a, tool: t}\n", []string{`wf.yaml:3: steps[1].id: duplicate step id "a" (first on line 2)`}},
		{"tool type", "steps:\n  - id: a\n    tool: 3\n", []string{"wf.yaml:3: steps[0].tool: must be a string, not an integer"}},
		{"arguments not map", "steps:\n  - id: a\n    tool: t\n    arguments: [1]\n", []string{"wf.yaml:4: steps[0].arguments: must be a mapping of argument names to values, not a list"}},
		{"arguments elsewhere", "steps:\n  - id: a\n    agent: x\n    prompt: p\n    arguments: {}\n", []string{"wf.yaml:5: steps[0].arguments: only a tool step has arguments"}},
		{"agent no prompt", "steps:\n  - id: a\n    agent: x\n", []string{"wf.yaml:2: steps[0]: an agent step needs a prompt"}},
		{"needs unknown", "steps:\n  - id: a\n    tool: t\n    needs: [fecth]\n  - {id: fetch, tool: t}\n", []string{`wf.yaml:4: steps[0].needs[0]: no step "fecth"; did you mean fetch?`}},
		{"needs self", "steps:\n  - id: a\n    tool: t\n    needs: [a]\n", []string{"wf.yaml:4: steps[0].needs[0]: a step cannot need itself"}},
		{"cycle", "steps:\n  - {id: a, tool: t, needs: [c]}\n  - {id: b, tool: t, needs: [a]}\n  - {id: c, tool: t, needs: [b]}\n", []string{
			"wf.yaml:2: steps[0].needs: steps depend on each other in a cycle: a → c → b → a",
		}},
		{"retry not idempotent", "steps:\n  - id: a\n    tool: t\n    retry: {attempts: 3}\n", []string{
			"wf.yaml:4: steps[0].retry: a tool step is retried only when marked idempotent: true",
		}},
		{"retry attempts", "steps:\n  - id: a\n    tool: t\n    idempotent: true\n    retry: {attempts: 1, backof: 1s}\n", []string{
			`wf.yaml:5: steps[0].retry.attempts: must be between 2 and 100`, `wf.yaml:5: steps[0].retry.backof: unknown field "backof"; did you mean backoff?`,
		}},
		{"retry gate", "steps:\n  - id: a\n    gate: {message: m}\n    retry: {attempts: 2}\n", []string{"wf.yaml:4: steps[0].retry: a gate is not retried"}},
		{"default without continue", "steps:\n  - id: a\n    tool: t\n    default: 1\n", []string{
			"wf.yaml:4: steps[0].default: default is the result of a step that failed with on_error: continue, and this step's on_error is fail",
		}},
		{"on_error", "steps:\n  - id: a\n    tool: t\n    on_error: ignore\n", []string{`wf.yaml:4: steps[0].on_error: want fail or continue, not "ignore"`}},
		{"durations", "timeout: 1w\nsteps:\n  - id: a\n    tool: t\n    timeout: -1s\n", []string{
			`wf.yaml:1: timeout: invalid duration "1w"`, `wf.yaml:5: steps[0].timeout: must be positive, not "-1s"`,
		}},
		{"concurrency", "concurrency: 0\nsteps: [{id: a, tool: t}]\n", []string{"wf.yaml:1: concurrency: must be at least 1, not 0"}},
		{"input type", "inputs:\n  a: {type: str}\n  b: {description: x}\n  c: 3\nsteps: [{id: a, tool: t}]\n", []string{
			`wf.yaml:2: inputs.a.type: unknown type "str"`, "wf.yaml:3: inputs.b: missing type", "wf.yaml:4: inputs.c: must be a type",
		}},
		{"input default", "inputs:\n  a: {type: integer, default: x}\n  b: {type: string, enum: [x, y], default: z}\n  c: {type: string, enum: [x, 1]}\n  d: {type: string, required: true, default: x}\nsteps: [{id: a, tool: t}]\n", []string{
			"wf.yaml:2: inputs.a.default: a string is not of type integer",
			"wf.yaml:3: inputs.b.default: z is not one of enum",
			"wf.yaml:4: inputs.c.enum[1]: a number is not of type string",
			"wf.yaml:5: inputs.d.default: a required input has no use for a default",
		}},
		{"input name", "inputs:\n  a-b: string\nsteps: [{id: a, tool: t}]\n", []string{`wf.yaml:2: inputs.a-b: invalid input name "a-b"`}},
		{"output", "outputs:\n  a: {type: string}\n  b: {value: x, type: str}\n  c: [1]\nsteps: [{id: a, tool: t}]\n", []string{
			"wf.yaml:2: outputs.a: missing value", `wf.yaml:3: outputs.b.type: unknown type "str"`, "wf.yaml:4: outputs.c: must be a template string, not a list",
		}},
		{"gate", "steps:\n  - id: a\n    gate:\n      schema: {type: string}\n      on_decline: stop\n      on_timeout: fail\n    timeout: 1h\n", []string{
			"wf.yaml:3: steps[0].gate: missing message",
			"wf.yaml:4: steps[0].gate.schema.type: an answer's schema must have type: object",
			"wf.yaml:4: steps[0].gate.schema: needs properties",
			`wf.yaml:5: steps[0].gate.on_decline: want fail, skip_rest or continue, not "stop"`,
			"wf.yaml:6: steps[0].gate.on_timeout: set, but the gate has no timeout",
			"wf.yaml:7: steps[0].timeout: a gate's timeout is gate.timeout",
		}},
		{"gate schema", "steps:\n  - id: a\n    gate:\n      message: m\n      schema:\n        type: object\n        properties:\n          x: {type: object}\n          y: {type: string, enum: [1], minimum: 3}\n        required: [z]\n        additionalProperties: false\n", []string{
			"wf.yaml:8: steps[0].gate.schema.properties.x.type: an elicitation field is a string, number, integer or boolean, not object",
			"wf.yaml:9: steps[0].gate.schema.properties.y.minimum: not allowed in an elicitation string field",
			"wf.yaml:9: steps[0].gate.schema.properties.y.enum: must be a non-empty list of strings",
			"wf.yaml:10: steps[0].gate.schema.required[0]: z is not a property",
			"wf.yaml:11: steps[0].gate.schema.additionalProperties: not allowed in an elicitation schema",
		}},
		{"for_each", "steps:\n  - id: a\n    for_each:\n      as: steps\n      step: {id: x, needs: [a], tool: t}\n  - id: b\n    for_each: {items: x, step: {for_each: {items: y, step: {tool: t}}}}\n", []string{
			"wf.yaml:3: steps[0].for_each: missing items",
			`wf.yaml:4: steps[0].for_each.as: invalid name "steps"`,
			"wf.yaml:5: steps[0].for_each.step.id: a for_each's step has no id of its own",
			"wf.yaml:5: steps[0].for_each.step.needs: a for_each's step has no needs of its own",
			"wf.yaml:7: steps[1].for_each.step.for_each: a for_each's step cannot be a for_each",
		}},
		{"for_each max_items", "steps:\n  - id: a\n    for_each: {items: '[]', max_items: 0, step: {tool: t}}\n  - id: b\n    for_each: {items: '[]', max_items: 100001, step: {tool: t}}\n  - id: c\n    for_each: {items: '[]', max_items: many, step: {tool: t}}\n", []string{
			"wf.yaml:3: steps[0].for_each.max_items: must be between 1 and 100000, not 0",
			"wf.yaml:5: steps[1].for_each.max_items: must be between 1 and 100000, not 100001",
			"wf.yaml:7: steps[2].for_each.max_items: must be a whole number",
		}},
		{"template syntax", "steps:\n  - id: a\n    tool: t\n    arguments:\n      x: \"{{ .inputs.a \"\n", []string{"wf.yaml:5: steps[0].arguments.x: unclosed action"}},
		{"template function", "steps:\n  - id: a\n    agent: x\n    prompt: |\n      line one\n      {{ call .x }}\n", []string{`wf.yaml:6: steps[0].prompt: function "call" not defined`}},
		{"template refs", `inputs: {name: string}
vars:
  v: "{{ .vars.w }}"
outputs:
  o: "{{ .steps.nope.result }}"
steps:
  - id: a
    tool: t
    arguments: {x: "{{ .inputs.nme }}", y: "{{ .steps.b.result }}"}
  - id: b
    tool: t
    needs: [a]
    if: "{{ .item }}"
  - id: c
    needs: [b]
    for_each:
      items: "{{ .steps.a.result }}"
      step: {tool: t, arguments: {x: "{{ .item.x }} {{ .steps.b.result }} {{ .vars.zz }}"}}
`, []string{
			"wf.yaml:3: vars.v: .vars.w: a var cannot read vars",
			`wf.yaml:5: outputs.o: .steps.nope.result: no step "nope"`,
			`wf.yaml:9: steps[0].arguments.x: .inputs.nme: no input "nme"; did you mean name?`,
			`wf.yaml:9: steps[0].arguments.y: .steps.b.result: step "b" is not in this step's needs`,
			"wf.yaml:13: steps[1].if: .item: .item exists only in a for_each's step",
			`wf.yaml:18: steps[2].for_each.step.arguments.x: .vars.zz: no var "zz" (want one of v)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("wf.yaml", []byte(tt.src))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			ps := config.Problems(err)
			var got []string
			for _, p := range ps {
				got = append(got, p.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Parse = %d problems:\n%s\nwant %d:\n%s", len(got), strings.Join(got, "\n"), len(tt.want), strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want %q…", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestCheckAllSelfReference: a workflow step that names its own workflow
// (a step's, or a for_each's step's), and two workflows that run each
// other, are refused, each at the file, line and step, with the cycle.
// Before, a workflow that ran itself passed validate and nested 396 runs
// in 20 s (issue 24).
func TestCheckAllSelfReference(t *testing.T) {
	loop := mustParse(t, "loop.yaml", "steps:\n  - {id: again, workflow: loop}\n")
	each := mustParse(t, "each.yaml", "steps:\n  - id: fan\n    for_each:\n      items: '[1]'\n      step: {workflow: each}\n")
	ping := mustParse(t, "ping.yaml", "steps:\n  - {id: first, tool: t}\n  - {id: call, workflow: pong}\n")
	pong := mustParse(t, "pong.yaml", "steps:\n  - {id: back, workflow: ping}\n")
	var got []string
	for _, p := range config.Problems(CheckAll([]*Workflow{loop, each, ping, pong})) {
		got = append(got, p.Error())
	}
	want := []string{
		`loop.yaml:2: steps[0].workflow: step again: workflow loop runs itself (loop → loop): a workflow step may not name its own workflow`,
		`each.yaml:5: steps[0].for_each.step.workflow: step fan: workflow each runs itself (each → each): a workflow step may not name its own workflow`,
		`ping.yaml:3: steps[1].workflow: step call: workflows run each other in a cycle: ping → pong → ping`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckAll problems (-want +got):\n%s", diff)
	}
}

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{"90s": 90 * time.Second, "48h": 48 * time.Hour, "2d": 48 * time.Hour, "1d12h": 36 * time.Hour, "1h30m": 90 * time.Minute} {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "d", "2", "-1d", "0s", "1w", "99999d", "2dd", "x1d"} {
		if got, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", s, got)
		}
	}
}

func mustParse(t *testing.T, file, src string) *Workflow {
	t.Helper()
	w, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestCheckAll(t *testing.T) {
	a := mustParse(t, "a.yaml", "inputs: {x: {type: string, required: true}}\nsteps:\n  - {id: s, workflow: b, with: {y: 1}}\n")
	b := mustParse(t, "b.yaml", "inputs: {y: integer}\nsteps:\n  - id: s\n    for_each:\n      items: '[]'\n      step: {workflow: c}\n")
	c := mustParse(t, "c.yaml", "steps:\n  - {id: s, workflow: a}\n  - {id: t, workflow: nope}\n")
	a2 := mustParse(t, "other/a.yaml", "steps: [{id: s, tool: t}]\n")
	err := CheckAll([]*Workflow{a, b, c, a2})
	want := []string{
		`c.yaml:2: steps[0].workflow: … a: missing x: workflow a requires it`,
	}
	_ = want
	var got []string
	for _, p := range config.Problems(err) {
		got = append(got, p.Error())
	}
	wantAll := []string{
		`other/a.yaml:1: id: workflow id "a" is also a.yaml's: ids are unique across files`,
		`c.yaml:2: steps[0].with: missing x: workflow a requires it`,
		`c.yaml:3: steps[1].workflow: no workflow "nope"`,
		`a.yaml:3: steps[0].workflow: step s: workflows run each other in a cycle: a → b → c → a`,
	}
	if len(got) != len(wantAll) {
		t.Fatalf("CheckAll = %d problems:\n%s\nwant:\n%s", len(got), strings.Join(got, "\n"), strings.Join(wantAll, "\n"))
	}
	for i := range got {
		if !strings.HasPrefix(got[i], wantAll[i]) {
			t.Errorf("problem %d = %q, want %q…", i, got[i], wantAll[i])
		}
	}
	// An input the child does not declare.
	d := mustParse(t, "d.yaml", "steps: [{id: s, workflow: e, with: {z: 1}}]\n")
	e := mustParse(t, "e.yaml", "inputs: {zz: string}\nsteps: [{id: s, tool: t}]\n")
	if err := CheckAll([]*Workflow{d, e}); err == nil || !strings.Contains(err.Error(), `d.yaml:1: steps[0].with.z: workflow e has no input "z"; did you mean zz?`) {
		t.Errorf("CheckAll(unknown input) = %v", err)
	}
	if err := CheckAll([]*Workflow{e}); err != nil {
		t.Errorf("CheckAll(one good) = %v", err)
	}
}

func TestSchemas(t *testing.T) {
	w := mustParse(t, "wf.yaml", fullWorkflow)
	var in, out any
	if err := json.Unmarshal(w.InputSchema(), &in); err != nil {
		t.Fatal(err)
	}
	wantIn := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object",
		"properties": map[string]any{
			"issue":  map[string]any{"type": "integer", "description": "The issue number"},
			"tone":   map[string]any{"type": "string", "enum": []any{"short", "long"}, "default": "short"},
			"labels": map[string]any{"type": "array"},
		},
		"required":             []any{"issue"},
		"additionalProperties": false,
	}
	if diff := cmp.Diff(wantIn, in); diff != "" {
		t.Errorf("InputSchema (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal(w.OutputSchema(), &out); err != nil {
		t.Fatal(err)
	}
	wantOut := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object",
		"properties": map[string]any{
			"summary": map[string]any{"type": []any{"string", "null"}},
			"count":   map[string]any{"type": []any{"integer", "null"}, "description": "How many labels"},
		},
	}
	if diff := cmp.Diff(wantOut, out); diff != "" {
		t.Errorf("OutputSchema (-want +got):\n%s", diff)
	}
}

func TestAnnotations(t *testing.T) {
	f, tr := false, true
	tools := map[string]*mcp.ToolAnnotations{
		"read":       {ReadOnlyHint: true, OpenWorldHint: &f},
		"readopen":   {ReadOnlyHint: true},
		"write":      {DestructiveHint: &f, OpenWorldHint: &f},
		"destroy":    {DestructiveHint: &tr, OpenWorldHint: &f},
		"defaultish": {},
	}
	lookup := func(name string) *mcp.ToolAnnotations { return tools[name] }
	type hint struct{ ro, destructive, open bool }
	tests := []struct {
		steps string
		want  hint
	}{
		{"[{id: a, tool: read}]", hint{true, false, false}},
		{"[{id: a, tool: read}, {id: b, gate: {message: m}}]", hint{true, false, false}},
		{"[{id: a, tool: read}, {id: b, tool: readopen}]", hint{true, false, true}},
		{"[{id: a, tool: read}, {id: b, tool: write}]", hint{false, false, false}},
		{"[{id: a, tool: write}, {id: b, tool: destroy}]", hint{false, true, false}},
		{"[{id: a, tool: read}, {id: b, tool: defaultish}]", hint{false, true, true}},
		{"[{id: a, tool: read}, {id: b, tool: unknown}]", hint{false, true, true}},
		{"[{id: a, tool: read}, {id: b, agent: x, prompt: p}]", hint{false, true, true}},
		{"[{id: a, for_each: {items: '[]', step: {tool: write}}}]", hint{false, false, false}},
		{"[{id: a, workflow: child}]", hint{true, false, false}},
		{"[{id: a, workflow: nochild}]", hint{false, true, true}},
	}
	child := mustParse(t, "child.yaml", "steps: [{id: a, tool: read}]")
	wfs := func(id string) *Workflow {
		if id == "child" {
			return child
		}
		return nil
	}
	for _, tt := range tests {
		w := mustParse(t, "wf.yaml", "description: D\nsteps: "+tt.steps)
		a := w.AnnotationsWith(lookup, wfs)
		got := hint{a.ReadOnlyHint, *a.DestructiveHint, *a.OpenWorldHint}
		if got != tt.want || a.IdempotentHint || a.Title != "D" {
			t.Errorf("Annotations(%s) = %+v, want %+v", tt.steps, got, tt.want)
		}
	}
	// Without the workflows, a workflow step is unknown.
	w := mustParse(t, "wf.yaml", "steps: [{id: a, workflow: child}]")
	if a := w.Annotations(lookup); a.ReadOnlyHint || !*a.DestructiveHint {
		t.Errorf("Annotations(workflow step, no lookup) = %+v", a)
	}
	// A cycle does not recurse forever.
	self := mustParse(t, "self.yaml", "steps: [{id: a, workflow: self}]")
	if a := self.AnnotationsWith(lookup, func(string) *Workflow { return self }); a.ReadOnlyHint {
		t.Errorf("Annotations(self) = %+v", a)
	}
}

func TestFindList(t *testing.T) {
	dir1, dir2 := t.TempDir(), t.TempDir()
	write := func(dir, name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(dir1, "a.yaml", "steps: [{id: s, tool: t}]\n")
	write(dir1, "named.yml", "id: other\nsteps: [{id: s, tool: t}]\n")
	write(dir1, "notes.txt", "not a workflow")
	write(dir2, "a.yaml", "description: hidden\nsteps: [{id: s, tool: t}]\n")
	write(dir2, "broken.yaml", "steps: 3\n")
	listed := write(t.TempDir(), "listed.yaml", "id: l\nsteps: [{id: s, tool: t}]\n")
	dupe := write(t.TempDir(), "dupe.yaml", "id: a\nsteps: [{id: s, tool: t}]\n")

	w, err := Find("a", []string{dir1, dir2})
	if err != nil || w.Description != "" {
		t.Errorf("Find(a) = %+v, %v; want dir1's", w, err)
	}
	if w, err := Find("other", []string{dir1, dir2}); err != nil || w.ID != "other" {
		t.Errorf("Find(other) = %v, %v", w, err)
	}
	if _, err := Find("nope", []string{dir1}); err == nil || !strings.Contains(err.Error(), "workflow not found") {
		t.Errorf("Find(nope) = %v", err)
	}
	if w, err := Find(listed, nil); err != nil || w.ID != "l" {
		t.Errorf("Find(path) = %v, %v", w, err)
	}
	ws, err := List([]string{dir1, dir2}, listed, dupe)
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.ID)
	}
	if !cmp.Equal(ids, []string{"a", "l", "other"}) {
		t.Errorf("List ids = %v", ids)
	}
	if err == nil || !strings.Contains(err.Error(), "broken.yaml:1: steps: must be a non-empty list") || !strings.Contains(err.Error(), `workflow id "a" is also`) {
		t.Errorf("List error = %v", err)
	}
	if got := Dirs(func(k string) string { return map[string]string{"XDG_CONFIG_HOME": "/x"}[k] }); !cmp.Equal(got, []string{"workflows", "/x/switchboard/workflows"}) {
		t.Errorf("Dirs = %v", got)
	}
	if got := Dirs(func(k string) string { return map[string]string{"HOME": "/h"}[k] }); !cmp.Equal(got, []string{"workflows", "/h/.config/switchboard/workflows"}) {
		t.Errorf("Dirs = %v", got)
	}
}

// TestExamples: every file in examples/workflows parses, and they check
// together.
func TestExamples(t *testing.T) {
	ws, err := List([]string{"../examples/workflows"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) < 5 {
		t.Fatalf("%d example workflows, want at least 5", len(ws))
	}
	if err := CheckAll(ws); err != nil {
		t.Fatal(err)
	}
	kinds := map[StepKind]bool{}
	for _, w := range ws {
		w.eachStep(func(s *Step) {
			kinds[s.Kind] = true
			// An agent's path is relative to the workflow file.
			if s.Kind == StepAgent {
				if _, err := os.Stat(s.Agent); err != nil || !filepath.IsAbs(s.Agent) {
					t.Errorf("%s: agent %s: %v", w.File, s.Agent, err)
				}
			}
		})
	}
	for _, k := range []StepKind{StepTool, StepAgent, StepGate, StepForEach, StepWorkflow} {
		if !kinds[k] {
			t.Errorf("no example has a %s step", k)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(fullWorkflow))
	f.Add([]byte("steps: [{id: a, tool: t, needs: [a]}]"))
	f.Add([]byte("inputs: {a: {type: integer, default: 1.5, enum: [1]}}\nsteps: [{id: a, gate: {message: '{{ .inputs.a }}', schema: {type: object, properties: {x: {type: string}}}}}]"))
	f.Add([]byte("steps:\n  - id: a\n    for_each: {items: '{{ .x', step: {workflow: b, with: {k: [1, {z: '{{ $ }}'}]}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse("fuzz.yaml", data)
		if err != nil {
			for _, p := range config.Problems(err) {
				if p.Pos.File != "fuzz.yaml" {
					t.Fatalf("problem without the file: %v", p)
				}
			}
			return
		}
		w.InputSchema()
		w.OutputSchema()
		w.Annotations(nil)
		CheckAll([]*Workflow{w})
	})
}
