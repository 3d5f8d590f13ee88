package daemon_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// TestEndpointUsage: the tool calls made through a named endpoint count in
// the usage under its name (its own renamed tool under the server's name
// for it), beside the calls through /mcp, which count in none; the usage
// of one endpoint holds its calls alone.
func TestEndpointUsage(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	cfg.Endpoints = []config.Endpoint{
		{Name: "code", Servers: []string{"fx"}, Tools: []string{"fx_echo"}, Rename: map[string]string{"say": "mcp_fx_echo"}},
		{Name: "ops", Servers: []string{"fx"}},
	}
	r := run(t, cfg, openStore(t), nil)
	r.awaitReady(t)
	ctx := context.Background()
	call := func(path, tool string, n int) {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + path}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", path, err)
		}
		defer cs.Close()
		for range n {
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
				t.Fatalf("%s: %s: %v %+v", path, tool, err, res)
			}
		}
	}
	since := time.Now().Add(-time.Minute)
	call("/e/code/mcp", "say", 2)
	call("/mcp", "mcp_fx_echo", 1)
	all, err := r.d.Usage(ctx, since, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Calls) != 1 || all.Calls[0].Server != "fx" || all.Calls[0].Tool != "echo" || all.Calls[0].Calls != 3 {
		t.Errorf("usage of every call = %+v, want fx's echo called 3 times", all.Calls)
	}
	if len(all.Endpoints) != 1 || all.Endpoints[0].Endpoint != "code" || all.Endpoints[0].Calls != 2 {
		t.Errorf("usage by endpoint = %+v, want code's 2 calls (ops had none, /mcp's are in none)", all.Endpoints)
	}
	code, err := r.d.Usage(ctx, since, "code")
	if err != nil {
		t.Fatal(err)
	}
	if len(code.Calls) != 1 || code.Calls[0].Calls != 2 || code.Endpoint != "code" {
		t.Errorf("usage of endpoint code = %+v, want echo's 2 calls", code)
	}
}

// TestSearchModeUsage: with [gateway] mode = "search" and an endpoint in
// search mode, /mcp and the endpoint list search_tools and call_tool; a
// call_tool counts in usage (and telemetry) as a call of the tool it
// calls, by the endpoint it came through, never as "call_tool".
func TestSearchModeUsage(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}, Gateway: config.Gateway{Mode: config.ModeSearch}}
	cfg.Endpoints = []config.Endpoint{{Name: "s", Mode: config.ModeSearch}}
	r := run(t, cfg, openStore(t), nil)
	r.awaitReady(t)
	ctx := context.Background()
	since := time.Now().Add(-time.Minute)
	for _, path := range []string{"/mcp", "/e/s/mcp"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + path}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", path, err)
		}
		lt, err := cs.ListTools(ctx, nil)
		if err != nil || len(lt.Tools) != 2 {
			t.Fatalf("%s: tools/list = %v, %v; want search_tools and call_tool", path, lt, err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "mcp_fx_echo", "arguments": map[string]any{"text": "hi"}}})
		if err != nil || res.IsError {
			t.Fatalf("%s: call_tool echo: %v %+v", path, err, res)
		}
		cs.Close()
	}
	all, err := r.d.Usage(ctx, since, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Calls) != 1 || all.Calls[0].Server != "fx" || all.Calls[0].Tool != "echo" || all.Calls[0].Calls != 2 {
		t.Errorf("usage = %+v, want fx's echo called twice", all.Calls)
	}
	if len(all.Endpoints) != 1 || all.Endpoints[0].Endpoint != "s" || all.Endpoints[0].Calls != 1 {
		t.Errorf("usage by endpoint = %+v, want s's 1 call", all.Endpoints)
	}
}
