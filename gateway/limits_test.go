package gateway_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
)

// TestRequestsBounded: past Options.MaxRequests requests in flight, the
// gateway refuses the next one at once with a JSON-RPC error naming the
// bound, and serves again once one ends. Before, nothing bounded them:
// the go-sdk hands each call of a session a goroutine of its own, and a
// client could hold any number of upstream calls open.
func TestRequestsBounded(t *testing.T) {
	logs := &interop.LogBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx")}, &host.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))},
		&gateway.Options{MaxRequests: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "d", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	slow, stop := context.WithCancel(ctx)
	done := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := cs.CallTool(slow, &mcp.CallToolParams{Name: "mcp_fx_slow", Arguments: map[string]any{"ms": 600000}})
			done <- err
		}()
	}
	for strings.Count(logs.String(), "slow: started") < 3 {
		if ctx.Err() != nil {
			t.Fatalf("the calls never reached the upstream:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
	}
	_, err = cs.ListTools(ctx, nil)
	if want := "3 requests in flight already, the bound ([gateway] max_requests)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a fourth request: %v; want an error saying %q", err, want)
	}
	stop()
	for range 3 {
		<-done
	}
	// The cancelled calls' requests end as their handlers return: the
	// next request is served once they have, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := cs.ListTools(ctx, nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the calls ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded
	}
}
