package workflow_test

import (
	"fmt"

	"github.com/switchboardmcp/switchboard/workflow"
)

func ExampleParse() {
	w, err := workflow.Parse("greet.yaml", []byte(`
inputs:
  name: {type: string, required: true}
outputs:
  said: "{{ .steps.echo.result }}"
steps:
  - id: echo
    tool: mcp_everything_echo
    arguments: {message: "hello {{ .inputs.name }}"}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	args, err := w.Steps[0].Arguments.Eval(&workflow.Scope{Inputs: map[string]any{"name": "Ada"}})
	fmt.Println(w.ID, w.Tools(), args, err)

	// A reference to a step that is not in needs is refused at load time.
	_, err = workflow.Parse("bad.yaml", []byte(`
steps:
  - {id: a, tool: t}
  - {id: b, tool: t, arguments: {x: "{{ .steps.a.result }}"}}
`))
	fmt.Println(err)
	// Output:
	// greet [mcp_everything_echo] map[message:hello Ada] <nil>
	// bad.yaml:4: steps[1].arguments.x: .steps.a.result: step "a" is not in this step's needs, so its result may not exist yet: add it to needs
}

func ExampleTemplate_Eval() {
	t, _ := workflow.ParseTemplate("{{ .steps.fetch.result.items }}")
	v, _ := t.Eval(&workflow.Scope{Steps: map[string]any{"fetch": map[string]any{"items": []any{1.0, 2.0}}}})
	fmt.Printf("%T %v\n", v, v)
	// Output: []interface {} [1 2]
}
