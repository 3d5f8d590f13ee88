package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/store"
)

// calls is a server's tool's usage: n calls of each duration given.
func calls(server, tool string, errors int64, durations map[time.Duration]int) store.CallUsage {
	u := store.CallUsage{Server: server, Tool: tool}
	for d, n := range durations {
		for range n {
			u.Observe(d, false)
		}
	}
	u.Errors = errors
	return u
}

// testUsage: known calls and runs, in two batches of one minute, give the
// expected counts and percentiles (interpolated in the latency buckets);
// tokens add up by agent and workflow.
func testUsage(t *testing.T, newDB func(*testing.T) string) {
	s := open(t, newDB(t))
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 30, 20, 0, time.UTC)
	minute := now.Truncate(time.Minute)
	if err := s.RecordUsage(ctx, now, store.UsageBatch{Minute: minute,
		Calls: []store.CallUsage{
			calls("fx", "echo", 2, map[time.Duration]int{3 * time.Millisecond: 50, 20 * time.Millisecond: 45, 2 * time.Second: 5}),
			calls("fx", "add", 0, map[time.Duration]int{time.Hour: 1}),
		},
		Tokens: []store.TokenUsage{{Kind: "agent", Name: "helper", Runs: 1, Input: 100, Output: 20}},
	}); err != nil {
		t.Fatal(err)
	}
	// The same minute again: added to the rows already there.
	if err := s.RecordUsage(ctx, now, store.UsageBatch{Minute: minute.Add(10 * time.Second),
		Calls:  []store.CallUsage{calls("fx", "echo", 0, map[time.Duration]int{3 * time.Millisecond: 10})},
		Tokens: []store.TokenUsage{{Kind: "agent", Name: "helper", Runs: 1, Failed: 1, Input: 5}, {Kind: "workflow", Name: "triage", Runs: 1, Input: 7, Output: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Usage(ctx, now.Add(-time.Hour), "")
	if err != nil {
		t.Fatal(err)
	}
	want := &store.UsageReport{Since: now.Add(-time.Hour),
		// echo: 60 calls ≤ 5 ms, 45 ≤ 25 ms, 5 ≤ 2.5 s. p50 (rank 55) in
		// (2.5, 5] ms: 2.5 + 2.5·55/60; p95 (rank 104.5) in (10, 25]:
		// 10 + 15·44.5/45; p99 (rank 108.9) in (1, 2.5] s: 1 + 1.5·3.9/5.
		Calls: []store.CallStats{
			{Server: "fx", Tool: "add", Calls: 1, P50MS: 300000, P95MS: 300000, P99MS: 300000},
			{Server: "fx", Tool: "echo", Calls: 110, Errors: 2, P50MS: 4.792, P95MS: 24.833, P99MS: 2170},
		},
		Tokens: []store.TokenStats{
			{Kind: "agent", Name: "helper", Runs: 2, Failed: 1, Input: 105, Output: 20},
			{Kind: "workflow", Name: "triage", Runs: 1, Input: 7, Output: 1},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Usage (-want +got):\n%s", d)
	}
	if got, _ := s.Usage(ctx, now.Add(time.Minute), ""); len(got.Calls)+len(got.Tokens) != 0 {
		t.Errorf("Usage since after the calls = %+v, want none", got)
	}
}

// testUsageRetention: minute rows older than a day are rolled into their
// hour (the counts kept), hour rows older than UsageHourRetention dropped:
// the table holds at most a day of minutes.
func testUsageRetention(t *testing.T, newDB func(*testing.T) string) {
	path := newDB(t)
	s := open(t, path)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old := now.Add(-25 * time.Hour).Truncate(time.Hour)
	var batches []store.UsageBatch
	for m := range 3 { // three minutes of one old hour
		batches = append(batches, store.UsageBatch{Minute: old.Add(time.Duration(m) * time.Minute),
			Calls:  []store.CallUsage{calls("fx", "echo", 1, map[time.Duration]int{time.Millisecond: 2})},
			Tokens: []store.TokenUsage{{Kind: "agent", Name: "a", Runs: 1, Input: 3}}})
	}
	batches = append(batches, store.UsageBatch{Minute: now.Add(-store.UsageHourRetention - time.Hour),
		Calls: []store.CallUsage{calls("fx", "echo", 0, map[time.Duration]int{time.Millisecond: 1000})}})
	if err := s.RecordUsage(ctx, now, batches...); err != nil {
		t.Fatal(err)
	}
	got, err := s.Usage(ctx, now.Add(-48*time.Hour), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Calls) != 1 || got.Calls[0].Calls != 6 || got.Calls[0].Errors != 3 || len(got.Tokens) != 1 || got.Tokens[0].Input != 9 {
		t.Errorf("Usage after the roll-up = %+v, want echo's 6 calls, 3 errors, 9 input tokens of agent a", got)
	}
	db := rawDB(t, path)
	defer db.Close()
	for _, table := range []string{"usage_calls", "usage_tokens"} {
		var minutes, hours int
		if err := db.QueryRow(`SELECT COUNT(*) FILTER (WHERE res = 60), COUNT(*) FILTER (WHERE res = 3600) FROM `+table).Scan(&minutes, &hours); err != nil {
			t.Fatal(err)
		}
		if minutes != 0 || hours != 1 {
			t.Errorf("%s: %d minute rows, %d hour rows; want 0 and 1 (one hour kept, one past retention dropped)", table, minutes, hours)
		}
	}
}

// testUsageByEndpoint: a database at schema version 6, whose usage rows
// have no endpoint, opens with them as calls through none; calls through
// named endpoints add to each server's tool and are reported per
// endpoint; a report narrowed to one endpoint holds its calls alone (and
// no runs); the hour roll-up keeps the endpoint.
func testUsageByEndpoint(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	path := newDB(t)
	open(t, path).Close()
	cols := make([]string, len(store.UsageLatencyBounds)+1)
	for i := range cols {
		cols[i] = fmt.Sprintf("b%02d", i)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old := now.Add(-25 * time.Hour).Truncate(time.Hour)
	raw := rawDB(t, path)
	for _, q := range []string{
		`DROP TABLE usage_calls`,
		`CREATE TABLE usage_calls (bucket BIGINT NOT NULL, res INTEGER NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL,
			calls BIGINT NOT NULL, errors BIGINT NOT NULL, ` + strings.Join(cols, " BIGINT NOT NULL DEFAULT 0, ") + ` BIGINT NOT NULL DEFAULT 0,
			PRIMARY KEY (bucket, res, server, tool))`,
		fmt.Sprintf(`INSERT INTO usage_calls (bucket, res, server, tool, calls, errors, b00) VALUES (%d, 60, 'fx', 'echo', 4, 1, 4)`, now.Add(-time.Minute).Unix()),
		`DELETE FROM schema_migrations WHERE version > 6`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	s := open(t, path)
	if got := schemaVersion(t, path); got != store.SchemaVersion() {
		t.Errorf("from version 6: schema version %d, want %d", got, store.SchemaVersion())
	}
	through := func(endpoint string, n int) store.CallUsage {
		u := calls("fx", "echo", 0, map[time.Duration]int{time.Millisecond: n})
		u.Endpoint = endpoint
		return u
	}
	if err := s.RecordUsage(ctx, now, store.UsageBatch{Minute: now,
		Calls:  []store.CallUsage{through("", 1), through("code", 2), through("ops", 3)},
		Tokens: []store.TokenUsage{{Kind: "agent", Name: "a", Runs: 1}},
	}, store.UsageBatch{Minute: old, Calls: []store.CallUsage{through("code", 5)}}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Usage(ctx, now.Add(-time.Hour), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Calls) != 1 || all.Calls[0].Calls != 10 || all.Calls[0].Errors != 1 || len(all.Tokens) != 1 {
		t.Errorf("Usage of every call = %+v; want echo's 10 calls (4 stored before the endpoint column, 6 now), 1 error, agent a's run", all)
	}
	var eps []string
	for _, e := range all.Endpoints {
		eps = append(eps, fmt.Sprintf("%s:%d", e.Endpoint, e.Calls))
	}
	if got := strings.Join(eps, " "); got != "code:2 ops:3" {
		t.Errorf("Usage's endpoints = %q, want code:2 ops:3", got)
	}
	code, err := s.Usage(ctx, now.Add(-48*time.Hour), "code")
	if err != nil {
		t.Fatal(err)
	}
	if code.Endpoint != "code" || len(code.Calls) != 1 || code.Calls[0].Calls != 7 || len(code.Tokens) != 0 ||
		len(code.Endpoints) != 1 || code.Endpoints[0].Calls != 7 {
		t.Errorf("Usage through code over two days = %+v; want echo's 7 calls (5 rolled into their hour), no runs", code)
	}
	if none, _ := s.Usage(ctx, now.Add(-time.Hour), "nowhere"); len(none.Calls)+len(none.Endpoints)+len(none.Tokens) != 0 {
		t.Errorf("Usage through an endpoint without calls = %+v, want nothing", none)
	}
}
