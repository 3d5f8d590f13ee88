package store

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Usage: what the servers, tools, agents and workflows did, aggregated per
// minute, for `switchboard stats` and the API. Each row is one bucket of
// one series (a server's tool; an agent's or workflow's tokens): call and
// error counts and a latency histogram of fixed bounds (UsageLatencyBounds),
// so that any percentile over any span of buckets is read by adding rows.
// The size is bounded: minute rows older than UsageMinuteRetention are
// rolled into hour rows, and hour rows older than UsageHourRetention are
// dropped (RecordUsage does both).

// UsageLatencyBounds are the upper bounds of the latency histogram's
// buckets, in seconds; a last bucket holds what is slower. Changing them
// changes the stored format: add a migration.
var UsageLatencyBounds = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// Retention of the usage aggregates.
const (
	UsageMinuteRetention = 24 * time.Hour
	UsageHourRetention   = 30 * 24 * time.Hour
)

// resolutions of a usage row, its res column, in seconds.
const (
	resMinute = 60
	resHour   = 3600
)

// bucketCols are the latency histogram's columns: b00 … b16.
var bucketCols = func() []string {
	out := make([]string, len(UsageLatencyBounds)+1)
	for i := range out {
		out[i] = fmt.Sprintf("b%02d", i)
	}
	return out
}()

// CallUsage is one server's tool's calls in one bucket, through one named
// endpoint (Endpoint) or not through one ("").
type CallUsage struct {
	Endpoint     string
	Server, Tool string
	Calls        int64
	Errors       int64
	// Latency counts the calls by latency: Latency[i] those of at most
	// UsageLatencyBounds[i] (and more than the bound before), the last
	// those slower than every bound. Its length is len(UsageLatencyBounds)+1.
	Latency []int64
}

// Observe adds one call of duration d to u.
func (u *CallUsage) Observe(d time.Duration, failed bool) {
	if u.Latency == nil {
		u.Latency = make([]int64, len(UsageLatencyBounds)+1)
	}
	u.Calls++
	if failed {
		u.Errors++
	}
	s := d.Seconds()
	i := sort.SearchFloat64s(UsageLatencyBounds, s) // the first bound >= s
	u.Latency[i]++
}

// TokenUsage is one agent's or workflow's runs and tokens in one bucket.
type TokenUsage struct {
	Kind, Name    string // "agent" or "workflow"; its id
	Runs, Failed  int64
	Input, Output int64
}

// UsageBatch is what a recorder gathered for one minute: Minute is the
// minute's start.
type UsageBatch struct {
	Minute time.Time
	Calls  []CallUsage
	Tokens []TokenUsage
}

