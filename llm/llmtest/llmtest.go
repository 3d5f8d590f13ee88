// Package llmtest runs local fake LLM providers for tests: an
// OpenAI-compatible Chat Completions server and an Anthropic Messages
// server. Each speaks its provider's real wire format — streamed Server-Sent
// Events with text and tool-call deltas, usage, error bodies and headers — so
// the providers' own SDKs (and so package llm) talk to them unchanged.
//
// A fake answers from a script of turns, one per request, and records every
// request so a test can assert what the SDK sent:
//
//	f := llmtest.NewOpenAI(t)
//	f.Script(
//		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get-sum", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}},
//		llmtest.Turn{Text: "The sum is 5."},
//	)
//	p, _ := llm.New(f.Config())
//	…
//	reqs := f.Requests()
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardmcp/switchboard/llm"
)

// DefaultAPIKey is the key a fake accepts unless Fake.APIKey is changed.
const DefaultAPIKey = "llmtest-key"

// Turn is one scripted answer.
type Turn struct {
	// Text is streamed in word-sized deltas.
	Text string
	// ToolCalls are streamed after Text; their arguments arrive split
	// across several deltas, and (OpenAI) the calls' deltas interleave.
	ToolCalls []llm.ToolCall
	// Usage is reported at the end; zero means {InputTokens: 10, OutputTokens: 5}.
	Usage llm.Usage
	// StopReason overrides the provider's usual one ("stop"/"tool_calls",
	// "end_turn"/"tool_use").
	StopReason string

	// Status, when not 0 or 200, makes the turn an error response with this
	// HTTP status and the provider's error body.
	Status int
	// Header is added to the response, e.g. {"Retry-After": "1"}.
	Header map[string]string
	// ErrorCode is the error's code (OpenAI error.code, e.g.
	// "context_length_exceeded") or type (Anthropic error.type, e.g.
	// "invalid_request_error"); empty means the usual one for Status.
	ErrorCode string
	// ErrorMessage is the error's message.
	ErrorMessage string

	// Hang keeps the stream open after Text until the client goes away, to
	// test cancellation mid-stream.
	Hang bool
}

// Request is one request a fake received.
type Request struct {
	Header http.Header
	Body   json.RawMessage
}

// Decode unmarshals the request body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Fake is a running fake provider. Its server stops when the test ends, or
// at Close.
type Fake struct {
	// URL is the base URL to configure (llm.Config.BaseURL).
	URL string
	// APIKey is the key requests must carry (Authorization: Bearer, or
	// x-api-key for Anthropic); a request without it gets the provider's 401.
	// Set it before the first request; "" accepts any request.
	APIKey string
	// InputTokens, when set, makes each answer's input-token usage what it
	// returns for the request's body, in place of the scripted Usage's:
	// a test counts the request the provider's SDK sent with a real
	// tokenizer (internal/testkit/interop's Tokenizer), so a run's usage
	// measures what its requests cost. An error fails the request with a
	// 500. Set it before the first request.
	InputTokens func(body []byte) (int, error)

	typ   string
	t     testing.TB
	srv   *httptest.Server
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	turns []Turn
	reqs  []Request
}

// NewOpenAI starts a fake Chat Completions server (POST /v1/chat/completions).
// A nil t (for an Example) means the caller calls Close.
func NewOpenAI(t testing.TB) *Fake {
	f := newFake(t, llm.TypeOpenAI)
	f.URL = f.srv.URL + "/v1"
	return f
}

// NewAnthropic starts a fake Messages API server (POST /v1/messages).
func NewAnthropic(t testing.TB) *Fake {
	f := newFake(t, llm.TypeAnthropic)
	f.URL = f.srv.URL
	return f
}

func newFake(t testing.TB, typ string) *Fake {
	f := &Fake{typ: typ, t: t, APIKey: DefaultAPIKey, done: make(chan struct{})}
	mux := http.NewServeMux()
	if typ == llm.TypeOpenAI {
		mux.HandleFunc("POST /v1/chat/completions", f.serve)
	} else {
		mux.HandleFunc("POST /v1/messages", f.serve)
	}
	f.srv = httptest.NewServer(mux)
	if t != nil {
		t.Cleanup(f.Close)
	}
	return f
}

// Close releases hanging streams and stops the server. It is idempotent.
func (f *Fake) Close() {
	f.once.Do(func() {
		close(f.done)
		f.srv.Close()
	})
}

// Config returns a provider configuration for the fake, named "fake", with
// the key it accepts.
func (f *Fake) Config() llm.Config {
	return llm.Config{Name: "fake", Type: f.typ, BaseURL: f.URL, APIKey: f.APIKey}
}

// Script appends turns to the queue; each request takes the next one.
func (f *Fake) Script(turns ...Turn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.turns = append(f.turns, turns...)
}

// Requests returns the requests received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Request, len(f.reqs))
	copy(out, f.reqs)
	return out
}

