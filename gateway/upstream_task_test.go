package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestUpstreamTaskThroughGateway: server-everything's
// simulate-research-query requires a task of its server's (protocol
// 2025-11-25's tasks); through the gateway a go-sdk client of either
// generation calls it as any tool and gets the report, a plain result (the
// host runs the task: host/task.go), and the question the task asks
// reaches the client (in-call for 2025-11-25, an input request for
// 2026-07-28) and its answer goes on into the report.
func TestUpstreamTaskThroughGateway(t *testing.T) {
	ev := interop.Everything(t)
	_, base := serve(t, []config.Server{{ID: "everything", Transport: config.TransportStdio, Command: ev[0], Args: append(ev[1:], "stdio")}}, nil, nil)
	const tool = "mcp_everything_simulate-research-query"
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			var asked string
			cs := connect(t, base, clientOpts{version: v, opts: &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "historical"}}, nil
				},
			}})
			res := call(t, cs, tool, map[string]any{"topic": "sloths"})
			if res.IsError || !strings.Contains(textOf(res), "# Research Report: sloths") {
				t.Fatalf("%s = %v %q, want the report", tool, res.IsError, textOf(res))
			}
			for k := range res.Meta {
				if strings.Contains(k, "task") {
					t.Errorf("result _meta has %q: want a plain result, no task of the upstream's", k)
				}
			}
			res = call(t, cs, tool, map[string]any{"topic": "sloths", "ambiguous": true})
			if !strings.Contains(asked, `"sloths" could have multiple interpretations`) {
				t.Errorf("the client was asked %q, want the task's question", asked)
			}
			if res.IsError || !strings.Contains(textOf(res), "# Research Report: sloths (historical)") {
				t.Errorf("%s (ambiguous) = %v %q, want the report with the answer", tool, res.IsError, textOf(res))
			}
		})
	}
}
