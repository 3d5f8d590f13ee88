package agent

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
)

type turnKey struct{}

// TestRunTurn: RunOptions.Turn wraps each turn: its context reaches the
// turn's model call and tool calls, and each turn ends before the next
// starts, the last before the terminal event.
func TestRunTurn(t *testing.T) {
	var mu sync.Mutex
	var log []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, s)
	}
	turnOf := func(ctx context.Context) string {
		s, _ := ctx.Value(turnKey{}).(string)
		return s
	}
	h := startFixture(t, 0, &host.Options{ClientMiddleware: func(string) mcp.Middleware {
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/call" {
					note("tool in " + turnOf(ctx))
				}
				return next(ctx, method, req)
			}
		}
	}})
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){
		func(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error) {
			note("model in " + turnOf(ctx))
			return ask(`c mcp_t_add {"a":1,"b":1}`)(ctx, req, onText)
		},
		func(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error) {
			note("model in " + turnOf(ctx))
			return say("two")(ctx, req, onText)
		},
	}}
	evs := collect(t, context.Background(), &RunOptions{Agent: &Agent{ID: "a"}, Host: h, Provider: p, Model: "m", Prompt: "add",
		Turn: func(ctx context.Context, step int) (context.Context, func()) {
			name := []string{"", "turn1", "turn2"}[step]
			note("start " + name)
			return context.WithValue(ctx, turnKey{}, name), func() { note("end " + name) }
		}})
	if l := last(evs); l.Type != EventRunCompleted {
		t.Fatalf("last event %+v, want run:completed", l)
	}
	want := []string{"start turn1", "model in turn1", "tool in turn1", "end turn1", "start turn2", "model in turn2", "end turn2"}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(log, want) {
		t.Errorf("turns: %q, want %q", log, want)
	}
}
