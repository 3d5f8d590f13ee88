package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/schema"
)

// greetWorkflow answers with its input: a call that gets another call's
// run is seen at once.
func greetWorkflow() *Workflow {
	return &Workflow{ID: "greet", Inputs: []Input{{Name: "who", Type: "string", Required: true}},
		Steps:   []*Step{echo("a", "hello {{.inputs.who}}")},
		Outputs: []Output{{Name: "text", Value: tpl("{{.steps.a.result}}")}}}
}

const greetTool = "mcp_workflows_workflow_greet"

// greet calls the greet workflow's tool through h and returns its output,
// or the tool error's text after "error: ".
func greet(t *testing.T, h *host.Host, who string, opts *host.CallOptions) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args, _ := json.Marshal(map[string]any{"who": who})
	res, err := h.CallTool(ctx, greetTool, args, opts)
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

// TestToolRunsAcrossRestart: a published workflow's call after a restart
// (a new host and engine on the same database) runs its own inputs.
// Before, both calls were run "call-switchboard-1" (the new host's
// progress token counter starts again at 1), and the second caller got the
// first one's outputs: "hello ana" for who=bob.
func TestToolRunsAcrossRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	h1, e1 := publishOn(t, &EngineOptions{Database: db}, nil, greetWorkflow())
	if got := greet(t, h1, "ana", nil); got != "hello ana" {
		t.Fatalf("first call = %q, want hello ana", got)
	}
	h1.Close()
	e1.Close()
	h2, e2 := publishOn(t, &EngineOptions{Database: db}, nil, greetWorkflow())
	if got := greet(t, h2, "bob", nil); got != "hello bob" {
		t.Errorf("after a restart, a call with who=bob = %q, want hello bob (its own run)", got)
	}
	runs, err := e2.Runs(context.Background(), nil)
	if err != nil || len(runs) != 2 || runs[0].ID == runs[1].ID {
		t.Errorf("runs = %v, %v: want two", runs, err)
	}
}

// testToolRunsOnReplicas: two engines on one database (replicas), each
// called at the same instant with other inputs, each answer their own
// caller; an engine restarted (a replica restart) too. A call with an
// idempotency key finds its run on the other replica when the same caller
// retries there, and not when another caller uses the key.
func testToolRunsOnReplicas(t *testing.T, database string) {
	hA, _ := publishOn(t, &EngineOptions{Database: database, ExecutorID: "replica-a"}, nil, greetWorkflow())
	hB, eB := publishOn(t, &EngineOptions{Database: database, ExecutorID: "replica-b"}, nil, greetWorkflow())
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i, h := range []*host.Host{hA, hB} {
		wg.Go(func() {
			<-start
			got[i] = greet(t, h, []string{"ana", "bob"}[i], nil)
		})
	}
	close(start)
	wg.Wait()
	if got[0] != "hello ana" || got[1] != "hello bob" {
		t.Errorf("calls at once on two replicas = %q, want [hello ana hello bob]", got)
	}

	// A replica restarted: its first call again.
	hA.Close()
	hA2, _ := publishOn(t, &EngineOptions{Database: database, ExecutorID: "replica-a"}, nil, greetWorkflow())
	if got := greet(t, hA2, "cleo", nil); got != "hello cleo" {
		t.Errorf("after a replica's restart = %q, want hello cleo", got)
	}

	runs := func() int {
		t.Helper()
		rs, err := eB.Runs(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	before := runs()
	keyed := &host.CallOptions{Caller: "oauth:dora", IdempotencyKey: "order-42"}
	if got := greet(t, hA2, "dora", keyed); got != "hello dora" {
		t.Fatalf("keyed call = %q", got)
	}
	if got := greet(t, hB, "dora", keyed); got != "hello dora" || runs() != before+1 {
		t.Errorf("the same caller's retry on the other replica = %q with %d new runs, want its run again", got, runs()-before)
	}
	other := &host.CallOptions{Caller: "oauth:eve", IdempotencyKey: "order-42"}
	if got := greet(t, hB, "dora", other); got != "hello dora" || runs() != before+2 {
		t.Errorf("another caller's call with the key = %q with %d new runs, want a run of its own", got, runs()-before)
	}
	if got := greet(t, hB, "zed", keyed); !isRefusal(got, "idempotency key") {
		t.Errorf("the key again with other arguments = %q, want a refusal", got)
	}
}

func TestToolRunsOnReplicas(t *testing.T) {
	testToolRunsOnReplicas(t, filepath.Join(t.TempDir(), "state.db"))
}

func isRefusal(got, want string) bool {
	return strings.HasPrefix(got, "error: ") && strings.Contains(got, want)
}

// TestGateAnsweredOnce: a gate answered by many at the same instant takes
// exactly one answer; every other answerer gets ErrGateAnswered, and the
// run goes on with the winner's answer. Before, every answer that found
// the gate open was told it was taken (8 winners of 8), and all but one
// were dropped silently.
func TestGateAnsweredOnce(t *testing.T) { testGateAnsweredOnce(t, "") }

func testGateAnsweredOnce(t *testing.T, database string) {
	r := newRigOn(t, database, nil, gateWorkflow(GateFail))
	ctx := context.Background()
	id, err := r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	const n = 8
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": fmt.Sprint("p", i)}})
		})
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil && winner == "":
			winner = fmt.Sprint("p", i)
		case err == nil:
			t.Errorf("answer %d was taken too (after %s's)", i, winner)
		case !errors.Is(err, ErrGateAnswered):
			t.Errorf("answer %d: %v, want ErrGateAnswered", i, err)
		}
	}
	if winner == "" {
		t.Fatal("no answer was taken")
	}
	st, err := r.e.Wait(ctx, id)
	if err != nil || st.State != RunCompleted || st.Outputs["after"] != "approved by "+winner {
		t.Fatalf("run = %+v, %v: want completed with %s's answer", st, err, winner)
	}
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "decline"}); !errors.Is(err, ErrGateAnswered) {
		t.Errorf("an answer after the run went on: %v, want ErrGateAnswered", err)
	}
}

