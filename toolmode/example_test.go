package toolmode_test

import (
	"encoding/json"
	"fmt"

	"github.com/switchboardmcp/switchboard/toolmode"
)

// A search_tools call read and answered: the gateway's search endpoints
// and the agent runner both answer this way.
func Example() {
	query, limit, err := toolmode.ParseSearch(json.RawMessage(`{"query":"create a GitHub issue"}`))
	fmt.Println(query, limit, err)

	text, _, _ := toolmode.Answer(query, []toolmode.Found{{Name: "mcp_github_create_issue", Description: "Create an issue.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)}})
	fmt.Println(text)

	_, _, err = toolmode.ParseSearch(json.RawMessage(`{"query":"x","limit":500}`))
	fmt.Println(err)
	// Output:
	// create a GitHub issue 8 <nil>
	// {"tools":[{"name":"mcp_github_create_issue","description":"Create an issue.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}}}}]}
	// search_tools: limit must be between 1 and 50, not 500
}
