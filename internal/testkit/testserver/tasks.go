package main

// The tools the conformance suite's tasks scenarios (SEP-2663) call, added
// by -tasks-fixtures. They are plain tools: a task is the gateway's own
// (the gateway decides per tool, by its config, whether a call becomes
// one), and a question is an in-call elicitation (protocol 2025-11-25),
// which the gateway turns into an input-required result or a task's
// inputRequests.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskJobTime is how long failing_job, protocol_error_job and
// test_tool_with_task work: longer than a gateway's task_wait in the
// tests, so that each becomes a task.
const taskJobTime = time.Second

type greetIn struct {
	Name string `json:"name"`
}

type slowComputeIn struct {
	Seconds float64 `json:"seconds"`
	Label   string  `json:"label,omitempty"`
}

type confirmDeleteIn struct {
	Filename string `json:"filename"`
}

func addTaskFixtures(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets name: \"Hello, NAME!\"."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: text("Hello, %s!", in.Name)}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow_compute", Description: "Works seconds seconds, then answers; honours cancellation."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowComputeIn) (*mcp.CallToolResult, any, error) {
			if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				fmt.Fprintf(diag, "testserver: slow_compute: cancelled: %v\n", context.Cause(ctx))
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: text("computed %s after %gs", in.Label, in.Seconds)}, nil, nil
		})
	// slow_lookup is slow_compute declared read-only (readOnlyHint): a
	// task of it interrupted by a crash is called again by recovery.
	mcp.AddTool(s, &mcp.Tool{Name: "slow_lookup", Description: "Works seconds seconds, then answers; read-only; honours cancellation.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowComputeIn) (*mcp.CallToolResult, any, error) {
			if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				fmt.Fprintf(diag, "testserver: slow_lookup: cancelled: %v\n", context.Cause(ctx))
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: text("looked up %s after %gs", in.Label, in.Seconds)}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "failing_job", Description: "Works a second, then fails with an isError result.", InputSchema: emptyObject},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := pause(ctx, taskJobTime); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{IsError: true, Content: text("the job failed")}, nil
		})
	s.AddTool(&mcp.Tool{Name: "protocol_error_job", Description: "Works a second, then answers with a JSON-RPC error.", InputSchema: emptyObject},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := pause(ctx, taskJobTime); err != nil {
				return nil, err
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "protocol_error_job: the job broke"}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "confirm_delete", Description: "Asks the client to confirm deleting filename (one elicitation), then says what it did."},
		func(ctx context.Context, req *mcp.CallToolRequest, in confirmDeleteIn) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: fmt.Sprintf("Delete %s?", in.Filename),
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`)})
			if err != nil {
				return nil, nil, err
			}
			if res.Action == "accept" && res.Content["confirm"] == true {
				return &mcp.CallToolResult{Content: text("deleted %s", in.Filename)}, nil, nil
			}
			return &mcp.CallToolResult{Content: text("kept %s (%s)", in.Filename, res.Action)}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "multi_input", Description: "Asks the client two questions at once (two elicitations), then says what came back.", InputSchema: emptyObject},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var (
				wg      sync.WaitGroup
				answers [2]string
				errs    [2]error
			)
			for i := range 2 {
				wg.Go(func() {
					res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: fmt.Sprintf("Question %d: your name?", i+1),
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}}}`)})
					if err != nil {
						errs[i] = err
						return
					}
					answers[i] = fmt.Sprintf("%s %v", res.Action, res.Content["name"])
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: text("answers: %s; %s", answers[0], answers[1])}, nil
		})
	s.AddTool(&mcp.Tool{Name: "test_tool_with_task", Description: "Asks the client for user_name, works a second, then greets the name.", InputSchema: emptyObject},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "user_name: your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			if err := pause(ctx, taskJobTime); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: text("Hello, %v! (%s)", res.Content["name"], res.Action)}, nil
		})
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
