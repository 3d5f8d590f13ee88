package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// Every test here runs against both fakes, each driven by its provider's SDK.
var fakes = []struct {
	typ string
	new func(testing.TB) *llmtest.Fake
}{
	{llm.TypeOpenAI, llmtest.NewOpenAI},
	{llm.TypeAnthropic, llmtest.NewAnthropic},
}

// sleeps records the waits between retries instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func newProvider(t *testing.T, f *llmtest.Fake, s *sleeps) llm.Provider {
	t.Helper()
	cfg := f.Config()
	if s != nil {
		cfg = llm.WithSleep(cfg, s.sleep)
	}
	p, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return p
}

func TestStreamText(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(llmtest.Turn{Text: "The sum of 2 and 3 is 5.", Usage: llm.Usage{InputTokens: 42, OutputTokens: 7}})
			p := newProvider(t, f, nil)
			var deltas []string
			resp, err := p.Complete(t.Context(), &llm.Request{
				Model:    "test-model",
				System:   "You are terse.",
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is 2+3?"}},
			}, func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			wantDeltas := []string{"The ", "sum ", "of ", "2 ", "and ", "3 ", "is ", "5."}
			if diff := cmp.Diff(wantDeltas, deltas); diff != "" {
				t.Errorf("text deltas (-want +got):\n%s", diff)
			}
			if resp.Message.Role != llm.RoleAssistant || resp.Message.Text != "The sum of 2 and 3 is 5." || len(resp.Message.ToolCalls) != 0 {
				t.Errorf("Message = %+v, want the assistant's text and no tool calls", resp.Message)
			}
			if want := (llm.Usage{InputTokens: 42, OutputTokens: 7}); resp.Usage != want {
				t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
			}
			if want := map[string]string{llm.TypeOpenAI: "stop", llm.TypeAnthropic: "end_turn"}[fk.typ]; resp.StopReason != want {
				t.Errorf("StopReason = %q, want %q", resp.StopReason, want)
			}
			reqs := f.Requests()
			if len(reqs) != 1 {
				t.Fatalf("fake got %d requests, want 1", len(reqs))
			}
			var body map[string]any
			if err := reqs[0].Decode(&body); err != nil {
				t.Fatal(err)
			}
			if body["stream"] != true || body["model"] != "test-model" {
				t.Errorf("request stream=%v model=%v, want true, test-model", body["stream"], body["model"])
			}
			switch fk.typ {
			case llm.TypeOpenAI:
				if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
					t.Errorf("stream_options = %v, want include_usage true", body["stream_options"])
				}
				msgs := body["messages"].([]any)
				if m := msgs[0].(map[string]any); m["role"] != "system" || m["content"] != "You are terse." {
					t.Errorf("messages[0] = %v, want the system prompt", m)
				}
			case llm.TypeAnthropic:
				if body["max_tokens"] != float64(llm.DefaultMaxTokens) {
					t.Errorf("max_tokens = %v, want %d", body["max_tokens"], llm.DefaultMaxTokens)
				}
				sys, _ := body["system"].([]any)
				if len(sys) != 1 || sys[0].(map[string]any)["text"] != "You are terse." {
					t.Errorf("system = %v, want the system prompt", body["system"])
				}
			}
		})
	}
}

func TestToolCallsAndResults(t *testing.T) {
	calls := []llm.ToolCall{
		{ID: "call_1", Name: "mcp_everything_get-sum", Arguments: json.RawMessage(`{"a":2,"b":3}`)},
		{ID: "call_2", Name: "mcp_everything_echo", Arguments: json.RawMessage(`{"message":"héllo \"world\""}`)},
	}
	tools := []llm.Tool{
		{Name: "mcp_everything_get-sum", Description: "Adds two numbers", Parameters: json.RawMessage(
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/n"},"b":{"$ref":"#/definitions/n"}},"required":["a","b"],"definitions":{"n":{"type":"number"}}}`)},
		{Name: "mcp_everything_echo", Parameters: json.RawMessage(`{"properties":{"message":{"type":"string"}}}`)},
	}
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(
				llmtest.Turn{Text: "Let me check.", ToolCalls: calls},
				llmtest.Turn{Text: "2+3 is 5; echo failed."},
			)
			p := newProvider(t, f, nil)
			req := &llm.Request{
				Model:    "m",
				System:   "sys",
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "add and echo"}},
				Tools:    tools,
			}
			resp, err := p.Complete(t.Context(), req, nil)
			if err != nil {
				t.Fatalf("Complete 1: %v", err)
			}
			if diff := cmp.Diff(calls, resp.Message.ToolCalls, cmp.Comparer(jsonEqual)); diff != "" {
				t.Errorf("ToolCalls (-want +got):\n%s", diff)
			}
			if resp.Message.Text != "Let me check." {
				t.Errorf("Text = %q, want %q", resp.Message.Text, "Let me check.")
			}
			if want := map[string]string{llm.TypeOpenAI: "tool_calls", llm.TypeAnthropic: "tool_use"}[fk.typ]; resp.StopReason != want {
				t.Errorf("StopReason = %q, want %q", resp.StopReason, want)
			}

			req.Messages = append(req.Messages, resp.Message,
				llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Text: "The sum of 2 and 3 is 5."},
				llm.Message{Role: llm.RoleTool, ToolCallID: "call_2", Text: "echo is down", IsError: true},
			)
			resp, err = p.Complete(t.Context(), req, nil)
			if err != nil {
				t.Fatalf("Complete 2: %v", err)
			}
			if resp.Message.Text != "2+3 is 5; echo failed." {
				t.Errorf("Text = %q", resp.Message.Text)
			}

			reqs := f.Requests()
			if len(reqs) != 2 {
				t.Fatalf("fake got %d requests, want 2", len(reqs))
			}
			checkTools(t, fk.typ, reqs[0])
			checkHistory(t, fk.typ, reqs[1])
		})
	}
}

