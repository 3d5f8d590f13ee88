package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// publish makes an engine, publishes wfs through a host's in-process
// server next to the fixture, and launches the engine on that host.
func publish(t *testing.T, wfs ...*Workflow) (*host.Host, *Engine) {
	t.Helper()
	return publishWith(t, nil, wfs...)
}

// publishWith is publish with the host's options (InProcess is set).
func publishWith(t *testing.T, hopts *host.Options, wfs ...*Workflow) (*host.Host, *Engine) {
	t.Helper()
	return publishOn(t, &EngineOptions{Database: filepath.Join(t.TempDir(), "state.db")}, hopts, wfs...)
}

// publishOn is publishWith with the engine's options (Workflows is set):
// its database, say, to publish on a database another engine uses.
func publishOn(t *testing.T, eopts *EngineOptions, hopts *host.Options, wfs ...*Workflow) (*host.Host, *Engine) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	eo := *eopts
	eo.Workflows = registry(wfs...)
	e, err := New(ctx, &eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var ids []string
	for _, wf := range wfs {
		ids = append(ids, wf.ID)
	}
	ip, err := e.InProcess(ids, "")
	if err != nil {
		t.Fatal(err)
	}
	var o host.Options
	if hopts != nil {
		o = *hopts
	}
	o.InProcess = append(o.InProcess, ip)
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg),
		Args: []string{"-call-log", filepath.Join(dir, "calls.log")}}}, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Launch(ctx, h); err != nil {
		t.Fatal(err)
	}
	return h, e
}

func TestToolCallWithElicitation(t *testing.T) {
	h, _ := publish(t, gateWorkflow(GateFail))
	tools := h.Tools()
	i := slices.IndexFunc(tools, func(tl host.Tool) bool { return tl.Name == "mcp_workflows_workflow_approve" })
	if i < 0 {
		t.Fatalf("no workflow tool in %v", tools)
	}
	if tools[i].Tool.OutputSchema == nil {
		t.Error("the workflow tool has no outputSchema")
	}
	var mu sync.Mutex
	var progress []string
	var asked string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.CallTool(ctx, "mcp_workflows_workflow_approve", nil, &host.CallOptions{
		Progress: func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			progress = append(progress, p.Message)
			mu.Unlock()
		},
		Elicitation: func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked = req.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "eve"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("result is an error: %s", resultText(res))
	}
	if got := res.StructuredContent.(map[string]any)["after"]; got != "approved by eve" {
		t.Errorf("structuredContent.after = %v", got)
	}
	if asked != "Deploy before?" {
		t.Errorf("elicitation message = %q", asked)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"step before completed", "gate ok waiting", "gate ok accept", "step after completed"} {
		if !slices.Contains(progress, want) {
			t.Errorf("progress %q lacks %q", progress, want)
		}
	}
}

func TestToolCallFailure(t *testing.T) {
	h, _ := publish(t, &Workflow{ID: "broken", Steps: []*Step{{ID: "boom", Kind: StepTool, Tool: "mcp_fx_fail"}}})
	res, err := h.CallTool(context.Background(), "mcp_workflows_workflow_broken", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "boom") || !strings.Contains(text, "tool_error") {
		t.Errorf("result = %v %q, want an error naming step boom", res.IsError, text)
	}
}

// TestToolCallElicitationRefused: a call whose client cannot answer a gate
// (its handler refuses, or it has none) ends in a tool error naming the run,
// the gate and the CLI way to answer; the gate is not declined and the run
// keeps waiting, answerable that way. Over both generations of the host's
// connection to the in-process server: 2026-07-28, where the host's client
// asks its handler for the input-required result, and 2025-11-25, where the
// go-sdk's server turns the result into an elicitation request.
func TestToolCallElicitationRefused(t *testing.T) {
	refuse := func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return nil, &jsonrpcMethodNotFound{}
	}
	for _, version := range []string{"", "2025-11-25"} {
		for _, handler := range []struct {
			name string
			h    host.ElicitationHandler
		}{{"refusing handler", refuse}, {"no handler", nil}} {
			t.Run(cmp.Or(version, "newest")+"/"+handler.name, func(t *testing.T) {
				h, e := publishWith(t, &host.Options{ProtocolVersion: version}, gateWorkflow(GateFail))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				res, err := h.CallTool(ctx, "mcp_workflows_workflow_approve", nil, &host.CallOptions{Elicitation: handler.h})
				if err != nil {
					t.Fatalf("err = %v, want a tool error", err)
				}
				runs, err := e.Runs(ctx, nil)
				if err != nil || len(runs) != 1 || runs[0].State != RunWaiting {
					t.Fatalf("runs = %+v, %v: want one, waiting", runs, err)
				}
				want := "switchboard runs answer " + runs[0].ID + " ok --value JSON"
				if text := resultText(res); !res.IsError || !strings.Contains(text, want) {
					t.Errorf("result = %v %q, want an error naming %q", res.IsError, text, want)
				}
				if err := e.Answer(ctx, runs[0].ID, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "cli"}}); err != nil {
					t.Fatal(err)
				}
				st, err := e.Wait(ctx, runs[0].ID)
				if err != nil || st.State != RunCompleted || st.Outputs["after"] != "approved by cli" {
					t.Errorf("after the CLI's answer: %+v, %v", st, err)
				}
			})
		}
	}
}

