package workflow

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
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
	return newGatewayRigWith(t, &gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}, wfs...)
}

// newGatewayRigWith is newGatewayRig with the handler's options.
func newGatewayRigWith(t *testing.T, hopts *gateway.HTTPOptions, wfs ...*Workflow) *gatewayRig {
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
	ts := httptest.NewServer(g.Handler(hopts))
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
	return r.connectWith(t, version, opts, nil)
}

// connectWith is connect with an HTTP client (nil: the default).
func (r *gatewayRig) connectWith(t *testing.T, version string, opts *mcp.ClientOptions, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
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

// bearer adds the Authorization header of a token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// callGreet calls the greet workflow through cs with meta in the call's
// _meta, and returns its output, or the tool error's text after "error: ".
func callGreet(t *testing.T, cs *mcp.ClientSession, who string, meta mcp.Meta) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := &mcp.CallToolParams{Name: greetTool, Arguments: map[string]any{"who": who}, Meta: meta}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Errorf("calling %s: %v", greetTool, err)
		return ""
	}
	if res.IsError {
		return "error: " + resultText(res)
	}
	out, _ := res.StructuredContent.(map[string]any)
	text, _ := out["text"].(string)
	return text
}

func (r *gatewayRig) runCount(t *testing.T) int {
	t.Helper()
	runs, err := r.e.Runs(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// keyMeta is the _meta of a call with an idempotency key, as a client
// writes it (host.MetaKeyIdempotencyKey).
func keyMeta(k string) mcp.Meta { return mcp.Meta{"switchboard/idempotency_key": k} }

// TestIdempotencyKeyThroughGateway: a client's idempotency key through the
// gateway, scoped to its caller. Anonymous callers on loopback are their
// sessions: the same session's retry gets its run, another session's call
// with the same key a run of its own, the key with other arguments is
// refused, a session that names another's scope in _meta gets nothing of
// it, and a caller with no session (2026-07-28, anonymous) cannot use a
// key. The auth token's holder is one caller, whatever its sessions.
// Before, the key was ignored: every call was a new run.
func TestIdempotencyKeyThroughGateway(t *testing.T) {
	r := newGatewayRig(t, greetWorkflow())
	a := r.connect(t, "2025-11-25", nil)
	b := r.connect(t, "2025-11-25", nil)
	if got := callGreet(t, a, "ana", keyMeta("k1")); got != "hello ana" {
		t.Fatalf("keyed call = %q", got)
	}
	if got := callGreet(t, a, "ana", keyMeta("k1")); got != "hello ana" || r.runCount(t) != 1 {
		t.Errorf("the same session's retry = %q, %d runs: want its run again", got, r.runCount(t))
	}
	if got := callGreet(t, b, "ana", keyMeta("k1")); got != "hello ana" || r.runCount(t) != 2 {
		t.Errorf("another session with the same key = %q, %d runs: want a run of its own", got, r.runCount(t))
	}
	if got := callGreet(t, a, "bob", keyMeta("k1")); !isRefusal(got, "idempotency key") || r.runCount(t) != 2 {
		t.Errorf("the key again with other arguments = %q, %d runs: want a refusal", got, r.runCount(t))
	}
	callGreet(t, a, "cleo", keyMeta("k2"))
	forged := keyMeta("k2")
	forged["switchboard/caller"] = "session:" + a.ID()
	if got := callGreet(t, b, "cleo", forged); got != "hello cleo" || r.runCount(t) != 4 {
		t.Errorf("a session claiming another's scope in _meta = %q, %d runs: want a run of its own", got, r.runCount(t))
	}
	c := r.connect(t, "2026-07-28", nil)
	if got := callGreet(t, c, "dan", keyMeta("k3")); !isRefusal(got, "idempotency key") {
		t.Errorf("an anonymous call without a session, with a key = %q: want a refusal", got)
	}

	const tok = "an-auth-token-of-the-owner-0123456789"
	ro := newGatewayRigWith(t, &gateway.HTTPOptions{Guard: guard.Options{Loopback: true, AuthToken: tok}}, greetWorkflow())
	hc := &http.Client{Transport: bearer(tok)}
	x := ro.connectWith(t, "2025-11-25", nil, hc)
	y := ro.connectWith(t, "2025-11-25", nil, hc)
	z := ro.connectWith(t, "2026-07-28", nil, hc)
	for i, cs := range []*mcp.ClientSession{x, y, z} {
		if got := callGreet(t, cs, "ana", keyMeta("k1")); got != "hello ana" || ro.runCount(t) != 1 {
			t.Errorf("the owner's call %d with the key = %q, %d runs: want one run", i, got, ro.runCount(t))
		}
	}
}

// TestToolRunsTwoClientsAtOnce: two clients calling a published workflow
// at the same instant, with the same progress token, each get their own
// run and outputs.
func TestToolRunsTwoClientsAtOnce(t *testing.T) {
	r := newGatewayRig(t, greetWorkflow())
	clients := []*mcp.ClientSession{r.connect(t, "2025-11-25", nil), r.connect(t, "2025-11-25", nil)}
	who := []string{"ana", "bob"}
	got := make([]string, 2)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, cs := range clients {
		wg.Go(func() {
			<-start
			got[i] = callGreet(t, cs, who[i], mcp.Meta{"progressToken": "1"})
		})
	}
	close(start)
	wg.Wait()
	if got[0] != "hello ana" || got[1] != "hello bob" || r.runCount(t) != 2 {
		t.Errorf("two clients at once = %q, %d runs: want [hello ana hello bob], 2", got, r.runCount(t))
	}
}

// TestGateAnsweredOnceThroughGateway: a 2026-07-28 client's retries of one
// input-required result, sent at the same instant (a client retrying on a
// lost answer, or several of its windows), answer the gate once: one call
// gets the run's outputs, the others a tool error saying the gate was
// answered already. Before, each was told its answer was taken and
// got the outputs of an answer that was not its own.
func TestGateAnsweredOnceThroughGateway(t *testing.T) {
	r := newGatewayRig(t, gateWorkflow(GateFail))
	cs := r.connect(t, "2026-07-28", &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the client was sent an elicitation request")
			return nil, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("call = %+v, %v: want input required", res, err)
	}
	const n = 4
	results := make([]*mcp.CallToolResult, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			answer := mcp.InputResponseMap{"gate": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "p" + strconv.Itoa(i)}}}
			results[i], errs[i] = cs.CallTool(ctx, &mcp.CallToolParams{Name: approveTool, InputResponses: answer, RequestState: res.RequestState})
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Errorf("retry %d: %v", i, errs[i])
		case !results[i].IsError:
			won++
			if got, _ := results[i].StructuredContent.(map[string]any); got["after"] != "approved by p"+strconv.Itoa(i) {
				t.Errorf("retry %d won with outputs %v, not its own answer's", i, results[i].StructuredContent)
			}
		case !strings.Contains(resultText(results[i]), "answered already"):
			t.Errorf("retry %d lost with %q, want it told the gate was answered already", i, resultText(results[i]))
		}
	}
	if won != 1 {
		t.Errorf("%d retries were told their answer was taken, want 1", won)
	}
}