// TestToolErrorSaidOnce: Chat Completions has no error flag on a tool
// result, so the text says "Error: " first — once, not again before a
// tool's own "Error: ..." or "error: ...".
func TestToolErrorSaidOnce(t *testing.T) {
	f := llmtest.NewOpenAI(t)
	f.Script(llmtest.Turn{Text: "ok"})
	p := newProvider(t, f, nil)
	req := &llm.Request{Model: "m", Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "x"}, {ID: "b", Name: "x"}, {ID: "c", Name: "x"}}},
		{Role: llm.RoleTool, ToolCallID: "a", Text: "echo is down", IsError: true},
		{Role: llm.RoleTool, ToolCallID: "b", Text: "Error: disk full", IsError: true},
		{Role: llm.RoleTool, ToolCallID: "c", Text: "  error: no such file", IsError: true},
	}}
	if _, err := p.Complete(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
			ID      string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := f.Requests()[0].Decode(&body); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range body.Messages {
		if m.Role == "tool" {
			got[m.ID] = m.Content
		}
	}
	want := map[string]string{"a": "Error: echo is down", "b": "Error: disk full", "c": "  error: no such file"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool results sent (-want +got):\n%s", diff)
	}
}

// checkTools asserts the tools went out with transformed schemas.
func checkTools(t *testing.T, typ string, r llmtest.Request) {
	t.Helper()
	var body struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{
			"type":       "object",
			"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
			"required":   []any{"a", "b"},
		},
		map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}},
	}
	var got []any
	var names []string
	for _, tool := range body.Tools {
		switch typ {
		case llm.TypeOpenAI:
			fn := tool["function"].(map[string]any)
			names = append(names, fn["name"].(string))
			got = append(got, fn["parameters"])
		case llm.TypeAnthropic:
			names = append(names, tool["name"].(string))
			got = append(got, tool["input_schema"])
		}
	}
	if diff := cmp.Diff([]string{"mcp_everything_get-sum", "mcp_everything_echo"}, names); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool schemas sent (-want +got):\n%s", diff)
	}
}

// checkHistory asserts the second request carried the assistant's tool
// calls and both results, keyed by id.
func checkHistory(t *testing.T, typ string, r llmtest.Request) {
	t.Helper()
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	var got any = body.Messages
	var want any
	switch typ {
	case llm.TypeOpenAI:
		want = []any{
			map[string]any{"role": "system", "content": "sys"},
			map[string]any{"role": "user", "content": "add and echo"},
			map[string]any{"role": "assistant", "content": "Let me check.", "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "mcp_everything_get-sum", "arguments": `{"a":2,"b":3}`}},
				map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "mcp_everything_echo", "arguments": `{"message":"héllo \"world\""}`}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "The sum of 2 and 3 is 5."},
			map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "Error: echo is down"},
		}
	case llm.TypeAnthropic:
		want = []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "add and echo"}}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Let me check."},
				map[string]any{"type": "tool_use", "id": "call_1", "name": "mcp_everything_get-sum", "input": map[string]any{"a": 2.0, "b": 3.0}},
				map[string]any{"type": "tool_use", "id": "call_2", "name": "mcp_everything_echo", "input": map[string]any{"message": `héllo "world"`}},
			}},
			// Both results in one user turn.
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "call_1", "content": []any{map[string]any{"type": "text", "text": "The sum of 2 and 3 is 5."}}},
				map[string]any{"type": "tool_result", "tool_use_id": "call_2", "is_error": true, "content": []any{map[string]any{"type": "text", "text": "echo is down"}}},
			}},
		}
	}
	// Round-trip through JSON so both sides have the same Go types.
	if diff := cmp.Diff(normalize(t, want), normalize(t, got)); diff != "" {
		t.Errorf("messages sent (-want +got):\n%s", diff)
	}
}

