package workflow_test

import (
	"context"
	"fmt"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/workflow"
)

// A Go program runs a workflow over a host's tools, with its events and a
// gate answered in code (add and the gate run at once: the order of their
// lines varies). The server here is the project's test
// fixture, built and run by `go run`; any stdio or HTTP server configures
// the same way.
func Example() {
	wf, err := workflow.Parse("greet.yaml", []byte(`
id: greet
inputs:
  who: {type: string, required: true}
outputs:
  greeting: "{{ .steps.hello.result }}"
  sum: {value: "{{ .steps.add.result.sum }}", type: number}
steps:
  - id: add
    tool: mcp_fx_add
    arguments: {a: 40, b: 2}
  - id: ok
    gate: {message: "Greet {{ .inputs.who }}?"}
  - id: hello
    needs: [add, ok]
    tool: mcp_fx_echo
    arguments: {text: "hello {{ .inputs.who }}, {{ .steps.add.result.sum }}"}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	h, err := host.Start(ctx, []config.Server{{ID: "fx", Transport: config.TransportStdio,
		Command: "go", Args: []string{"run", "github.com/switchboardmcp/switchboard/internal/testkit/testserver"}}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	st, err := workflow.Run(ctx, wf, map[string]any{"who": "Ada"}, &workflow.RunOptions{
		Host: h,
		OnEvent: func(ev workflow.Event) {
			if ev.Type == workflow.EventStepCompleted {
				fmt.Println("completed", ev.Step)
			}
		},
		Answer: func(ctx context.Context, gate workflow.Event) (workflow.GateAnswer, error) {
			fmt.Println("asked:", gate.Text)
			return workflow.GateAnswer{Action: "accept"}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.State, st.Outputs["greeting"], st.Outputs["sum"])
	// Unordered output:
	// completed add
	// asked: Greet Ada?
	// completed hello
	// completed hello Ada, 42 42
}

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
