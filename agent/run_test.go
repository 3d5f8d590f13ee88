package agent

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// scripted is a provider whose answers are scripted turns; it records the
// requests it gets. The end-to-end tests (e2e_test.go) use llmtest's fakes,
// which speak the providers' wire formats, instead.
type scripted struct {
	mu    sync.Mutex
	turns []func(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error)
	reqs  []*llm.Request
}

func (s *scripted) Complete(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	var turn func(context.Context, *llm.Request, func(string)) (*llm.Response, error)
	if n <= len(s.turns) {
		turn = s.turns[n-1]
	} else if len(s.turns) > 0 {
		turn = s.turns[len(s.turns)-1]
	}
	s.mu.Unlock()
	if turn == nil {
		return nil, fmt.Errorf("no turn %d scripted", n)
	}
	return turn(ctx, req, onText)
}

func (s *scripted) requests() []*llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*llm.Request(nil), s.reqs...)
}

// say answers text, streamed in two deltas.
func say(text string) func(context.Context, *llm.Request, func(string)) (*llm.Response, error) {
	return func(_ context.Context, _ *llm.Request, onText func(string)) (*llm.Response, error) {
		if onText != nil {
			onText(text[:len(text)/2])
			onText(text[len(text)/2:])
		}
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: text}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}, StopReason: "stop"}, nil
	}
}

// ask asks for tool calls, given as "id name {json}".
func ask(calls ...string) func(context.Context, *llm.Request, func(string)) (*llm.Response, error) {
	return func(context.Context, *llm.Request, func(string)) (*llm.Response, error) {
		m := llm.Message{Role: llm.RoleAssistant}
		for _, c := range calls {
			parts := strings.SplitN(c, " ", 3)
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: parts[0], Name: parts[1], Arguments: json.RawMessage(parts[2])})
		}
		return &llm.Response{Message: m, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}, StopReason: "tool_calls"}, nil
	}
}

// startFixture starts a host with the testserver fixture as server "t".
func startFixture(t *testing.T, timeout time.Duration, opts *host.Options) *host.Host {
	t.Helper()
	bin := interop.Build(t, fixturePkg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "t", Description: "test fixture", Command: bin, Timeout: timeout}}, opts)
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func collect(t *testing.T, ctx context.Context, o *RunOptions) []Event {
	t.Helper()
	var evs []Event
	for ev := range Run(ctx, o) {
		evs = append(evs, ev)
	}
	checkEnvelope(t, evs)
	return evs
}

// checkEnvelope checks what every run promises: seq 1, 2, 3, …, one run id,
// run:started first and exactly one terminal event, last.
func checkEnvelope(t *testing.T, evs []Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	if evs[0].Type != EventRunStarted {
		t.Errorf("first event %s, want run:started", evs[0].Type)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || ev.RunID != evs[0].RunID {
			t.Errorf("event %d: seq %d run %q, want seq %d run %q", i, ev.Seq, ev.RunID, i+1, evs[0].RunID)
		}
		if ev.Type.Terminal() != (i == len(evs)-1) {
			t.Errorf("event %d (%s): terminal %v at position %d of %d", i, ev.Type, ev.Type.Terminal(), i+1, len(evs))
		}
	}
}

func last(evs []Event) Event { return evs[len(evs)-1] }

func toolResults(evs []Event) map[string]*Call {
	out := map[string]*Call{}
	for _, ev := range evs {
		if ev.Type == EventToolResult {
			out[ev.Call.ID] = ev.Call
		}
	}
	return out
}

