package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/store"
)

// BenchmarkUsageSeries reads usage series from a SQLite store holding a
// full day of minute rows (what UsageMinuteRetention keeps) for 20
// servers of 5 tools each: 144,000 rows. The reads are the web UI's: the
// Usage page's chart over an hour and over a day, one tool's over a day,
// and the servers page's sparklines (an hour, by server); and, to compare,
// the report (Usage) over the day, which the Usage page's table reads.
func BenchmarkUsageSeries(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "state.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var batches []store.UsageBatch
	for m := range 24 * 60 {
		ub := store.UsageBatch{Minute: now.Add(-time.Duration(m) * time.Minute)}
		for srv := range 20 {
			for tool := range 5 {
				u := store.CallUsage{Server: fmt.Sprintf("server%02d", srv), Tool: fmt.Sprintf("tool%d", tool)}
				u.Observe(time.Duration(1+m%50)*time.Millisecond, m%7 == 0)
				ub.Calls = append(ub.Calls, u)
			}
		}
		batches = append(batches, ub)
	}
	if err := s.RecordUsage(ctx, now, batches...); err != nil {
		b.Fatal(err)
	}
	// The report over the same day, for comparison: the Usage page's table.
	b.Run("report_day", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Usage(ctx, now.Add(-24*time.Hour), ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		q    store.UsageSeriesQuery
	}{
		{"hour", store.UsageSeriesQuery{Since: now.Add(-time.Hour)}},
		{"day", store.UsageSeriesQuery{Since: now.Add(-24 * time.Hour)}},
		{"day_one_tool", store.UsageSeriesQuery{Since: now.Add(-24 * time.Hour), Server: "server07", Tool: "tool3"}},
		{"hour_by_server", store.UsageSeriesQuery{Since: now.Add(-time.Hour), Points: 60, By: "server"}},
	} {
		c.q.Until = now
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r, err := s.UsageSeries(ctx, c.q)
				if err != nil || len(r.Series) == 0 {
					b.Fatalf("%+v, %v", r, err)
				}
			}
		})
	}
}
