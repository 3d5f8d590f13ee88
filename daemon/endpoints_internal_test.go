package daemon

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
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
		{"search mode", config.Endpoint{Name: "s", Mode: config.ModeSearch}, gateway.Endpoint{
			Name: "s", Path: "/e/s/mcp", SSE: "/e/s/sse", Message: "/e/s/message", WebSocket: "/e/s/ws", Mode: config.ModeSearch,
			Policy: policy, HideTools: []string{"mcp_a_delete", "workflow_review", "workflow_triage"}}},
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

// TestEndpointTokensOwnScope: an endpoint's token is refused when it is
// also the owner's (it would open everything) or another endpoint's (it
// would open both), naming the endpoint and the field, never the token.
func TestEndpointTokensOwnScope(t *testing.T) {
	env := map[string]string{"OWNER": "owner-secret-1", "A": "a-secret-22", "B": "b-secret-333"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tt := range []struct {
		name      string
		tokens    []string // of endpoints a and b
		wantError string
	}{
		{"each its own", []string{"{{env.A}}", "{{env.B}}"}, ""},
		{"the owner's", []string{"{{env.A}}", "{{env.OWNER}}"}, `endpoints[b].auth_token: the same token as [gateway] auth_token`},
		{"another endpoint's", []string{"{{env.B}}", "{{env.B}}"}, `endpoints[b].auth_token: the same token as endpoint "a"'s`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Gateway: config.Gateway{AuthToken: "{{env.OWNER}}"}, Endpoints: []config.Endpoint{
				{Name: "a", AuthToken: tt.tokens[0], Source: config.Position{File: "sb.toml", Line: 3}},
				{Name: "b", AuthToken: tt.tokens[1], Source: config.Position{File: "sb.toml", Line: 7}},
			}}
			d := &Daemon{opts: Options{Config: cfg, Host: &host.Options{LookupEnv: lookup}}, red: secret.NewRedactor()}
			eps, err := d.endpoints(nil)
			switch {
			case tt.wantError == "" && err != nil:
				t.Fatalf("endpoints(): %v", err)
			case tt.wantError == "" && (len(eps) != 3 || eps[1].AuthToken != "a-secret-22" || eps[2].AuthToken != "b-secret-333"):
				t.Errorf("endpoints() = %+v", eps)
			case tt.wantError != "" && (err == nil || !strings.Contains(err.Error(), tt.wantError)):
				t.Fatalf("endpoints(): %v, want an error saying %q", err, tt.wantError)
			case err != nil && strings.Contains(err.Error(), "secret-"):
				t.Errorf("the error quotes a token: %v", err)
			}
		})
	}
}
