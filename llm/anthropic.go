package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// DefaultMaxTokens is the max_tokens of an Anthropic request that sets none:
// the Messages API requires one.
const DefaultMaxTokens = 4096

// anthropicProvider speaks the Messages API through anthropic-sdk-go/v2.
type anthropicProvider struct {
	cfg      Config
	base     string
	messages anthropic.MessageService
}

func newAnthropic(cfg Config) *anthropicProvider {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.anthropic.com"
	}
	// WithoutEnvironmentDefaults: the key, base URL and headers are the
	// configured ones, never ANTHROPIC_* from the environment.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
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
	c := anthropic.NewClient(opts...)
	return &anthropicProvider{cfg: cfg, base: base, messages: c.Messages}
}

func (p *anthropicProvider) Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error) {
	params, opts, err := p.params(req)
	if err != nil {
		return nil, &Error{Provider: p.cfg.Name, Kind: KindBadRequest, Message: err.Error(), Err: err}
	}
	return withRetries(ctx, p.cfg.MaxRetries, p.cfg.sleep, func() (*Response, bool, *Error) {
		return p.stream(ctx, params, opts, onText)
	})
}

func (p *anthropicProvider) params(req *Request) (anthropic.MessageNewParams, []option.RequestOption, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: DefaultMaxTokens,
	}
	var opts []option.RequestOption
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		// The v2 SDK has no Temperature field (the API deprecates it for new
		// models); an agent that sets one still gets it sent.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	// The Messages API alternates user and assistant turns: consecutive
	// messages of one side (tool results, then the user's next words) are
	// blocks of one turn, tool results first as the API requires.
	for i, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		user := true
		switch m.Role {
		case RoleUser:
			if m.Text != "" { // the API refuses empty text blocks
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
		case RoleAssistant:
			user = false
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, json.RawMessage(argumentsText(tc.Arguments)), tc.Name))
			}
		case RoleTool:
			r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.IsError {
				r.IsError = anthropic.Bool(true)
			}
			if m.Text != "" {
				r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Text}}}
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &r})
		default:
			return params, nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			continue
		}
		n := len(params.Messages)
		switch {
		case n > 0 && user && params.Messages[n-1].OfUser != nil:
			params.Messages[n-1].OfUser.Content = append(params.Messages[n-1].OfUser.Content, blocks...)
		case n > 0 && !user && params.Messages[n-1].OfAssistant != nil:
			params.Messages[n-1].OfAssistant.Content = append(params.Messages[n-1].OfAssistant.Content, blocks...)
		case user:
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		default:
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		}
	}
	for _, t := range req.Tools {
		schema, err := Transform(t.Parameters, DialectAnthropic)
		if err != nil {
			return params, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(string(schema)))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return params, nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		in := anthropic.ToolInputSchemaParam{Properties: m["properties"], Required: stringList(m["required"])}
		delete(m, "properties")
		delete(m, "required")
		delete(m, "type")
		if len(m) > 0 {
			in.ExtraFields = m
		}
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	return params, opts, nil
}

// stream makes one streaming call; streamed reports whether onText saw text.
func (p *anthropicProvider) stream(ctx context.Context, params anthropic.MessageNewParams, opts []option.RequestOption, onText func(string)) (_ *Response, streamed bool, _ *Error) {
	s := p.messages.NewStreaming(ctx, params, opts...)
	defer s.Close()
	var msg anthropic.Message
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, streamed, &Error{Provider: p.cfg.Name, Kind: KindOther, Message: "malformed stream: " + err.Error(), Err: err}
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" && onText != nil {
			streamed = true
			onText(ev.Delta.Text)
		}
	}
	if err := s.Err(); err != nil {
		return nil, streamed, p.classify(ctx, err)
	}
	u := msg.Usage
	resp := &Response{
		Message:    Message{Role: RoleAssistant},
		StopReason: string(msg.StopReason),
		// Cached input is input too: a token budget counts it.
		Usage: Usage{
			InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
			OutputTokens: int(u.OutputTokens),
		},
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	resp.Message.Text = text.String()
	return resp, streamed, nil
}

// anthropicStatus is the HTTP status an error type stands for: an error
// event inside a stream arrives on a 200 response.
var anthropicStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"rate_limit_error":      http.StatusTooManyRequests,
	"timeout_error":         http.StatusGatewayTimeout,
	"api_error":             http.StatusInternalServerError,
	"overloaded_error":      529,
}

func (p *anthropicProvider) classify(ctx context.Context, err error) *Error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		typ := string(apiErr.Type())
		status := apiErr.StatusCode
		if s, ok := anthropicStatus[typ]; ok && (status < 400) {
			status = s
		}
		msg := redact(apiErr.Message, p.cfg.APIKey)
		tooLong := status == http.StatusBadRequest && looksTooLong(msg)
		e := statusError(p.cfg.Name, p.cfg.KeySource, status, typ, msg, tooLong, headerOf(apiErr.Response), err)
		if apiErr.StatusCode < 400 {
			e.Message = "error in stream: " + e.Message
		}
		return e
	}
	if ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && strings.Contains(err.Error(), "received error while streaming") {
		return &Error{Provider: p.cfg.Name, Kind: KindOther, Message: redact(err.Error(), p.cfg.APIKey), Err: err}
	}
	return classifyTransport(ctx, p.cfg.Name, p.base, err)
}