// TestRequestStateSigned: a requestState is accepted as signed, refused
// changed in any byte, and refused by an engine on another database unless
// both are given the key (EngineOptions.StateKey).
func TestRequestStateSigned(t *testing.T) {
	_, e := publish(t, gateWorkflow(GateFail))
	ctx := context.Background()
	st := gateState{Run: "r1", Gate: "ok", Expires: time.Now().Add(time.Hour).Unix()}
	s, err := e.signState(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.verifyState(ctx, s); err != nil || got != st {
		t.Fatalf("verifyState = %+v, %v", got, err)
	}
	for i := range s {
		b := []byte(s)
		b[i] ^= 1
		if _, err := e.verifyState(ctx, string(b)); err == nil {
			t.Errorf("state changed at byte %d verified", i)
		}
	}
	_, other := publish(t, gateWorkflow(GateFail))
	if _, err := other.verifyState(ctx, s); err == nil {
		t.Error("another database's engine verified the state")
	}
	// A key given to both engines (derived from [state] encryption_key):
	// they verify each other's states although their databases differ,
	// and a state signed with a database's own key no longer verifies.
	key := []byte(strings.Repeat("k", 32))
	e.opts.StateKey, other.opts.StateKey = key, key
	given, err := e.signState(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := other.verifyState(ctx, given); err != nil || got != st {
		t.Errorf("a state signed with the given key, verified by another engine with it: %+v, %v", got, err)
	}
	if _, err := e.verifyState(ctx, s); err == nil {
		t.Error("a state signed with the database's key verified under the given key")
	}
	// The key rotated: the new one signs, the old one (a fallback) still
	// verifies what it signed; once it is gone, that no longer verifies.
	newKey := []byte(strings.Repeat("n", 32))
	other.opts.StateKey, other.opts.StateKeyFallbacks = newKey, [][]byte{key}
	if got, err := other.verifyState(ctx, given); err != nil || got != st {
		t.Errorf("a state signed with the old key, verified with it as a fallback: %+v, %v", got, err)
	}
	if fresh, _ := other.signState(ctx, st); fresh == given {
		t.Error("the rotated engine signed with its fallback")
	} else if _, err := e.verifyState(ctx, fresh); err == nil {
		t.Error("an engine with the old key alone verified a state signed with the new one")
	}
	other.opts.StateKeyFallbacks = nil
	if _, err := other.verifyState(ctx, given); err == nil {
		t.Error("a state signed with the old key verified once the fallback was gone")
	}
	expired, _ := e.signState(ctx, gateState{Run: "r1", Gate: "ok", Expires: time.Now().Add(-time.Second).Unix()})
	if _, err := e.verifyState(ctx, expired); err == nil || !strings.Contains(err.Error(), "switchboard runs answer r1 ok") {
		t.Errorf("expired state: %v", err)
	}
}

type jsonrpcMethodNotFound struct{}

func (*jsonrpcMethodNotFound) Error() string { return "Method not found" }

// TestPublishedAnnotations: a published workflow's annotations derive from
// the host's tools, known once the engine is launched on the started host:
// read-only when its only tool is, destructive and open-world when a tool
// says nothing (MCP's defaults).
func TestPublishedAnnotations(t *testing.T) {
	ro := mcp.NewServer(&mcp.Implementation{Name: "ro", Version: "1"}, nil)
	ro.AddTool(&mcp.Tool{Name: "peek", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "peeked"}}}, nil
		})
	h, _ := publishWith(t, &host.Options{InProcess: []host.InProcessServer{{ID: "ro", Server: ro}}},
		&Workflow{ID: "reader", Steps: []*Step{{ID: "p", Kind: StepTool, Tool: "mcp_ro_peek"}}},
		&Workflow{ID: "writer", Steps: []*Step{echo("e", "x")}})
	annotations := func(name string) *mcp.ToolAnnotations {
		tl, ok := h.Tool(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		return tl.Tool.Annotations
	}
	// The host re-reads the engine's tools when they change (list_changed):
	// poll that condition, bounded.
	wait.For(t, "reader's annotations to be read-only", func() (*mcp.ToolAnnotations, bool) {
		a := annotations("mcp_workflows_workflow_reader")
		return a, a != nil && a.ReadOnlyHint
	})
	if a := annotations("mcp_workflows_workflow_reader"); a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("reader's annotations = %+v, want not destructive, closed world", a)
	}
	if a := annotations("mcp_workflows_workflow_writer"); a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("writer's annotations = %+v, want destructive", a)
	}
}