// TestRunToolFailuresReachTheModel: a tool error, invalid arguments, a
// timeout and a made-up tool are error results the model sees; the run
// goes on to its answer.
func TestRunToolFailuresReachTheModel(t *testing.T) {
	h := startFixture(t, 500*time.Millisecond, nil)
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask(`c1 mcp_t_add {"a":2,"b":3}`,
			`c2 mcp_t_fail {}`,
			`c3 mcp_t_add {"a":"two"}`,
			`c4 mcp_t_slow {"ms":20000}`,
			`c5 mcp_t_nope {}`),
		say("done"),
	}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 5}, Host: h, Provider: p, Model: "m", Prompt: "go"})
	if l := last(evs); l.Type != EventRunCompleted || l.Text != "done" {
		t.Fatalf("last event %+v, want run:completed \"done\"", l)
	}
	want := map[string]CallErrorCode{"c1": "", "c2": CallToolError, "c3": CallInvalidArguments, "c4": CallTimeout, "c5": CallUnknownTool}
	res := toolResults(evs)
	for id, code := range want {
		if c := res[id]; c == nil || c.ErrorCode != code || *c.Success != (code == "") {
			t.Errorf("tool_result %s = %+v, want error code %q", id, c, code)
		}
	}
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	got := map[string]llm.Message{}
	for _, m := range reqs[1].Messages {
		if m.Role == llm.RoleTool {
			got[m.ToolCallID] = m
		}
	}
	for id, code := range want {
		m, ok := got[id]
		if !ok || m.IsError != (code != "") {
			t.Errorf("model got %s = %+v, want IsError %v", id, m, code != "")
		}
	}
	if !strings.Contains(got["c1"].Text, "5") {
		t.Errorf("model got add's result %q, want the sum 5", got["c1"].Text)
	}
	if !strings.Contains(got["c3"].Text, "invalid arguments") && !strings.Contains(got["c3"].Text, "/a") {
		t.Errorf("model got invalid-arguments result %q, want the schema's complaint", got["c3"].Text)
	}
	if !strings.Contains(got["c4"].Text, "timed out") {
		t.Errorf("model got timeout result %q", got["c4"].Text)
	}
	// One clean message each: the result is marked as an error, and the
	// provider says so in its own way, so the text does not say it again
	// (the model got "Error: error: server ..." from Chat Completions).
	for id, prefix := range map[string]string{"c3": `server "t": tool "add": invalid arguments: `,
		"c4": `server "t": tool "slow": no answer within 500ms`, "c5": `there is no tool "mcp_t_nope"`} {
		if !strings.HasPrefix(got[id].Text, prefix) {
			t.Errorf("model got %s = %q, want it to start %q", id, got[id].Text, prefix)
		}
	}
}

// TestRunStartedModel: run:started names the model the run uses, as
// provider:model, also when the caller overrides the agent file's (the
// --model flag): it named the file's.
func TestRunStartedModel(t *testing.T) {
	h := startFixture(t, 0, nil)
	for _, tc := range []struct {
		provider, model, want string
	}{
		{"", "", "fake:m"},
		{"", "other", "fake:other"},
		{"ollama", "llama3.2:3b", "ollama:llama3.2:3b"},
	} {
		p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){say("hi")}}
		evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", Model: "fake:m"}, Host: h, Provider: p,
			ProviderName: tc.provider, Model: tc.model, Prompt: "x"})
		if evs[0].Model != tc.want {
			t.Errorf("ProviderName %q, Model %q: run:started model %q, want %q", tc.provider, tc.model, evs[0].Model, tc.want)
		}
		wantModel := tc.model
		if wantModel == "" {
			wantModel = "m"
		}
		if r := p.requests(); len(r) != 1 || r[0].Model != wantModel {
			t.Errorf("ProviderName %q, Model %q: the provider was asked for %+v, want model %q", tc.provider, tc.model, r, wantModel)
		}
	}
}

func TestRunMaxSteps(t *testing.T) {
	h := startFixture(t, 0, nil)
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){ask(`c mcp_t_add {"a":1,"b":1}`)}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 3}, Host: h, Provider: p, Model: "m", Prompt: "loop"})
	if l := last(evs); l.Type != EventRunFailed || l.Error.Code != ErrMaxSteps {
		t.Fatalf("last event %+v, want run:failed max_steps", l)
	}
	if n := len(p.requests()); n != 3 {
		t.Errorf("%d model calls, want 3 (max_steps)", n)
	}
}

