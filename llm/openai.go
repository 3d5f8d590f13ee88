package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// openaiProvider speaks Chat Completions through openai-go.
type openaiProvider struct {
	cfg  Config
	chat openai.ChatCompletionService
	// maxCompletionTokens: OpenAI's own API wants max_completion_tokens (its
	// reasoning models refuse max_tokens); compatible servers (Ollama,
	// llama.cpp, older vLLM) know only max_tokens.
	maxCompletionTokens bool
}

func newOpenAI(cfg Config) *openaiProvider {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	// The service is built from our options alone, not openai.NewClient:
	// NewClient reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, … from
	// the environment, which would send OpenAI's key to an Ollama or vLLM
	// base_url that was configured without one.
	opts := []option.RequestOption{
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	u, _ := url.Parse(base)
	return &openaiProvider{
		cfg:                 cfg,
		chat:                openai.NewChatCompletionService(opts...),
		maxCompletionTokens: u != nil && u.Hostname() == "api.openai.com",
	}
}

func (p *openaiProvider) Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, &Error{Provider: p.cfg.Name, Kind: KindBadRequest, Message: err.Error(), Err: err}
	}
	return withRetries(ctx, p.cfg.MaxRetries, p.cfg.sleep, func() (*Response, bool, *Error) {
		return p.stream(ctx, params, onText)
	})
}

func (p *openaiProvider) params(req *Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if p.maxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Text))
		case RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			if m.Text != "" {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      tc.Name,
							Arguments: argumentsText(tc.Arguments),
						},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			text := m.Text
			if m.IsError && !saysError(text) {
				// Chat Completions has no error flag on a tool result: say it
				// in words, once (a tool's own message may already say it).
				text = "Error: " + text
			}
			params.Messages = append(params.Messages, openai.ToolMessage(text, m.ToolCallID))
		default:
			return params, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := Transform(t.Parameters, DialectOpenAI)
		if err != nil {
			return params, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		var fp shared.FunctionParameters
		d := json.NewDecoder(strings.NewReader(string(schema)))
		d.UseNumber()
		if err := d.Decode(&fp); err != nil {
			return params, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: fp}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	return params, nil
}

// saysError reports whether a tool result's text already starts by saying
// it is an error ("Error: ...", "error: ...").
func saysError(text string) bool {
	t := strings.TrimSpace(text)
	return len(t) >= len("error:") && strings.EqualFold(t[:len("error:")], "error:")
}

// argumentsText is a tool call's arguments as Chat Completions carries them:
// a JSON text, "{}" for none.
func argumentsText(args json.RawMessage) string {
	if len(strings.TrimSpace(string(args))) == 0 {
		return "{}"
	}
	return string(args)
}

// stream makes one streaming call; streamed reports whether onText saw text.
func (p *openaiProvider) stream(ctx context.Context, params openai.ChatCompletionNewParams, onText func(string)) (_ *Response, streamed bool, _ *Error) {
	s := p.chat.NewStreaming(ctx, params)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return nil, streamed, &Error{Provider: p.cfg.Name, Kind: KindOther,
				Message: "malformed stream: a chunk could not be accumulated"}
		}
		if len(chunk.Choices) > 0 {
			if d := chunk.Choices[0].Delta.Content; d != "" && onText != nil {
				streamed = true
				onText(d)
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, streamed, p.classify(ctx, err)
	}
	if len(acc.Choices) == 0 {
		return nil, streamed, &Error{Provider: p.cfg.Name, Kind: KindOther, Message: "the stream ended without a choice"}
	}
	choice := acc.Choices[0]
	resp := &Response{
		Message:    Message{Role: RoleAssistant, Text: choice.Message.Content},
		StopReason: choice.FinishReason,
		Usage:      Usage{InputTokens: int(acc.Usage.PromptTokens), OutputTokens: int(acc.Usage.CompletionTokens)},
	}
	for _, tc := range choice.Message.ToolCalls {
		args := json.RawMessage(tc.Function.Arguments)
		if len(strings.TrimSpace(tc.Function.Arguments)) == 0 {
			args = json.RawMessage("{}")
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return resp, streamed, nil
}

// classify turns an openai-go error into an *Error.
func (p *openaiProvider) classify(ctx context.Context, err error) *Error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := redact(apiErr.Message, p.cfg.APIKey)
		code := apiErr.Code
		tooLong := code == "context_length_exceeded" || (apiErr.StatusCode == 400 && looksTooLong(msg))
		var h = apiErr.Response
		e := statusError(p.cfg.Name, p.cfg.KeySource, apiErr.StatusCode, code, msg, tooLong, headerOf(h), err)
		if code == "insufficient_quota" {
			e.final = true // a billing limit: waiting does not lift it
			e.Message = fmt.Sprintf("quota exceeded (%d): check the account's plan and billing", apiErr.StatusCode)
		}
		return e
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// An error event in the middle of a stream: {"error": {...}}.
		var body struct {
			Error struct {
				Message string `json:"message"`
				Code    any    `json:"code"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &body)
		msg := redact(body.Error.Message, p.cfg.APIKey)
		kind := KindOther
		switch {
		case body.Error.Code == "context_length_exceeded" || looksTooLong(msg):
			kind = KindContextTooLong
		case body.Error.Type == "server_error" || body.Error.Code == "server_error":
			kind = KindUnavailable
		case body.Error.Code == "rate_limit_exceeded":
			kind = KindRateLimit
		}
		return &Error{Provider: p.cfg.Name, Kind: kind, Message: "error in stream: " + msg, Err: err}
	}
	return classifyTransport(ctx, p.cfg.Name, p.baseURL(), err)
}

func (p *openaiProvider) baseURL() string {
	if p.cfg.BaseURL == "" {
		return "https://api.openai.com/v1"
	}
	return p.cfg.BaseURL
}

// looksTooLong recognises the context-overflow messages of servers that send
// no code: vLLM ("maximum context length"), llama.cpp ("exceeds the
// available context size"), Anthropic ("prompt is too long").
func looksTooLong(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"maximum context length", "context length", "context size", "context window", "prompt is too long", "too many tokens"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