func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return cmp.Equal(x, y)
}

func TestAuthError(t *testing.T) {
	const wrongKey = "sk-wrong-0123456789abcdef"
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			cfg := f.Config()
			cfg.APIKey = wrongKey
			cfg.KeySource = "TEST_API_KEY"
			p, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Complete(t.Context(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("Complete: %v (%T), want *llm.Error", err, err)
			}
			if e.Kind != llm.KindAuth || e.Status != 401 || !errors.Is(err, llm.KindAuth) {
				t.Errorf("Kind, Status = %s, %d, want auth, 401", e.Kind, e.Status)
			}
			if want := "fake: authentication failed (401): check TEST_API_KEY"; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if strings.Contains(err.Error(), wrongKey) || strings.Contains(e.Message, wrongKey) {
				t.Errorf("Error() = %q contains the API key", err.Error())
			}
		})
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(
				llmtest.Turn{Status: 429, Header: map[string]string{"Retry-After": "1"}},
				llmtest.Turn{Text: "ok"},
			)
			var s sleeps
			p := newProvider(t, f, &s)
			resp, err := p.Complete(t.Context(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, nil)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Message.Text != "ok" {
				t.Errorf("Text = %q, want ok", resp.Message.Text)
			}
			if diff := cmp.Diff([]time.Duration{time.Second}, s.waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n := len(f.Requests()); n != 2 {
				t.Errorf("fake got %d requests, want 2", n)
			}
		})
	}
}

func TestUnavailableExhaustsRetries(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			const maxRetries = 3
			for range maxRetries + 1 {
				f.Script(llmtest.Turn{Status: 500, ErrorMessage: "upstream exploded"})
			}
			var s sleeps
			p := newProvider(t, f, &s)
			_, err := p.Complete(t.Context(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, nil)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.KindUnavailable || e.Status != 500 {
				t.Fatalf("Complete: %v, want unavailable (500)", err)
			}
			if !strings.Contains(err.Error(), "upstream exploded") {
				t.Errorf("Error() = %q, want the provider's message", err)
			}
			if n := len(f.Requests()); n != maxRetries+1 {
				t.Errorf("fake got %d requests, want %d", n, maxRetries+1)
			}
			w := s.waits()
			if len(w) != maxRetries {
				t.Fatalf("waits = %v, want %d", w, maxRetries)
			}
			for i := 1; i < len(w); i++ {
				if w[i] <= w[i-1] {
					t.Errorf("waits = %v, want growing", w)
				}
			}
		})
	}
}

func TestNoRetriesWhenDisabled(t *testing.T) {
	f := llmtest.NewOpenAI(t)
	f.Script(llmtest.Turn{Status: 503})
	cfg := f.Config()
	cfg.MaxRetries = -1
	p, _ := llm.New(cfg)
	_, err := p.Complete(t.Context(), &llm.Request{Model: "m"}, nil)
	if !errors.Is(err, llm.KindUnavailable) {
		t.Errorf("Complete: %v, want unavailable", err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("fake got %d requests, want 1", n)
	}
}

func TestContextTooLong(t *testing.T) {
	turns := map[string]llmtest.Turn{
		llm.TypeOpenAI: {Status: 400, ErrorCode: "context_length_exceeded",
			ErrorMessage: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."},
		llm.TypeAnthropic: {Status: 400, ErrorCode: "invalid_request_error",
			ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"},
	}
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(turns[fk.typ])
			var s sleeps
			p := newProvider(t, f, &s)
			_, err := p.Complete(t.Context(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, nil)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.KindContextTooLong || e.Status != 400 {
				t.Fatalf("Complete: %v, want context_too_long (400)", err)
			}
			if len(s.waits()) != 0 || len(f.Requests()) != 1 {
				t.Errorf("retried a context_too_long error")
			}
		})
	}
}

func TestBadRequest(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(llmtest.Turn{Status: 404, ErrorMessage: "model nope does not exist"})
			p := newProvider(t, f, nil)
			_, err := p.Complete(t.Context(), &llm.Request{Model: "nope"}, nil)
			if !errors.Is(err, llm.KindBadRequest) || !strings.Contains(err.Error(), "model nope does not exist") {
				t.Errorf("Complete: %v, want bad_request with the provider's message", err)
			}
		})
	}
}