func TestRunTokenBudget(t *testing.T) {
	h := startFixture(t, 0, nil)
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){ask(`c mcp_t_add {"a":1,"b":1}`)}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 10, TokenBudget: 40}, Host: h, Provider: p, Model: "m", Prompt: "loop"})
	l := last(evs)
	if l.Type != EventRunFailed || l.Error.Code != ErrTokenBudget {
		t.Fatalf("last event %+v, want run:failed token_budget", l)
	}
	// 15 tokens a step: over 40 after the third.
	if n := len(p.requests()); n != 3 || l.Usage.Total() != 45 {
		t.Errorf("%d model calls, %d tokens; want 3 calls, 45 tokens", n, l.Usage.Total())
	}
}

// TestRunSampling: with allow_sampling, a server's sampling request during a
// tool call is answered by the run's own model; its tokens are an
// agent:usage event naming the server and count in the run's usage.
func TestRunSampling(t *testing.T) {
	h := startFixture(t, 0, &host.Options{Sampling: func(context.Context, string, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("the host's handler must not answer a run's sampling")
	}})
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask(`c mcp_t_sample {}`), say("hello from the model"), say("done"),
	}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 5, AllowSampling: true}, Host: h, Provider: p, Model: "m", Prompt: "sample"})
	l := last(evs)
	if l.Type != EventRunCompleted {
		t.Fatalf("last event %+v, want run:completed", l)
	}
	if out := toolResults(evs)["c"]; out == nil || !strings.Contains(out.Output, "hello from the model") {
		t.Errorf("tool result %+v, want the run's model's answer", out)
	}
	var sampled []Event
	for _, ev := range evs {
		if ev.Type == EventUsage && ev.Server != "" {
			sampled = append(sampled, ev)
		}
	}
	if len(sampled) != 1 || sampled[0].Server != "t" || sampled[0].Step != 1 || sampled[0].Usage.Total() != 15 {
		t.Errorf("sampling usage events %+v, want one for server t in step 1, 15 tokens", sampled)
	}
	if l.Usage.Total() != 45 {
		t.Errorf("run usage %d tokens, want 45 (two steps and one sampling request)", l.Usage.Total())
	}
	if reqs := p.requests(); len(reqs) != 3 || reqs[1].Messages[0].Text != "Say hello." || reqs[1].MaxTokens != 100 {
		t.Errorf("model requests %d; the sampling one %+v, want the server's message and maxTokens", len(reqs), reqs[1])
	}
}

// TestRunSamplingBudget: sampling is bounded by what is left of the
// token_budget, counts against it, and is refused once it is spent.
func TestRunSamplingBudget(t *testing.T) {
	h := startFixture(t, 0, &host.Options{Sampling: SamplingHandler(&scripted{}, "m")})
	// 15 tokens for the step, then 15 for the sampling, with 20 budgeted:
	// the sampling may use at most 5, and the run ends after the tools.
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask(`c mcp_t_sample {}`), say("hello"), say("never"),
	}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 5, AllowSampling: true, TokenBudget: 20}, Host: h, Provider: p, Model: "m", Prompt: "sample"})
	l := last(evs)
	if l.Type != EventRunFailed || l.Error.Code != ErrTokenBudget || l.Usage.Total() != 30 {
		t.Fatalf("last event %+v, want run:failed token_budget after 30 tokens", l)
	}
	reqs := p.requests()
	if len(reqs) != 2 || reqs[1].MaxTokens != 5 {
		t.Errorf("%d model requests (want 2: the step and the sampling, no next step); sampling max tokens %d, want 5", len(reqs), reqs[len(reqs)-1].MaxTokens)
	}

	// Budget already spent by the step: the sampling request is refused
	// and the model is not asked.
	p = &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask(`c mcp_t_sample {}`), say("done"),
	}}
	evs = collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a", MaxSteps: 5, AllowSampling: true, TokenBudget: 15}, Host: h, Provider: p, Model: "m", Prompt: "sample"})
	out := toolResults(evs)["c"]
	if out == nil || out.Success == nil || *out.Success || !strings.Contains(out.Output, "token_budget") {
		t.Errorf("tool result %+v, want a failure saying the token_budget is spent", out)
	}
	for _, r := range p.requests() {
		if len(r.Messages) > 0 && r.Messages[0].Text == "Say hello." {
			t.Errorf("the model was asked to sample with no budget left")
		}
	}
}