// RecordUsage adds the batches to the stored aggregates and, in the same
// transaction, rolls minute rows older than UsageMinuteRetention (as of
// now) into their hours and drops hour rows older than
// UsageHourRetention.
func (s *Store) RecordUsage(ctx context.Context, now time.Time, batches ...UsageBatch) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.errf(err, "recording usage")
	}
	defer tx.Rollback()
	callQ := `INSERT INTO usage_calls (bucket, res, endpoint, server, tool, calls, errors, ` + strings.Join(bucketCols, ", ") + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, ` + placeholders(8, len(bucketCols)) + `)
		ON CONFLICT (bucket, res, endpoint, server, tool) DO UPDATE SET ` + callsSum
	for _, b := range batches {
		minute := b.Minute.Truncate(time.Minute).Unix()
		for _, c := range b.Calls {
			if len(c.Latency) != len(bucketCols) {
				return fmt.Errorf("store: usage of server %q tool %q: %d latency buckets, want %d", c.Server, c.Tool, len(c.Latency), len(bucketCols))
			}
			args := []any{minute, resMinute, c.Endpoint, c.Server, c.Tool, c.Calls, c.Errors}
			for _, n := range c.Latency {
				args = append(args, n)
			}
			if _, err := tx.ExecContext(ctx, callQ, args...); err != nil {
				return s.errf(err, "recording the usage of server %q tool %q", c.Server, c.Tool)
			}
		}
		for _, t := range b.Tokens {
			if _, err := tx.ExecContext(ctx, `INSERT INTO usage_tokens (bucket, res, kind, name, runs, failed, input, output)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
				ON CONFLICT (bucket, res, kind, name) DO UPDATE SET `+tokensSum,
				minute, resMinute, t.Kind, t.Name, t.Runs, t.Failed, t.Input, t.Output); err != nil {
				return s.errf(err, "recording the usage of %s %q", t.Kind, t.Name)
			}
		}
	}
	minutes, hours := now.Add(-UsageMinuteRetention).Unix(), now.Add(-UsageHourRetention).Unix()
	for _, q := range []string{
		`INSERT INTO usage_calls (bucket, res, endpoint, server, tool, calls, errors, ` + strings.Join(bucketCols, ", ") + `)
			SELECT (bucket / 3600) * 3600, 3600, endpoint, server, tool, SUM(calls), SUM(errors), ` + sums(bucketCols) + `
			FROM usage_calls WHERE res = 60 AND bucket < $1 GROUP BY bucket / 3600, endpoint, server, tool
			ON CONFLICT (bucket, res, endpoint, server, tool) DO UPDATE SET ` + callsSum,
		`DELETE FROM usage_calls WHERE res = 60 AND bucket < $1`,
		`INSERT INTO usage_tokens (bucket, res, kind, name, runs, failed, input, output)
			SELECT (bucket / 3600) * 3600, 3600, kind, name, SUM(runs), SUM(failed), SUM(input), SUM(output)
			FROM usage_tokens WHERE res = 60 AND bucket < $1 GROUP BY bucket / 3600, kind, name
			ON CONFLICT (bucket, res, kind, name) DO UPDATE SET ` + tokensSum,
		`DELETE FROM usage_tokens WHERE res = 60 AND bucket < $1`,
	} {
		if _, err := tx.ExecContext(ctx, q, minutes); err != nil {
			return s.errf(err, "rolling usage up into hours")
		}
	}
	for _, table := range []string{"usage_calls", "usage_tokens"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE bucket < $1`, hours); err != nil {
			return s.errf(err, "dropping old usage")
		}
	}
	if err := tx.Commit(); err != nil {
		return s.errf(err, "recording usage")
	}
	return nil
}

// callsSum and tokensSum add a conflicting row's counts to the stored one's.
var (
	callsSum = func() string {
		var b strings.Builder
		b.WriteString("calls = usage_calls.calls + excluded.calls, errors = usage_calls.errors + excluded.errors")
		for _, c := range bucketCols {
			fmt.Fprintf(&b, ", %s = usage_calls.%s + excluded.%s", c, c, c)
		}
		return b.String()
	}()
	tokensSum = `runs = usage_tokens.runs + excluded.runs, failed = usage_tokens.failed + excluded.failed,
		input = usage_tokens.input + excluded.input, output = usage_tokens.output + excluded.output`
)

// placeholders is "$from, $from+1, …", n of them.
func placeholders(from, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", from+i)
	}
	return strings.Join(ps, ", ")
}

// sums is "SUM(c1), SUM(c2), …".
func sums(cols []string) string {
	ps := make([]string, len(cols))
	for i, c := range cols {
		ps[i] = "SUM(" + c + ")"
	}
	return strings.Join(ps, ", ")
}

// UsageReport is the usage since a time: `switchboard stats`, the API.
// Its JSON is stable (fields may be added, never changed in meaning).
type UsageReport struct {
	Since time.Time `json:"since"`
	// Endpoint is the named endpoint the report is narrowed to (Usage's
	// endpoint), or "" for every call.
	Endpoint string       `json:"endpoint,omitempty"`
	Calls    []CallStats  `json:"calls"` // by server, then tool
	Tokens   []TokenStats `json:"tokens"`
	// Endpoints are the calls made through each named endpoint, by name;
	// calls through the default endpoint, the API, agents and workflows
	// are in no endpoint's. Empty when no named endpoint had calls.
	Endpoints []EndpointStats `json:"endpoints,omitempty"`
}

