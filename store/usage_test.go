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

// testUsageSeries: known calls in known minutes give the expected points:
// one-minute buckets over an hour in 60 points, three-minute ones in 20,
// each series split by server or tool, narrowed to one tool, and the
// bounds refused with their reason.
func testUsageSeries(t *testing.T, newDB func(*testing.T) string) {
	s := open(t, newDB(t))
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 30, 20, 0, time.UTC)
	minute := now.Truncate(time.Minute)
	batch := func(ago time.Duration, cs ...store.CallUsage) store.UsageBatch {
		return store.UsageBatch{Minute: minute.Add(-ago), Calls: cs}
	}
	ms := func(n int) map[time.Duration]int { return map[time.Duration]int{3 * time.Millisecond: n} }
	if err := s.RecordUsage(ctx, now,
		batch(0, calls("fx", "echo", 1, ms(4)), calls("gy", "add", 0, ms(1))),
		batch(2*time.Minute, calls("fx", "echo", 0, ms(2))),
		batch(59*time.Minute, calls("fx", "add", 2, ms(3))),
		batch(2*time.Hour, calls("fx", "echo", 0, ms(100))), // before the window
	); err != nil {
		t.Fatal(err)
	}
	type pt struct {
		Min           int // minutes before now's minute
		Calls, Errors int64
	}
	// nonzero is a series' points with calls, by minutes before now's.
	nonzero := func(ser store.UsageSeries) []pt {
		var out []pt
		for _, p := range ser.Points {
			if p.Calls > 0 {
				out = append(out, pt{int(minute.Sub(p.Time) / time.Minute), p.Calls, p.Errors})
			}
		}
		return out
	}
	read := func(q store.UsageSeriesQuery) *store.UsageSeriesReport {
		t.Helper()
		q.Since, q.Until = now.Add(-time.Hour), now
		r, err := s.UsageSeries(ctx, q)
		if err != nil {
			t.Fatalf("UsageSeries(%+v): %v", q, err)
		}
		return r
	}

	r := read(store.UsageSeriesQuery{Points: 60})
	if len(r.Series) != 1 || r.Series[0].Step != time.Minute || len(r.Series[0].Points) != 60 {
		t.Fatalf("an hour in 60 points: %d series, step %v, %d points; want 1, 1m0s, 60", len(r.Series), r.Series[0].Step, len(r.Series[0].Points))
	}
	if last := r.Series[0].Points[59].Time; !last.Equal(minute) {
		t.Errorf("the last point is at %v, want now's minute %v", last, minute)
	}
	if d := cmp.Diff([]pt{{59, 3, 2}, {2, 2, 0}, {0, 5, 1}}, nonzero(r.Series[0])); d != "" {
		t.Errorf("every call, by minute (-want +got):\n%s", d)
	}
	if p := r.Series[0].Points[59]; p.P50MS != 2.5+2.5*2.5/5 || p.P95MS != 2.5+2.5*4.75/5 {
		t.Errorf("now's percentiles: p50 %v p95 %v, want %v %v", p.P50MS, p.P95MS, 2.5+2.5*2.5/5, 2.5+2.5*4.75/5)
	}

	// Three-minute buckets: the last holds minutes -2 … 0.
	r = read(store.UsageSeriesQuery{Points: 20})
	if ser := r.Series[0]; ser.Step != 3*time.Minute || len(ser.Points) != 20 {
		t.Fatalf("an hour in 20 points: step %v, %d points; want 3m0s, 20", ser.Step, len(ser.Points))
	}
	if d := cmp.Diff([]pt{{59, 3, 2}, {2, 7, 1}}, nonzero(r.Series[0])); d != "" {
		t.Errorf("every call, by three minutes (-want +got):\n%s", d)
	}

	// Split by server and by tool; narrowed to a server's tool.
	r = read(store.UsageSeriesQuery{By: "server"})
	got := map[string][]pt{}
	for _, ser := range r.Series {
		got[ser.Key] = nonzero(ser)
	}
	if d := cmp.Diff(map[string][]pt{"fx": {{59, 3, 2}, {2, 2, 0}, {0, 4, 1}}, "gy": {{0, 1, 0}}}, got); d != "" {
		t.Errorf("by server (-want +got):\n%s", d)
	}
	r = read(store.UsageSeriesQuery{By: "tool", Server: "fx"})
	got = map[string][]pt{}
	for _, ser := range r.Series {
		got[ser.Key] = nonzero(ser)
	}
	if d := cmp.Diff(map[string][]pt{"fx/add": {{59, 3, 2}}, "fx/echo": {{2, 2, 0}, {0, 4, 1}}}, got); d != "" {
		t.Errorf("fx by tool (-want +got):\n%s", d)
	}
	r = read(store.UsageSeriesQuery{Server: "fx", Tool: "echo"})
	if d := cmp.Diff([]pt{{2, 2, 0}, {0, 4, 1}}, nonzero(r.Series[0])); d != "" {
		t.Errorf("fx's echo (-want +got):\n%s", d)
	}
	// No call: one series of zeros; by default, an hour in one-minute
	// buckets (61 minutes: the window reaches into its first).
	r = read(store.UsageSeriesQuery{Server: "nobody"})
	if len(r.Series) != 1 || len(nonzero(r.Series[0])) != 0 || len(r.Series[0].Points) != 61 || r.Series[0].Step != time.Minute {
		t.Errorf("no call: %d series, %d points with calls, %d points of %v; want 1, 0, 61 of 1m0s", len(r.Series), len(nonzero(r.Series[0])), len(r.Series[0].Points), r.Series[0].Step)
	}

	for _, q := range []store.UsageSeriesQuery{
		{Since: now.Add(-time.Hour), Until: now, Points: store.MaxUsagePoints + 1},
		{Since: now.Add(-time.Hour), Until: now, Points: -1},
		{Since: now, Until: now.Add(-time.Hour)},
		{Since: now.Add(-time.Hour), Until: now, By: "endpoint"},
	} {
		if _, err := s.UsageSeries(ctx, q); err == nil || !strings.Contains(err.Error(), "usage series") {
			t.Errorf("UsageSeries(%+v) = %v, want an error", q, err)
		}
	}
}
