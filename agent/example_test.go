package agent_test

import (
	"fmt"
	"log"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
)

// The example agent in examples/agents, resolved against the example
// configuration: the servers a plain `switchboard run` starts, and what the
// model may see.
func Example() {
	cfg, err := config.LoadFile("../examples/everything.toml")
	if err != nil {
		log.Fatal(err)
	}
	a, err := agent.Load("../examples/agents/calculator.md")
	if err != nil {
		log.Fatal(err)
	}
	plan, err := agent.Resolve(cfg, a, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.ID, a.Model, a.MaxSteps)
	for _, s := range plan.Servers {
		fmt.Println(s.ID, s.ToolsAllowlist)
	}
	// Output:
	// calculator ollama:llama3.2 5
	// everything [get-sum]
}
