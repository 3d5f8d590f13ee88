package daemon_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestEndpointsWorkflows: a daemon serves each [[endpoints]] table at its
// path beside /mcp; a published workflow is offered on the default
// endpoint and on the named ones that list it, and on no other (a call
// there is an unknown tool), and a workflow's hidden tools stay hidden on
// every endpoint; called through an endpoint that lists it, it runs.
func TestEndpointsWorkflows(t *testing.T) {
	v, err := workflow.NewValue(map[string]any{"a": 1, "b": 2})
	if err != nil {
		t.Fatal(err)
	}
	wf := &workflow.Workflow{ID: "hello", Digest: "d1", HideTools: true, Steps: []*workflow.Step{{ID: "a", Kind: workflow.StepTool, Tool: "mcp_fx_add", Arguments: v}}}
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	cfg.State.Database = filepath.Join(t.TempDir(), "state.db") // the engine's: not the user's
	cfg.Gateway.Workflows = []string{"hello"}
	cfg.Endpoints = []config.Endpoint{
		{Name: "flows", Servers: []string{"fx"}, Tools: []string{"fx_echo"}, Workflows: []string{"hello"}},
		{Name: "plain"},
	}
	r := run(t, cfg, openStore(t), nil, daemon.Options{Workflows: []*workflow.Workflow{wf}})
	r.awaitReady(t)
	ctx := context.Background()
	tools := func(path string) (*mcp.ClientSession, []string) {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + path}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", path, err)
		}
		t.Cleanup(func() { cs.Close() })
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v", path, err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return cs, names
	}
	_, def := tools("/mcp")
	flows, flowsTools := tools("/e/flows/mcp")
	plain, plainTools := tools("/e/plain/mcp")
	if !slices.Contains(def, "workflow_hello") || slices.Contains(def, "mcp_fx_add") {
		t.Errorf("/mcp lists %v: want workflow_hello, and not mcp_fx_add (hidden by the workflow)", def)
	}
	if want := []string{"mcp_fx_echo", "workflow_hello"}; !slices.Equal(flowsTools, want) {
		t.Errorf("/e/flows/mcp lists %v, want %v", flowsTools, want)
	}
	if slices.Contains(plainTools, "workflow_hello") || slices.Contains(plainTools, "mcp_fx_add") || !slices.Contains(plainTools, "mcp_fx_echo") {
		t.Errorf("/e/plain/mcp lists %v: want fx's tools but mcp_fx_add, and no workflow", plainTools)
	}
	if _, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_hello"}); err == nil {
		t.Errorf("workflow_hello called on /e/plain/mcp, which does not list it")
	}
	res, err := flows.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_hello"})
	if err != nil || res.IsError {
		t.Errorf("workflow_hello on /e/flows/mcp: %v, %+v", err, res)
	}
}
