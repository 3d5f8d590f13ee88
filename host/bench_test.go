package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// BenchmarkCallTool compares a trivial tools/call through the host (name
// lookup, schema validation, timeout, progress routing) with the same call
// made directly on a go-sdk client session, in the same run, to the same
// fixture server over stdio.
func BenchmarkCallTool(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	benchBothPaths(b, func(ctx context.Context, cs *mcp.ClientSession) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		return err
	}, func(ctx context.Context, h *host.Host) error {
		_, err := h.CallTool(ctx, "mcp_fx_echo", args, nil)
		return err
	})
	// Guardrails side by side: the same 4 KiB result through a host with
	// no rules and with three built-in filters (credentials, pii, size) on
	// results; p50-ns is each one's median call.
	text := typicalResult(4 << 10)
	big, _ := json.Marshal(map[string]string{"text": text})
	three, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.PII{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.Size{MaxBytes: 1 << 20}, Action: guardrail.Reject, Direction: guardrail.Results},
	})
	if err != nil {
		b.Fatal(err)
	}
	bin := interop.Build(b, fixturePkg)
	// Both hosts in one loop, call after call, so that the machine's
	// drift (other work on a shared machine) falls on both alike.
	b.Run("host-4KiB-none-vs-3-guardrails", func(b *testing.B) {
		ctx := context.Background()
		start := func(c *guardrail.Chain) *host.Host {
			h, err := host.Start(ctx, []config.Server{{ID: "fx", Command: bin}}, &host.Options{Guardrails: c})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { h.Close() })
			return h
		}
		hosts := [2]*host.Host{start(nil), start(three)}
		var took [2][]time.Duration
		for b.Loop() {
			for i, h := range hosts {
				t0 := time.Now()
				res, err := h.CallTool(ctx, "mcp_fx_echo", big, nil)
				took[i] = append(took[i], time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Content[0].(*mcp.TextContent).Text) != len(text) {
					b.Fatal("the result changed")
				}
			}
		}
		p50 := func(d []time.Duration) float64 {
			slices.Sort(d)
			return float64(d[len(d)/2].Nanoseconds())
		}
		none, guarded := p50(took[0]), p50(took[1])
		b.ReportMetric(none, "p50-none-ns")
		b.ReportMetric(guarded, "p50-guarded-ns")
		b.ReportMetric(guarded-none, "p50-added-ns")
	})
}

// typicalResult is n bytes of what a tool returns: prose and JSON-ish
// lines with ids, dates, amounts, paths and URLs, no secret and no
// personal data (the common case, which every filter reads to its end).
func typicalResult(n int) string {
	const line = `{"id": 48213, "title": "Fix flaky retry in worker pool", "state": "open", "created": "2026-03-14T09:21:07Z", "labels": ["bug", "p2"], "url": "https://tracker.example.com/issues/48213", "path": "src/pool/retry.go", "amount": 1234.50, "version": "v1.18.2"}` + "\n" +
		"The worker retries a failed job three times with backoff 250ms, 500ms and 1s; build 20260314.3 fixed the race in 4 of 5 runs.\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// BenchmarkServerError is a request the server refuses with a protocol
// error (resources/read of a URI it does not have), through the host and
// directly on a go-sdk client session, in the same run. The host used to
// wait up to 100 ms per such error for a connection watcher that had
// nothing to say.
//
//	go test ./host -run '^$' -bench ServerError -count 3
func BenchmarkServerError(b *testing.B) {
	refused := func(err error) error {
		if err == nil {
			return errors.New("read of a missing resource succeeded")
		}
		return nil
	}
	benchBothPaths(b, func(ctx context.Context, cs *mcp.ClientSession) error {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nope"})
		return refused(err)
	}, func(ctx context.Context, h *host.Host) error {
		_, err := h.ReadResource(ctx, "fx", "test://nope", nil)
		return refused(err)
	})
}

// benchBothPaths runs direct on a go-sdk client session of the fixture
// server ("direct-sdk") and through on a host whose only server, "fx", is
// that fixture ("host"), each until the benchmark's loop ends or one
// returns an error.
func benchBothPaths(b *testing.B, direct func(context.Context, *mcp.ClientSession) error, through func(context.Context, *host.Host) error) {
	ctx := context.Background()
	bin := interop.Build(b, fixturePkg)
	b.Run("direct-sdk", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			if err := direct(ctx, cs); err != nil {
				b.Fatal(err)
			}
		}
	})
	host := func(b *testing.B, sc config.Server) {
		h, err := host.Start(ctx, []config.Server{sc}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		for b.Loop() {
			if err := through(ctx, h); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("host", func(b *testing.B) { host(b, config.Server{ID: "fx", Command: bin}) })
	// With a secret registered every answer is searched for it (redact.go).
	b.Run("host-with-secret", func(b *testing.B) {
		b.Setenv("SWITCHBOARD_SECRET_BENCH", "bench-secret-0123456789abcdef")
		host(b, config.Server{ID: "fx", Command: bin, Env: map[string]string{"TOKEN": "{{secrets.bench}}"}})
	})
}

// BenchmarkLazyStart20 measures the time to a usable tool list for 20 lazy
// servers, each taking 300 ms to start: cold (no cache: every server is
// started) against warm (cached tools offered, nothing started).
func BenchmarkLazyStart20(b *testing.B) {
	var servers []config.Server
	for i := range 20 {
		s := fixture(b, fmt.Sprintf("lazy%d", i), "-slow-start", "300")
		s.Lazy = true
		servers = append(servers, s)
	}
	measure := func(cache host.ToolCache) (time.Duration, int) {
		start := time.Now()
		h, err := host.Start(context.Background(), servers, &host.Options{ToolCache: cache})
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		n := len(h.Tools())
		h.Close()
		return d, n
	}
	var cold, warm time.Duration
	for b.Loop() {
		cache := openStore(b)
		d, n1 := measure(cache) // cold: fills the cache
		cold += d
		d, n2 := measure(cache) // warm
		warm += d
		if n1 != n2 || n1 == 0 {
			b.Fatalf("tools: %d cold, %d warm", n1, n2)
		}
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((cold/n).Microseconds())/1000, "ms/cold")
	b.ReportMetric(float64((warm/n).Microseconds())/1000, "ms/warm")
}
