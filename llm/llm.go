// Package llm talks to LLM providers — OpenAI's Chat Completions (and every
// OpenAI-compatible server: Ollama, vLLM, llama.cpp, LM Studio) and
// Anthropic's Messages API — through the providers' own Go SDKs, behind one
// small interface the agent loop uses.
//
// [New] builds a [Provider] from a [Config]; [Defaults] are the built-in
// "openai", "anthropic" and "ollama" providers and [ParseModel] splits an
// agent's "provider:model". Complete streams one model call: text deltas go
// to a callback as they arrive, tool calls (parallel ones included) are
// assembled from their deltas, and token usage comes back with the answer.
//
// Tool schemas are MCP inputSchemas; [Transform] rewrites what a provider
// refuses (local $refs, a root oneOf, a missing type) instead of dropping the
// tool. Failures are [*Error] with an [ErrorKind] to branch on
// (errors.Is(err, llm.KindRateLimit)); rate limits and unavailability are
// retried with exponential backoff honouring Retry-After, the SDKs' own
// retries being off so that there is one policy. No error carries the key.
//
// Package llmtest runs fake OpenAI and Anthropic servers that speak the real
// wire formats, for tests of this package and of the agents built on it.
package llm

import (
	"context"
	"encoding/json"
)

// Role is who said a message.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool result
)

// Message is one turn of a conversation.
type Message struct {
	Role Role
	// Text is the message's text (for RoleTool, the tool result's text).
	Text string
	// ToolCalls are the tools an assistant message asks for.
	ToolCalls []ToolCall
	// ToolCallID and IsError describe a RoleTool message.
	ToolCallID string
	IsError    bool
}

// ToolCall is one tool the model asks for.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is a JSON object ("{}" when the model sent none). It is
	// passed on as the model wrote it: the host validates it.
	Arguments json.RawMessage
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the tool's JSON Schema (an MCP inputSchema); providers
	// transform what they cannot take (see Transform).
	Parameters json.RawMessage
}

// Request is one model call.
type Request struct {
	Model       string // the provider's model name, e.g. "gpt-4.1-mini"
	System      string
	Messages    []Message
	Tools       []Tool
	Temperature *float64
	MaxTokens   int
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Response is the model's answer.
type Response struct {
	Message    Message // RoleAssistant: Text and/or ToolCalls
	Usage      Usage
	StopReason string // the provider's own word: "stop", "tool_calls", "end_turn", "max_tokens", …
}

// Provider is one configured LLM provider.
type Provider interface {
	// Complete sends req and streams the answer: onText (may be nil) gets
	// each text delta as it arrives. Errors are *Error.
	Complete(ctx context.Context, req *Request, onText func(delta string)) (*Response, error)
}
