package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
)

// maxSamplingTokens bounds one sampling request's answer: a server asks, and
// the agent's owner pays.
const maxSamplingTokens = 4096

// SamplingHandler answers servers' sampling requests with the agent's own
// model: set it as host.Options.Sampling when the agent has
// allow_sampling: true (otherwise leave it nil, and the host refuses
// sampling). Text messages only; other content is refused. During a [Run]
// of such an agent, the run answers its own tool calls' sampling requests
// the same way, and counts their tokens (see RunOptions.Sampling).
func SamplingHandler(p llm.Provider, model string) host.SamplingHandler {
	return func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		res, _, err := sample(ctx, p, model, server, req, maxSamplingTokens)
		return res, err
	}
}

// sample answers one sampling request with model, in at most maxTokens
// tokens, and says how many tokens it used.
func sample(ctx context.Context, p llm.Provider, model, server string, req *mcp.CreateMessageParams, maxTokens int) (*mcp.CreateMessageResult, llm.Usage, error) {
	if req == nil {
		return nil, llm.Usage{}, errors.New("empty sampling request")
	}
	lr := &llm.Request{Model: model, System: req.SystemPrompt, MaxTokens: int(min(max(req.MaxTokens, 1), int64(maxTokens)))}
	if req.Temperature != 0 {
		t := req.Temperature
		lr.Temperature = &t
	}
	for i, m := range req.Messages {
		tc, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, llm.Usage{}, fmt.Errorf("sampling from server %q: message %d is not text; only text is supported", server, i)
		}
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		lr.Messages = append(lr.Messages, llm.Message{Role: role, Text: tc.Text})
	}
	resp, err := p.Complete(ctx, lr, nil)
	if err != nil {
		return nil, llm.Usage{}, err
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: resp.Message.Text}, Model: model, Role: "assistant", StopReason: resp.StopReason}, resp.Usage, nil
}
