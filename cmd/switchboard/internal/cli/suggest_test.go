package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
)

// TestNearest: "did you mean" finds near misses, not only substrings:
// '-' for '_' and case, typos by edit distance, a server's own tool name.
func TestNearest(t *testing.T) {
	tools := toolCandidates([]host.Tool{
		{Name: "mcp_everything_get-sum", Tool: &mcp.Tool{Name: "get-sum"}},
		{Name: "mcp_everything_echo", Tool: &mcp.Tool{Name: "echo"}},
		{Name: "mcp_everything_get-env", Tool: &mcp.Tool{Name: "get-env"}},
		{Name: "mcp_fx_add", Tool: &mcp.Tool{Name: "add"}},
	})
	agents := names([]string{"calculator", "researcher", "summarise"})
	for _, tc := range []struct {
		typed string
		cands []candidate
		want  []string
	}{
		{"mcp_everything_get_sum", tools, []string{"mcp_everything_get-sum"}},
		{"MCP_Everything_Get-Sum", tools, []string{"mcp_everything_get-sum"}},
		{"mcp_everything_get_snv", tools, []string{"mcp_everything_get-env"}},
		{"mcp_everything_get-xyz", tools, []string{"mcp_everything_get-sum", "mcp_everything_get-env"}},
		{"get-sum", tools, []string{"mcp_everything_get-sum"}},
		{"get_summ", tools, []string{"mcp_everything_get-sum"}},
		{"mcp_everything_ecko", tools, []string{"mcp_everything_echo"}},
		{"echo", tools, []string{"mcp_everything_echo"}},
		{"ad", tools, []string{"mcp_fx_add"}},
		{"frobnicate", tools, nil},
		{"calculater", agents, []string{"calculator"}},
		{"Calculator", agents, []string{"calculator"}},
		{"reseacher", agents, []string{"researcher"}},
		{"summarize", agents, []string{"summarise"}},
		{"x", agents, nil},
	} {
		if got := nearest(tc.typed, tc.cands); !cmp.Equal(got, tc.want) {
			t.Errorf("nearest(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}