func TestCancelMidStream(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(llmtest.Turn{Text: "partial answer", Hang: true})
			p := newProvider(t, f, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var got []string
			start := time.Now()
			_, err := p.Complete(ctx, &llm.Request{Model: "m"}, func(d string) {
				got = append(got, d)
				if len(got) == 2 {
					cancel() // the stream stays open: only the cancel can end it
				}
			})
			if !errors.Is(err, llm.KindCancelled) || !errors.Is(err, context.Canceled) {
				t.Fatalf("Complete: %v, want cancelled wrapping context.Canceled", err)
			}
			// Generous for a loaded CI machine; without the cancel it never returns.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Complete returned %s after cancel, want promptly", d)
			}
			if len(f.Requests()) != 1 {
				t.Errorf("fake got %d requests, want 1 (no retry after cancel)", len(f.Requests()))
			}
		})
	}
}

// cancelAfter is a RoundTripper that cancels once a response has arrived.
type cancelAfter struct {
	cancel context.CancelFunc
}

func (c cancelAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	c.cancel()
	return resp, err
}

func TestCancelDuringRetryWait(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(llmtest.Turn{Status: 429, Header: map[string]string{"Retry-After": "30"}})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cfg := f.Config() // the real wait: the cancel must end it
			cfg.HTTPClient = &http.Client{Transport: cancelAfter{cancel}}
			p, _ := llm.New(cfg)
			start := time.Now()
			_, err := p.Complete(ctx, &llm.Request{Model: "m"}, nil)
			if !errors.Is(err, llm.KindCancelled) {
				t.Fatalf("Complete: %v, want cancelled", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Complete took %s, want the 30s wait cut short", d)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	f := llmtest.NewOpenAI(t)
	cfg := f.Config()
	cfg.BaseURL = "http://127.0.0.1:1/v1" // nothing listens on port 1
	cfg = llm.WithSleep(cfg, (&sleeps{}).sleep)
	p, _ := llm.New(cfg)
	_, err := p.Complete(t.Context(), &llm.Request{Model: "m"}, nil)
	if !errors.Is(err, llm.KindUnavailable) || !strings.Contains(err.Error(), "cannot reach http://127.0.0.1:1/v1") {
		t.Errorf("Complete: %v, want unavailable naming the base URL", err)
	}
}

// A provider without an HTTPClient of its own follows a redirect only
// within its origin, and without a Referer: a 307 to another origin would
// resend the prompt and the key there (issue 11 §5).
func TestDefaultClientRedirects(t *testing.T) {
	for _, fk := range fakes {
		t.Run(fk.typ, func(t *testing.T) {
			f := fk.new(t)
			f.Script(llmtest.Turn{Text: "through the hop"})
			fake, err := url.Parse(f.URL)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var referers []string
			proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: fake.Scheme, Host: fake.Host})
			// /hop/... redirects to ... on the same server, which passes
			// it on to the fake; /away/... redirects to the fake itself.
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasPrefix(r.URL.Path, "/hop/"):
					http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, "/hop")+"?token=t-123456", http.StatusTemporaryRedirect)
				case strings.HasPrefix(r.URL.Path, "/away/"):
					http.Redirect(w, r, "http://"+fake.Host+strings.TrimPrefix(r.URL.Path, "/away"), http.StatusTemporaryRedirect)
				default:
					mu.Lock()
					referers = append(referers, r.Header.Get("Referer"))
					mu.Unlock()
					proxy.ServeHTTP(w, r)
				}
			}))
			defer front.Close()
			req := &llm.Request{Model: "test-model", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}

			cfg := f.Config()
			cfg.MaxRetries = -1
			cfg.BaseURL = front.URL + "/hop" + fake.Path
			p, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Complete(t.Context(), req, nil)
			if err != nil || resp.Message.Text != "through the hop" {
				t.Fatalf("Complete through a same-origin redirect = %+v, %v", resp, err)
			}
			mu.Lock()
			if len(referers) != 1 || referers[0] != "" {
				t.Errorf("the redirect target got Referer %q, want none", referers)
			}
			mu.Unlock()

			cfg.BaseURL = front.URL + "/away" + fake.Path
			if p, err = llm.New(cfg); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Complete(t.Context(), req, nil); err == nil || !strings.Contains(err.Error(), "never follow a redirect to another origin") {
				t.Errorf("Complete through a cross-origin redirect = %v, want refused", err)
			}
			if n := len(f.Requests()); n != 1 {
				t.Errorf("the fake got %d requests, want only the one through the same-origin hop", n)
			}
		})
	}
}
