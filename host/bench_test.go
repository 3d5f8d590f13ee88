package host_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
)

// BenchmarkCallTool compares a trivial tools/call through the host (name
// lookup, schema validation, timeout, progress routing) with the same call
// made directly on a go-sdk client session, in the same run, to the same
// fixture server over stdio.
func BenchmarkCallTool(b *testing.B) {
	ctx := context.Background()
	bin := interop.Build(b, fixturePkg)
	args := json.RawMessage(`{"text":"hello"}`)

	b.Run("direct-sdk", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("host", func(b *testing.B) {
		h, err := host.Start(ctx, []config.Server{{ID: "fx", Command: bin}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		for b.Loop() {
			if _, err := h.CallTool(ctx, "mcp_fx_echo", args, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
