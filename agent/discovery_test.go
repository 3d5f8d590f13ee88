package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
)

func TestSelect(t *testing.T) {
	tool := func(server, name, desc string) host.Tool {
		return host.Tool{Name: server + "_" + name, Server: server, Tool: &mcp.Tool{Name: name, Description: desc}}
	}
	tools := []host.Tool{
		tool("github", "create_issue", "Create an issue in a GitHub repository"),
		tool("github", "list_pull_requests", "List pull requests"),
		tool("weather", "get_forecast", "Get the weather forecast for a city"),
		tool("weather", "get_alerts", "Get weather alerts for a US state"),
		tool("calc", "add", "Add two numbers"),
	}
	desc := map[string]string{"github": "GitHub issues and PRs", "weather": "Weather forecasts", "calc": "Arithmetic"}
	names := func(ts []host.Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	for _, tc := range []struct {
		prompt string
		o      SelectOptions
		want   []string
	}{
		{"What's the weather forecast in Paris?", SelectOptions{Servers: true},
			[]string{"weather_get_forecast", "weather_get_alerts"}},
		{"Open an issue about the flaky test", SelectOptions{Servers: true},
			[]string{"github_create_issue", "github_list_pull_requests"}},
		{"Tell me a joke", SelectOptions{Servers: true}, names(tools)}, // nothing matches: every server
		{"weather forecast", SelectOptions{Servers: true, MaxTools: 1}, []string{"weather_get_forecast"}},
		{"add numbers and list pull requests", SelectOptions{MaxTools: 2}, []string{"github_list_pull_requests", "calc_add"}},
		{"anything", SelectOptions{MaxTools: 2}, []string{"github_create_issue", "github_list_pull_requests"}}, // ties: declaration order
	} {
		got := names(Select(tc.prompt, tools, desc, &tc.o))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Select(%q, %+v) (-want +got):\n%s", tc.prompt, tc.o, diff)
		}
	}
}