// TestGateAnswerUndeclaredProperty: an answer with a property its gate's
// schema does not declare is refused, at the property's pointer, and the
// gate still waits. Before, {"who":"ana","role":"admin"} was taken.
func TestGateAnswerUndeclaredProperty(t *testing.T) {
	r := newRig(t, nil, gateWorkflow(GateFail))
	ctx := context.Background()
	id, err := r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	err = r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "ana", "role": "admin"}})
	var ve *schema.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "role") {
		t.Fatalf("an answer with an undeclared property: %v, want a validation error naming it", err)
	}
	if err := r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "ana"}}); err != nil {
		t.Fatalf("the answer as declared, after: %v", err)
	}
	if st, err := r.e.Wait(ctx, id); err != nil || st.Outputs["after"] != "approved by ana" {
		t.Errorf("run = %+v, %v", st, err)
	}
}

// TestGateAnswerRacesTimeout: an answer that arrives as the gate's timeout
// fires, but before the gate is closed by it, wins: it is told so, and the
// run goes on with it, not with the timeout. An answer after the timeout
// closed the gate is told it lost.
func TestGateAnswerRacesTimeout(t *testing.T) {
	wf := gateWorkflow(GateFail)
	wf.Steps[1].Gate.Timeout = 300 * time.Millisecond
	r := newRig(t, nil, wf)
	ctx := context.Background()
	var late error
	r.e.testHookGateTimedOut = func(run, gate string) {
		// Recv has timed out; the gate is not closed yet.
		late = r.e.Answer(ctx, run, gate, GateAnswer{Action: "accept", Content: map[string]any{"who": "late"}})
	}
	id, err := r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.e.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if late != nil {
		t.Fatalf("the answer as the timeout fired: %v, want it taken", late)
	}
	if st.State != RunCompleted || st.Outputs["after"] != "approved by late" {
		t.Errorf("run = %s %v %v: want completed with the late answer", st.State, st.Outputs, st.Error)
	}

	// The timeout first: whoever answers after lost.
	r.e.testHookGateTimedOut = nil
	id, err = r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := r.e.Wait(ctx, id); err != nil || st.State != RunFailed || st.Error.Code != ErrGateTimeout {
		t.Fatalf("run = %+v, %v: want failed, timed out", st, err)
	}
	err = r.e.Answer(ctx, id, "ok", GateAnswer{Action: "accept", Content: map[string]any{"who": "later"}})
	if !errors.Is(err, ErrGateAnswered) || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("an answer after the timeout: %v, want ErrGateAnswered saying it timed out", err)
	}
}