// TestRunCancel: cancelling the context while a tool runs cancels the call
// and ends the run as cancelled, promptly.
func TestRunCancel(t *testing.T) {
	h := startFixture(t, time.Minute, nil)
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){ask(`c mcp_t_slow {"ms":60000}`), say("never")}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var evs []Event
	for ev := range Run(ctx, &RunOptions{Agent: &Agent{ID: "a"}, Host: h, Provider: p, Model: "m", Prompt: "wait"}) {
		evs = append(evs, ev)
		if ev.Type == EventToolCall {
			cancel()
		}
	}
	checkEnvelope(t, evs)
	if l := last(evs); l.Type != EventRunCancelled {
		t.Fatalf("last event %+v, want run:cancelled", l)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancelled run took %v", d)
	}
	// The model was cancelled too: cancelling during a model call.
	ctx2, cancel2 := context.WithCancel(context.Background())
	blocked := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		func(ctx context.Context, _ *llm.Request, _ func(string)) (*llm.Response, error) {
			cancel2()
			<-ctx.Done()
			return nil, ctx.Err()
		}}}
	evs = collect(t, ctx2, &RunOptions{Agent: &Agent{ID: "a"}, Host: h, Provider: blocked, Model: "m", Prompt: "wait"})
	if l := last(evs); l.Type != EventRunCancelled {
		t.Fatalf("last event %+v, want run:cancelled", l)
	}
}

// TestRunBreak: a caller that stops ranging early gets no more events and
// leaves nothing running.
func TestRunBreak(t *testing.T) {
	h := startFixture(t, time.Minute, nil)
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){ask(`c mcp_t_slow {"ms":60000}`)}}
	start := time.Now()
	for ev := range Run(context.Background(), &RunOptions{Agent: &Agent{ID: "a"}, Host: h, Provider: p, Model: "m", Prompt: "x"}) {
		if ev.Type == EventToolCall {
			break
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("break took %v", d)
	}
}

func TestRunToolsNarrow(t *testing.T) {
	h := startFixture(t, 0, nil)
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){ask(`c mcp_t_echo {"text":"x"}`), say("ok")}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a"}, Host: h, Provider: p, Model: "m", Prompt: "x", Tools: []string{"mcp_t_add"}})
	if diff := cmp.Diff([]string{"mcp_t_add"}, evs[0].Tools); diff != "" {
		t.Errorf("run:started tools (-want +got):\n%s", diff)
	}
	if c := toolResults(evs)["c"]; c == nil || c.ErrorCode != CallUnknownTool {
		t.Errorf("calling a tool outside tools: %+v, want unknown_tool", c)
	}
	if got := p.requests()[0].Tools; len(got) != 1 || got[0].Name != "mcp_t_add" {
		t.Errorf("model saw tools %+v", got)
	}
	evs = collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a"}, Host: h, Provider: p, Model: "m", Prompt: "x", Tools: []string{"mcp_t_typo"}})
	if l := last(evs); l.Type != EventRunFailed || l.Error.Code != ErrNoTool {
		t.Errorf("last event %+v, want run:failed unknown_tool", l)
	}
}

// TestRunGolden pins the event sequence of a run: one tool call, then an
// answer.
func TestRunGolden(t *testing.T) {
	h := startFixture(t, 0, nil)
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		ask(`call_1 mcp_t_add {"a":2,"b":3}`), say("The sum is 5."),
	}}
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "calc", Model: "fake:m", MaxSteps: 5}, Host: h, Provider: p,
		Prompt: "What is 2+3?", RunID: "run_test", Now: func() time.Time { return clock }})
	var b strings.Builder
	b.WriteString("# The events of a run (switchboard run --json): one tool call, then the answer. Time and run_id fixed.\n")
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	golden := filepath.Join("testdata", "run.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("events (-%s +got):\n%s", golden, diff)
	}
}