// Pending returns how many scripted turns no request has taken yet.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.turns)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !f.authorized(r) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		// Like OpenAI's, the message quotes the key it got: an error a
		// client builds from it must leave it out.
		f.writeError(w, Turn{Status: http.StatusUnauthorized, ErrorMessage: fmt.Sprintf("Incorrect API key provided: %s.", key)})
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, Request{Header: r.Header.Clone(), Body: body})
	n := len(f.reqs)
	var turn Turn
	ok := len(f.turns) > 0
	if ok {
		turn, f.turns = f.turns[0], f.turns[1:]
	}
	f.mu.Unlock()
	if !ok {
		if f.t != nil {
			f.t.Errorf("llmtest: request %d to the fake %s server has no scripted turn", n, f.typ)
		}
		f.writeError(w, Turn{Status: http.StatusBadRequest, ErrorMessage: fmt.Sprintf("llmtest: no turn scripted for request %d", n)})
		return
	}
	for k, v := range turn.Header {
		w.Header().Set(k, v)
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		f.writeError(w, turn)
		return
	}
	if turn.Usage == (llm.Usage{}) {
		turn.Usage = llm.Usage{InputTokens: 10, OutputTokens: 5}
	}
	if f.InputTokens != nil {
		n, err := f.InputTokens(body)
		if err != nil {
			f.writeError(w, Turn{Status: http.StatusInternalServerError, ErrorMessage: fmt.Sprintf("llmtest: counting the request's tokens: %v", err)})
			return
		}
		turn.Usage.InputTokens = n
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w}
	if f.typ == llm.TypeOpenAI {
		var req struct {
			Model         string `json:"model"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		_ = json.Unmarshal(body, &req)
		f.streamOpenAI(s, r, req.Model, req.StreamOptions.IncludeUsage, turn)
	} else {
		var req struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(body, &req)
		f.streamAnthropic(s, r, req.Model, turn)
	}
}

func (f *Fake) authorized(r *http.Request) bool {
	if f.APIKey == "" {
		return true
	}
	if r.Header.Get("Authorization") == "Bearer "+f.APIKey {
		return true
	}
	return f.typ == llm.TypeAnthropic && r.Header.Get("X-Api-Key") == f.APIKey
}

// hang blocks until the client goes away or the test ends.
func (f *Fake) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.done:
	}
}

func (f *Fake) writeError(w http.ResponseWriter, turn Turn) {
	w.Header().Set("Content-Type", "application/json")
	status, code, msg := turn.Status, turn.ErrorCode, turn.ErrorMessage
	if msg == "" {
		msg = http.StatusText(status)
	}
	var body any
	if f.typ == llm.TypeOpenAI {
		typ := "invalid_request_error"
		switch {
		case status == http.StatusUnauthorized:
			typ = "invalid_request_error"
			if code == "" {
				code = "invalid_api_key"
			}
		case status == http.StatusTooManyRequests:
			typ = "requests"
			if code == "" {
				code = "rate_limit_exceeded"
			}
		case status >= 500:
			typ = "server_error"
		}
		var c any
		if code != "" {
			c = code
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
	} else {
		if code == "" {
			code = anthropicErrorType(status)
		}
		w.Header().Set("Request-Id", "req_llmtest")
		body = map[string]any{"type": "error", "error": map[string]any{"type": code, "message": msg}}
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// sse writes Server-Sent Events, flushing each.
type sse struct{ w http.ResponseWriter }

func (s *sse) event(name string, data any) {
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	switch d := data.(type) {
	case string:
		fmt.Fprintf(&b, "data: %s\n\n", d)
	default:
		j, _ := json.Marshal(d)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	_, _ = s.w.Write(b.Bytes())
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// words splits text into the deltas a model would stream.
func words(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

// halves splits s into two non-empty pieces where it can.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

func arguments(tc llm.ToolCall) string {
	if len(tc.Arguments) == 0 {
		return "{}"
	}
	return string(tc.Arguments)
}

func (f *Fake) streamOpenAI(s *sse, r *http.Request, model string, includeUsage bool, turn Turn) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, w := range words(turn.Text) {
		s.event("", chunk(map[string]any{"content": w}, nil))
	}
	if turn.Hang {
		f.hang(r)
		return
	}
	// Every call's first delta (id, name), then the arguments in pieces,
	// interleaved across calls: the accumulator must go by index.
	for i, tc := range turn.ToolCalls {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil))
	}
	pieces := make([][]string, len(turn.ToolCalls))
	most := 0
	for i, tc := range turn.ToolCalls {
		pieces[i] = halves(arguments(tc))
		most = max(most, len(pieces[i]))
	}
	for p := range most {
		for i := range turn.ToolCalls {
			if p < len(pieces[i]) {
				s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": i, "function": map[string]any{"arguments": pieces[i][p]},
				}}}, nil))
			}
		}
	}
	finish := turn.StopReason
	if finish == "" {
		finish = "stop"
		if len(turn.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	s.event("", chunk(map[string]any{}, finish))
	if includeUsage {
		s.event("", map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{},
			"usage": map[string]any{
				"prompt_tokens": turn.Usage.InputTokens, "completion_tokens": turn.Usage.OutputTokens,
				"total_tokens": turn.Usage.InputTokens + turn.Usage.OutputTokens,
			},
		})
	}
	s.event("", "[DONE]")
}

func (f *Fake) streamAnthropic(s *sse, r *http.Request, model string, turn Turn) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": turn.Usage.InputTokens, "output_tokens": 1},
	}})
	index := 0
	if turn.Text != "" || turn.Hang {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.event("ping", map[string]any{"type": "ping"})
		for _, w := range words(turn.Text) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": w}})
		}
		if turn.Hang {
			f.hang(r)
			return
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, tc := range turn.ToolCalls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}})
		for _, p := range append([]string{""}, halves(arguments(tc))...) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := turn.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(turn.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": turn.Usage.OutputTokens}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}
