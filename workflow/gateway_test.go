package workflow

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
)

// gatewayRig is the daemon's arrangement in small: an engine whose
// in-process server a host offers next to the fixture, published by a
// real gateway on loopback.
type gatewayRig struct {
	e   *Engine
	url string

	mu sync.Mutex
	// states are the requestStates the engine's server returned, in order,
	// as it returned them (before any gateway or host saw them).
	states []string
}

func newGatewayRig(t *testing.T, wfs ...*Workflow) *gatewayRig {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
	r := &gatewayRig{e: e}
	// Outermost: sees what the engine's handler returned to the host.
	ip.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if c, ok := res.(*mcp.CallToolResult); ok && c.RequestState != "" {
				r.mu.Lock()
				r.states = append(r.states, c.RequestState)
				r.mu.Unlock()
			}
			return res, err
		}
	})
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg),
		Args: []string{"-call-log", filepath.Join(dir, "calls.log")}}}, gateway.HostOptions(&host.Options{InProcess: []host.InProcessServer{ip}}, nil))
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
	g, err := gateway.New(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Loopback: true}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	r.url = ts.URL + "/mcp"
	return r
}

func (r *gatewayRig) connect(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: r.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

func (r *gatewayRig) signed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...)
}

// waitingRun returns the one run, which must be waiting on gate ok.
func (r *gatewayRig) waitingRun(t *testing.T) string {
	t.Helper()
	runs, err := r.e.Runs(context.Background(), nil)
	if err != nil || len(runs) != 1 || runs[0].State != RunWaiting {
		t.Fatalf("runs = %+v, %v: want one, waiting", runs, err)
	}
	return runs[0].ID
}

const approveTool = "mcp_workflows_workflow_approve"

// TestGateThroughGateway2025: a 2025-11-25 client answers a gate by the
// elicitation request the gateway forwards (the go-sdk's server turns the
// engine's input-required result into one on the host's 2025-11-25
// connection), and its call returns the run's outputs.
func TestGateThroughGateway2025(t *testing.T) {
	r := newGatewayRig(t, gateWorkflow(GateFail))
	var asked []string
	cs := r.connect(t, "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "eve"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("result is an error: %s", resultText(res))
	}
	if got, _ := res.StructuredContent.(map[string]any); got["after"] != "approved by eve" {
		t.Errorf("structuredContent = %v, want after: approved by eve", res.StructuredContent)
	}
	if len(asked) != 1 || asked[0] != "Deploy before?" {
		t.Errorf("elicitations = %q, want one, Deploy before?", asked)
	}
}

// TestGateThroughGateway2026: a 2026-07-28 client gets the engine's
// input-required result through the gateway with its requestState unchanged,
// byte for byte; a retry with that state tampered is refused and the run
// keeps waiting; the retry with the state as signed answers the gate and
// returns the outputs.
func TestGateThroughGateway2026(t *testing.T) {
	r := newGatewayRig(t, gateWorkflow(GateFail))
	// The client answers input-required results itself, to see them.
	cs := r.connect(t, "2026-07-28", &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the client was sent an elicitation request")
			return nil, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() {
		t.Fatalf("result = %+v, want input required", res)
	}
	q, ok := res.InputRequests["gate"].(*mcp.ElicitParams)
	if !ok || q.Message != "Deploy before?" {
		t.Fatalf("inputRequests = %+v, want the gate's elicitation", res.InputRequests)
	}
	signed := r.signed()
	if len(signed) != 1 || res.RequestState != signed[0] {
		t.Fatalf("requestState = %q, the engine signed %q", res.RequestState, signed)
	}
	run := r.waitingRun(t)
	st, err := r.e.verifyState(ctx, res.RequestState)
	if err != nil || st.Run != run || st.Gate != "ok" {
		t.Fatalf("the state verifies as %+v, %v; want run %s, gate ok", st, err, run)
	}

	answer := mcp.InputResponseMap{"gate": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "neo"}}}
	tampered := []byte(res.RequestState)
	tampered[len(tampered)/3] ^= 1
	bad, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool, InputResponses: answer, RequestState: string(tampered)})
	if err != nil {
		t.Fatal(err)
	}
	if !bad.IsError || !strings.Contains(resultText(bad), "requestState refused") {
		t.Errorf("tampered retry = %v %q, want a refusal", bad.IsError, resultText(bad))
	}
	r.waitingRun(t) // still waiting, on the same gate

	done, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool, InputResponses: answer, RequestState: res.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if done.IsError || done.NeedsInput() {
		t.Fatalf("retry = %+v %q, want the outputs", done, resultText(done))
	}
	if got, _ := done.StructuredContent.(map[string]any); got["after"] != "approved by neo" {
		t.Errorf("structuredContent = %v, want after: approved by neo", done.StructuredContent)
	}
}

// TestGateThroughGatewayNoElicitation: a client of either generation that
// cannot answer (it declares no elicitation) gets a tool error naming the
// CLI way to answer, and the run keeps waiting, answerable that way.
func TestGateThroughGatewayNoElicitation(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			r := newGatewayRig(t, gateWorkflow(GateFail))
			cs := r.connect(t, version, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool})
			if err != nil {
				t.Fatalf("err = %v, want a tool error", err)
			}
			run := r.waitingRun(t)
			want := "switchboard runs answer " + run + " ok --value JSON"
			if text := resultText(res); !res.IsError || !strings.Contains(text, want) {
				t.Errorf("result = %v %q, want an error naming %q", res.IsError, text, want)
			}
			if err := r.e.Answer(ctx, run, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "cli"}}); err != nil {
				t.Fatal(err)
			}
			if st, err := r.e.Wait(ctx, run); err != nil || st.State != RunCompleted {
				t.Errorf("after the CLI's answer: %+v, %v", st, err)
			}
		})
	}
}
