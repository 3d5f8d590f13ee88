package workflow

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
)

// publish makes an engine, publishes wfs through a host's in-process
// server next to the fixture, and launches the engine on that host.
func publish(t *testing.T, wfs ...*Workflow) (*host.Host, *Engine) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	e, err := New(ctx, &EngineOptions{Database: filepath.Join(dir, "state.db"), Workflows: registry(wfs...)})
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
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg),
		Args: []string{"-call-log", filepath.Join(dir, "calls.log")}}}, &host.Options{InProcess: []host.InProcessServer{ip}})
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

// TestToolCallElicitationRefused: a client that cannot answer a gate gets
// an error and the run keeps waiting, answerable another way.
func TestToolCallElicitationRefused(t *testing.T) {
	h, e := publish(t, gateWorkflow(GateFail))
	_, err := h.CallTool(context.Background(), "mcp_workflows_workflow_approve", nil, &host.CallOptions{
		Elicitation: func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return nil, &jsonrpcMethodNotFound{}
		},
	})
	if err == nil {
		t.Fatal("the call succeeded without an answer")
	}
	runs, err := e.Runs(context.Background(), nil)
	if err != nil || len(runs) != 1 || runs[0].State != RunWaiting {
		t.Fatalf("runs = %+v, %v: want one, waiting", runs, err)
	}
	if err := e.Answer(context.Background(), runs[0].ID, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "cli"}}); err != nil {
		t.Fatal(err)
	}
}

// TestRequestStateSigned: a requestState is accepted as signed, refused
// changed in any byte, and refused by an engine on another database.
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
	expired, _ := e.signState(ctx, gateState{Run: "r1", Gate: "ok", Expires: time.Now().Add(-time.Second).Unix()})
	if _, err := e.verifyState(ctx, expired); err == nil || !strings.Contains(err.Error(), "switchboard runs answer r1 ok") {
		t.Errorf("expired state: %v", err)
	}
}

type jsonrpcMethodNotFound struct{}

func (*jsonrpcMethodNotFound) Error() string { return "Method not found" }
