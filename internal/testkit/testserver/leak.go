package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addLeakTools adds, for -leak VAR, tools, a resource and a prompt that
// put the value of the environment variable VAR everywhere a server can
// put text: a careless server echoing the secret it was given. Redaction
// tests check that none of it reaches a client.
func addLeakTools(s *mcp.Server, name string) {
	v := os.Getenv(name)
	s.AddTool(&mcp.Tool{Name: "leak", Title: "leak " + v, Description: "Leaks " + v + " in every part of its result.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","description":"` + jsonEscape(v) + `"}}}`),
		Meta:        mcp.Meta{"leak": v}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "leak " + v, Data: map[string]any{"value": v}})
			if token := req.Params.GetProgressToken(); token != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 1, Message: "progress " + v})
			}
			return &mcp.CallToolResult{
				Meta: mcp.Meta{"leak": v, v: "as a key"},
				Content: []mcp.Content{
					&mcp.TextContent{Text: "text " + v, Meta: mcp.Meta{"leak": v}},
					&mcp.ImageContent{Data: []byte("image " + v), MIMEType: "image/png"},
					&mcp.AudioContent{Data: []byte("audio " + v), MIMEType: "audio/wav"},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://leak", MIMEType: "text/plain", Text: "embedded " + v}},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://leak-blob", MIMEType: "application/octet-stream", Blob: []byte("blob " + v)}},
					&mcp.ResourceLink{URI: "test://leak", Name: "leak", Description: "link " + v},
				},
				StructuredContent: map[string]any{"value": v, "nested": []any{map[string]any{"deep": v}}},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "leak_error", Description: "Fails with a protocol error that holds the value.", InputSchema: emptyObject},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			data, _ := json.Marshal(map[string]string{"value": v})
			return nil, &jsonrpc.Error{Code: -32001, Message: "refused: " + v, Data: data}
		})
	s.AddTool(&mcp.Tool{Name: "leak_tool_error", Description: "Fails with an isError result that holds the value.", InputSchema: emptyObject},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: text("failed: %s", v)}, nil
		})
	s.AddTool(&mcp.Tool{Name: "leak_elicit", Description: "Asks the client a question that holds the value (2025-11-25).", InputSchema: emptyObject},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "confirm " + v,
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","description":"` + jsonEscape(v) + `"}}}`)})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: text("answered %s", res.Action)}, nil
		})
	s.AddTool(&mcp.Tool{Name: "leak_sample", Description: "Asks the client's model about the value (2025-11-25).", InputSchema: emptyObject},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, SystemPrompt: "system " + v,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "sample " + v}}}})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: text("sampled %s", res.Model)}, nil
		})
	// The same questions asked the 2026-07-28 way: an input-required result
	// (the go-sdk turns it into requests for an older client).
	s.AddTool(&mcp.Tool{Name: "leak_input", Description: "Asks for an answer and a completion, both holding the value, as input requests.", InputSchema: emptyObject},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) > 0 {
				return &mcp.CallToolResult{Content: text("answered %d", len(req.Params.InputResponses))}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"form": &mcp.ElicitParams{Message: "input " + v,
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","description":"` + jsonEscape(v) + `"}}}`)},
				"completion": &mcp.CreateMessageParams{MaxTokens: 10, SystemPrompt: "system " + v,
					Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "input sample " + v}}}},
			}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://leak", Name: "leak", Description: "resource " + v, MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "resource " + v},
				{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: []byte("blob " + v)},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "leak", Description: "prompt " + v,
		Arguments: []*mcp.PromptArgument{{Name: "x", Description: "argument " + v}}},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "got " + v, Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "prompt text " + v}},
			}}, nil
		})
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
