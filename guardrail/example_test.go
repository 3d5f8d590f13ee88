package guardrail_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/guardrail"
)

func Example() {
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.PII{Kinds: []string{guardrail.KindCard}}, Action: guardrail.Reject, Direction: guardrail.Arguments, Servers: []string{"crm"}},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	call := guardrail.Call{Server: "crm", Tool: "update_contact"}

	_, _, err = chain.Arguments(ctx, call, map[string]any{"note": "card 4111 1111 1111 1111"})
	fmt.Println(errors.Is(err, guardrail.ErrRejected), err)

	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "key AKIAIOSFODNN7EXAMPLE"}}}
	out, recs, _ := chain.Result(ctx, call, res)
	fmt.Println(out.Content[0].(*mcp.TextContent).Text)
	fmt.Printf("%s %s %s %s\n", recs[0].Filter, recs[0].Action, recs[0].Part, recs[0].Kind)
	// Output:
	// true guardrail "pii" rejected the arguments: arguments.note holds a match of kind card
	// key [masked:aws-access-key]
	// credentials mask content[0].text aws-access-key
}