// TestRequestStateBoundToCaller: a gate's requestState answers the gate
// only when it comes back from the caller it was given to; from another
// caller it is refused and the gate still waits.
func TestRequestStateBoundToCaller(t *testing.T) {
	wf := gateWorkflow(GateFail)
	r := newRig(t, nil, wf)
	ctx := context.Background()
	id, err := r.e.Start(ctx, "approve", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	state, err := r.e.signState(ctx, gateState{Run: id, Gate: "ok", Expires: time.Now().Add(time.Hour).Unix(), Caller: "oauth:ana"})
	if err != nil {
		t.Fatal(err)
	}
	retry := func(caller string) *mcp.CallToolResult {
		t.Helper()
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "workflow_approve", RequestState: state,
			InputResponses: mcp.InputResponseMap{"gate": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": caller}}},
			Meta:           mcp.Meta{host.MetaKeyCaller: caller}}}
		res, err := r.e.toolHandler(wf)(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := retry("oauth:eve"); !res.IsError || !strings.Contains(resultText(res), "another caller") {
		t.Errorf("the state from another caller = %v %q, want a refusal", res.IsError, resultText(res))
	}
	waitFor(t, r.e, id, func(st *RunStatus) bool { return st.State == RunWaiting })
	if res := retry("oauth:ana"); res.IsError {
		t.Fatalf("the state from its caller: %s", resultText(res))
	}
	if st, err := r.e.Wait(ctx, id); err != nil || st.Outputs["after"] != "approved by oauth:ana" {
		t.Errorf("run = %+v, %v", st, err)
	}
}

// TestKeyedCallOutlivesItsCaller: a call with an idempotency key whose
// caller gives up (a lost connection) leaves its run going, and the
// caller's retry with the key gets that run's outputs; a call without a
// key cancels its run when its caller gives up, as before.
func TestKeyedCallOutlivesItsCaller(t *testing.T) {
	wf := &Workflow{ID: "slowly", Steps: []*Step{{ID: "s", Kind: StepTool, Tool: "mcp_fx_slow", Arguments: val(map[string]any{"ms": 1500})}},
		Outputs: []Output{{Name: "text", Value: tpl("{{.steps.s.result}}")}}}
	h, e := publish(t, wf)
	call := func(ctx context.Context, key string) (*mcp.CallToolResult, error) {
		var opts *host.CallOptions
		if key != "" {
			opts = &host.CallOptions{Caller: "oauth:ana", IdempotencyKey: key}
		}
		return h.CallTool(ctx, "mcp_workflows_workflow_slowly", nil, opts)
	}
	// started waits for the step of run number n (from 1) to start.
	started := func(n int) string {
		t.Helper()
		return wait.For(t, fmt.Sprintf("the step of run %d to start", n), func() (string, bool) {
			runs, _ := e.Runs(context.Background(), nil)
			if len(runs) != n {
				return fmt.Sprintf("%d runs", len(runs)), false
			}
			evs, _ := e.Events(context.Background(), runs[0].ID, 0)
			return runs[0].ID, slices.ContainsFunc(evs, func(ev Event) bool { return ev.Type == EventStepStarted })
		})
	}
	for i, key := range []string{"retry-me", ""} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := call(ctx, key)
			done <- err
		}()
		run := started(i + 1)
		cancel()
		if err := <-done; err == nil {
			t.Fatalf("key %q: the call given up returned no error", key)
		}
		if key == "" {
			if st := waitFor(t, e, run, func(st *RunStatus) bool { return st.State.Ended() }); st.State != RunCancelled {
				t.Errorf("without a key, the run given up is %s, want cancelled", st.State)
			}
			continue
		}
		res, err := call(context.Background(), key)
		if err != nil || res.IsError {
			t.Fatalf("the retry: %v %v", res, err)
		}
		if out, _ := res.StructuredContent.(map[string]any); out["text"] != "slept 1500 ms" {
			t.Errorf("the retry's outputs = %v", res.StructuredContent)
		}
		if st, err := e.Get(context.Background(), run); err != nil || st.State != RunCompleted {
			t.Errorf("the run the caller gave up = %+v, %v: want it completed, not cancelled", st, err)
		}
		if runs, _ := e.Runs(context.Background(), nil); len(runs) != 1 {
			t.Errorf("%d runs after the retry, want 1", len(runs))
		}
	}
}

// TestKeyedCallOfAnInterruptedRun: a client's retry (same caller, same
// idempotency key) of a call whose run was interrupted at a step that is
// not idempotent (its process stopped mid-call) is told so at once, with
// the command that resolves it, instead of waiting on a run that waits for
// a person; once resolved, the same retry follows the run to its outputs.
// Before, the retry waited until its caller gave up.
func TestKeyedCallOfAnInterruptedRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	reached := make(chan struct{})
	var once sync.Once
	hold := &EngineOptions{Database: db, StepContext: func(ctx context.Context, ev Event) context.Context {
		if ev.Step == "c" {
			once.Do(func() { close(reached) })
			<-ctx.Done()
		}
		return ctx
	}}
	opts := &host.CallOptions{Caller: "oauth:ana", IdempotencyKey: "order-7"}
	const tool = "mcp_workflows_workflow_once"
	h1, e1 := publishOn(t, hold, nil, onceWorkflow())
	first := make(chan error, 1)
	go func() {
		_, err := h1.CallTool(context.Background(), tool, nil, opts)
		first <- err
	}()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("step c never started")
	}
	e1.Close() // the process stops mid-call
	h1.Close()
	<-first

	h2, e2 := publishOn(t, &EngineOptions{Database: db}, nil, onceWorkflow())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h2.CallTool(ctx, tool, nil, opts)
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "interrupted at step c") || !strings.Contains(resultText(res), "switchboard runs resolve") {
		t.Fatalf("the retry of an interrupted run: %v, %v; want a tool error naming the step and `switchboard runs resolve`", res, err)
	}
	runs, err := e2.Runs(ctx, nil)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %v, %v; want the one run", runs, err)
	}
	if err := e2.Resolve(ctx, runs[0].ID, "c", ResolveSkip); err != nil {
		t.Fatal(err)
	}
	res, err = h2.CallTool(ctx, tool, nil, opts)
	if err != nil || res.IsError {
		t.Fatalf("the retry once resolved: %v, %v", res, err)
	}
	if out, _ := res.StructuredContent.(map[string]any); out["d"] != "d c's default" {
		t.Errorf("outputs = %v, want d = \"d c's default\"", res.StructuredContent)
	}
}
