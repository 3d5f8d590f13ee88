package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestNamedEndpoint: an [[endpoints]] table becomes the gateway's endpoint
// at its paths with its choice of tools; the published workflows are
// offered only where listed (their server and exact tool names added
// there, their tools hidden elsewhere), and every endpoint keeps the
// default one's policy and hidden tools.
func TestNamedEndpoint(t *testing.T) {
	cfg := &config.Config{Gateway: config.Gateway{Workflows: []string{"review", "triage"}}}
	policy := []config.AuthPolicy{{Scope: "x"}}
	def := gateway.Endpoint{Policy: policy, HideTools: []string{"mcp_a_delete"}}
	for _, tt := range []struct {
		name string
		in   config.Endpoint
		want gateway.Endpoint
	}{
		{"every tool, no workflow", config.Endpoint{Name: "all"}, gateway.Endpoint{
			Name: "all", Path: "/e/all/mcp", SSE: "/e/all/sse", Message: "/e/all/message", WebSocket: "/e/all/ws",
			Policy: policy, HideTools: []string{"mcp_a_delete", "workflow_review", "workflow_triage"}}},
		{"servers, tools, a workflow", config.Endpoint{Name: "code", Path: "/code/mcp", Servers: []string{"a"}, Tools: []string{"a_*"}, Workflows: []string{"review"}, Instructions: "hi"}, gateway.Endpoint{
			Name: "code", Path: "/code/mcp", SSE: "/code/sse", Message: "/code/message", WebSocket: "/code/ws",
			Servers: []string{"a", workflow.InProcessServerID}, Tools: []string{"a_*", "workflow_review"}, Instructions: "hi",
			Policy: policy, HideTools: []string{"mcp_a_delete", "workflow_triage"}}},
		{"every server and tool, a workflow", config.Endpoint{Name: "w", Workflows: []string{"triage"}}, gateway.Endpoint{
			Name: "w", Path: "/e/w/mcp", SSE: "/e/w/sse", Message: "/e/w/message", WebSocket: "/e/w/ws",
			Policy: policy, HideTools: []string{"mcp_a_delete", "workflow_review"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, namedEndpoint(cfg, tt.in, def)); diff != "" {
				t.Errorf("namedEndpoint(%+v) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	if len(def.HideTools) != 1 {
		t.Errorf("the default endpoint's HideTools changed: %v", def.HideTools)
	}
}