// EndpointStats are the tool calls made through one named endpoint,
// whatever their server and tool, with percentiles as in CallStats.
type EndpointStats struct {
	Endpoint string  `json:"endpoint"`
	Calls    int64   `json:"calls"`
	Errors   int64   `json:"errors"`
	P50MS    float64 `json:"p50_ms"`
	P95MS    float64 `json:"p95_ms"`
	P99MS    float64 `json:"p99_ms"`
}

// CallStats are one server's tool's calls. The percentiles are read from
// the latency histogram (UsageLatencyBounds), interpolated within a
// bucket; a percentile among calls slower than every bound is the last
// bound.
type CallStats struct {
	Server string  `json:"server"`
	Tool   string  `json:"tool"`
	Calls  int64   `json:"calls"`
	Errors int64   `json:"errors"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
	P99MS  float64 `json:"p99_ms"`
}

// TokenStats are one agent's or workflow's runs and tokens.
type TokenStats struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Runs   int64  `json:"runs"`
	Failed int64  `json:"failed"`
	Input  int64  `json:"input_tokens"`
	Output int64  `json:"output_tokens"`
}

// Usage reports the usage recorded since since (to the minute; before the
// last UsageMinuteRetention, to the hour). With endpoint "" it reports
// every call and every run; with a named endpoint's name, only the calls
// made through that endpoint (Calls, Endpoints), and no Tokens: runs are
// not made through an endpoint.
func (s *Store) Usage(ctx context.Context, since time.Time, endpoint string) (*UsageReport, error) {
	r := &UsageReport{Since: since.UTC(), Endpoint: endpoint, Calls: []CallStats{}, Tokens: []TokenStats{}}
	from := since.Unix()
	where, args := `bucket >= $1`, []any{from}
	if endpoint != "" {
		where, args = `bucket >= $1 AND endpoint = $2`, []any{from, endpoint}
	}
	err := s.callStats(ctx, `SELECT server, tool, SUM(calls), SUM(errors), `+sums(bucketCols)+`
		FROM usage_calls WHERE `+where+` GROUP BY server, tool ORDER BY server, tool`, args, 2, func(key []string, c CallStats) {
		c.Server, c.Tool = key[0], key[1]
		r.Calls = append(r.Calls, c)
	})
	if err != nil {
		return nil, err
	}
	err = s.callStats(ctx, `SELECT endpoint, SUM(calls), SUM(errors), `+sums(bucketCols)+`
		FROM usage_calls WHERE `+where+` AND endpoint <> '' GROUP BY endpoint ORDER BY endpoint`, args, 1, func(key []string, c CallStats) {
		r.Endpoints = append(r.Endpoints, EndpointStats{Endpoint: key[0], Calls: c.Calls, Errors: c.Errors, P50MS: c.P50MS, P95MS: c.P95MS, P99MS: c.P99MS})
	})
	if err != nil {
		return nil, err
	}
	if endpoint != "" {
		return r, nil
	}
	trows, err := s.db.QueryContext(ctx, `SELECT kind, name, SUM(runs), SUM(failed), SUM(input), SUM(output)
		FROM usage_tokens WHERE bucket >= $1 GROUP BY kind, name ORDER BY kind, name`, from)
	if err != nil {
		return nil, s.errf(err, "reading usage")
	}
	defer trows.Close()
	for trows.Next() {
		var t TokenStats
		if err := trows.Scan(&t.Kind, &t.Name, &t.Runs, &t.Failed, &t.Input, &t.Output); err != nil {
			return nil, s.errf(err, "reading usage")
		}
		r.Tokens = append(r.Tokens, t)
	}
	if err := trows.Err(); err != nil {
		return nil, s.errf(err, "reading usage")
	}
	return r, nil
}

// callStats runs q, whose rows are nkeys text columns, then the calls,
// the errors and the latency histogram, and hands each row's keys and
// counts, percentiles read, to add.
func (s *Store) callStats(ctx context.Context, q string, args []any, nkeys int, add func(key []string, c CallStats)) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return s.errf(err, "reading usage")
	}
	defer rows.Close()
	for rows.Next() {
		var c CallStats
		key := make([]string, nkeys)
		hist := make([]int64, len(bucketCols))
		dst := make([]any, 0, nkeys+2+len(hist))
		for i := range key {
			dst = append(dst, &key[i])
		}
		dst = append(dst, &c.Calls, &c.Errors)
		for i := range hist {
			dst = append(dst, &hist[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return s.errf(err, "reading usage")
		}
		c.P50MS, c.P95MS, c.P99MS = quantileMS(hist, 0.50), quantileMS(hist, 0.95), quantileMS(hist, 0.99)
		add(key, c)
	}
	if err := rows.Err(); err != nil {
		return s.errf(err, "reading usage")
	}
	return nil
}

// quantileMS is the q-quantile of the histogram hist, in milliseconds,
// interpolated linearly within its bucket as Prometheus's
// histogram_quantile does.
func quantileMS(hist []int64, q float64) float64 {
	var total int64
	for _, n := range hist {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := q * float64(total)
	var cum int64
	for i, n := range hist {
		if float64(cum+n) < rank || n == 0 {
			cum += n
			continue
		}
		if i == len(UsageLatencyBounds) {
			return UsageLatencyBounds[i-1] * 1000 // slower than every bound
		}
		lower := 0.0
		if i > 0 {
			lower = UsageLatencyBounds[i-1]
		}
		upper := UsageLatencyBounds[i]
		v := lower + (upper-lower)*(rank-float64(cum))/float64(n)
		return math.Round(v*1e6) / 1e3
	}
	return UsageLatencyBounds[len(UsageLatencyBounds)-1] * 1000
}

// Usage over time: the same rows read as series of points, for the web
// UI's charts. A series has at most MaxUsagePoints points, each a bucket
// of whole minutes sized to fit the window in the points asked for.

// Bounds of a usage series.
const (
	DefaultUsagePoints = 120
	MaxUsagePoints     = 1000
	// MaxUsageSeries bounds the series of one read (one per server or
	// per tool): the first, by key, are kept and Truncated says so.
	MaxUsageSeries = 200
)

// UsageSeriesQuery says which calls a usage series counts and how.
type UsageSeriesQuery struct {
	// Since and Until bound the window; Until zero is now. The window
	// is cut into buckets of whole minutes, as few as cover it in Points,
	// ending with Until's minute (an hour row, older than
	// UsageMinuteRetention, counts in the bucket its hour starts in); the
	// first bucket starts before Since by less than a bucket, or after it
	// by less than a minute.
	Since, Until time.Time
	// Points is how many buckets at most: 0 is DefaultUsagePoints, at
	// most MaxUsagePoints.
	Points int
	// Endpoint, Server and Tool narrow the calls counted to those made
	// through a named endpoint, of a server, of a tool; "" is any.
	Endpoint, Server, Tool string
	// By splits the calls into one series per "server" or per "tool"
	// (server/tool); "" is one series of them all.
	By string
}

// UsagePoint is one bucket of a usage series: the calls that started in
// [Time, Time+Step), with percentiles as in CallStats.
type UsagePoint struct {
	Time   time.Time `json:"time"`
	Calls  int64     `json:"calls"`
	Errors int64     `json:"errors"`
	P50MS  float64   `json:"p50_ms"`
	P95MS  float64   `json:"p95_ms"`
}

// UsageSeries is one series of usage over time: every bucket of the
// window in order, those without calls zero.
type UsageSeries struct {
	// Key is the series' server, or server/tool (By); "" for all calls.
	Key    string        `json:"key"`
	Step   time.Duration `json:"step"`
	Points []UsagePoint  `json:"points"`
}

// UsageSeriesReport is what UsageSeries reads.
type UsageSeriesReport struct {
	Series []UsageSeries `json:"series"`
	// Truncated says that more than MaxUsageSeries series had calls.
	Truncated bool `json:"truncated,omitempty"`
}

// UsageSeries reads the calls recorded in a window as series of points
// (UsageSeriesQuery). A series of all calls (By "") is there even when
// no call was made, its points zero; a split one only for the keys that
// had calls.
func (s *Store) UsageSeries(ctx context.Context, q UsageSeriesQuery) (*UsageSeriesReport, error) {
	if q.Until.IsZero() {
		q.Until = time.Now()
	}
	if q.Points == 0 {
		q.Points = DefaultUsagePoints
	}
	if q.Points < 0 || q.Points > MaxUsagePoints {
		return nil, fmt.Errorf("store: usage series: points %d: give 1 to %d", q.Points, MaxUsagePoints)
	}
	if !q.Since.Before(q.Until) {
		return nil, fmt.Errorf("store: usage series: since %v is not before until %v", q.Since, q.Until)
	}
	var key string
	switch q.By {
	case "":
		key = `''`
	case "server":
		key = `server`
	case "tool":
		key = `server || '/' || tool`
	default:
		return nil, fmt.Errorf("store: usage series: by %q: give server, tool or nothing", q.By)
	}
	// The buckets, whole minutes each, as few as cover the window in
	// Points, go back from the end of Until's minute.
	window := int64(q.Until.Sub(q.Since).Seconds())
	step := max((window+int64(q.Points)-1)/int64(q.Points), 1)
	step = (step + resMinute - 1) / resMinute * resMinute
	end := q.Until.Truncate(time.Minute).Add(time.Minute).Unix()
	n := min((end-q.Since.Unix()+step-1)/step, int64(q.Points))
	start := end - n*step

	where, args := `bucket >= $1 AND bucket < $2`, []any{start, end, step}
	for _, f := range []struct{ col, v string }{{"endpoint", q.Endpoint}, {"server", q.Server}, {"tool", q.Tool}} {
		if f.v != "" {
			args = append(args, f.v)
			where += fmt.Sprintf(` AND %s = $%d`, f.col, len(args))
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+key+`, (bucket - $1) / $3, SUM(calls), SUM(errors), `+sums(bucketCols)+`
		FROM usage_calls WHERE `+where+` GROUP BY 1, 2 ORDER BY 1, 2`, args...)
	if err != nil {
		return nil, s.errf(err, "reading usage series")
	}
	defer rows.Close()
	r := &UsageSeriesReport{Series: []UsageSeries{}}
	newSeries := func(k string) UsageSeries {
		ser := UsageSeries{Key: k, Step: time.Duration(step) * time.Second, Points: make([]UsagePoint, n)}
		for i := range ser.Points {
			ser.Points[i].Time = time.Unix(start+int64(i)*step, 0).UTC()
		}
		return ser
	}
	for rows.Next() {
		var (
			k    string
			i    int64
			p    UsagePoint
			hist = make([]int64, len(bucketCols))
		)
		dst := []any{&k, &i, &p.Calls, &p.Errors}
		for j := range hist {
			dst = append(dst, &hist[j])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, s.errf(err, "reading usage series")
		}
		if len(r.Series) == 0 || r.Series[len(r.Series)-1].Key != k {
			if len(r.Series) == MaxUsageSeries {
				r.Truncated = true
				break
			}
			r.Series = append(r.Series, newSeries(k))
		}
		if i < 0 || i >= n {
			continue
		}
		p.Time = r.Series[len(r.Series)-1].Points[i].Time
		p.P50MS, p.P95MS = quantileMS(hist, 0.50), quantileMS(hist, 0.95)
		r.Series[len(r.Series)-1].Points[i] = p
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf(err, "reading usage series")
	}
	if q.By == "" && len(r.Series) == 0 {
		r.Series = append(r.Series, newSeries(""))
	}
	return r, nil
}
