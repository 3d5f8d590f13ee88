package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/codemode/sandbox"
)

func ExampleRun() {
	tools := []codemode.Tool{{
		Name: "mcp_weather_forecast", Namespace: "weather", Function: "forecast",
		Description: "The forecast for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}}
	// The Caller is the host's path for a call; here, a stand-in.
	call := func(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
		var in struct{ City string }
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{StructuredContent: map[string]any{"city": in.City, "high": len(in.City) + 10}}, nil
	}
	res, err := sandbox.Run(context.Background(), `
		const cities = ["Oslo", "Lisbon", "Nairobi"];
		const days = await Promise.all(cities.map(city => tools.weather.forecast({city})));
		console.log("asked", days.length, "cities");
		return days.reduce((a, b) => (a.high > b.high ? a : b)).city;
	`, tools, call, codemode.Budget{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s, %d calls\n%s", res.Value, res.Calls, res.Console)
	// Output:
	// "Nairobi", 3 calls
	// asked 3 cities
}

func ExampleDeclarations() {
	fmt.Print(codemode.Declarations([]codemode.Tool{{
		Name: "mcp_github_search_issues", Namespace: "github", Function: "search_issues",
		Description: "Search issues.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"]}`),
	}})[len(codemode.Header):])
	// Output:
	// declare const tools: {
	//   github: {
	//     /** Search issues. */
	//     search_issues(args: { limit?: number; q: string }): Promise<ToolResult>;
	//   };
	// };
}
