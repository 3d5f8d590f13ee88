package ui

import (
	"bytes"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/workflow"
)

// charts is templates/charts.html alone, with the functions it uses.
func charts(t *testing.T) *template.Template {
	t.Helper()
	return template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/charts.html"))
}

func draw(t *testing.T, name string, data any) string {
	t.Helper()
	var b bytes.Buffer
	if err := charts(t).ExecuteTemplate(&b, name, data); err != nil {
		t.Fatalf("drawing %s: %v", name, err)
	}
	return b.String()
}

var marker = regexp.MustCompile(`<path class="marker" d="M([0-9.]+) ([0-9.]+)[^"]*" data-t="(\d+)" data-v="([0-9.]+)"/>`)

// TestLineChart: each non-zero value is a marker at its time and value,
// placed on the plot by them (the highest at the top, times evenly
// apart), in the series' style; the table has every value; the y axis
// ends at a round number; the description says the totals.
func TestLineChart(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	times := []time.Time{t0, t0.Add(time.Minute), t0.Add(2 * time.Minute), t0.Add(3 * time.Minute)}
	c := newLineChart("c1", "Calls", times, count, lineSeries{"calls", []float64{0, 3, 7, 1}}, lineSeries{"errors", []float64{0, 1, 0, 0}})
	out := draw(t, "line-chart", c)

	type pt struct {
		T    int64
		V    float64
		X, Y float64
	}
	var got []pt
	for _, m := range marker.FindAllStringSubmatch(out, -1) {
		T, _ := strconv.ParseInt(m[3], 10, 64)
		v, _ := strconv.ParseFloat(m[4], 64)
		got = append(got, pt{T: T, V: v})
	}
	want := []pt{{T: times[1].Unix(), V: 3}, {T: times[2].Unix(), V: 7}, {T: times[3].Unix(), V: 1}, {T: times[1].Unix(), V: 1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("markers (-want +got):\n%s\n%s", d, out)
	}
	// The y axis goes to 10 (7 rounded up); 7 is 70% of the way up.
	top, bottom := c.Y0, c.Y1
	if p := c.Series[0].Points[1]; p.Y != round1(bottom-(bottom-top)*0.7) || p.X != round1(c.X0+(c.X1-c.X0)*2/3) {
		t.Errorf("7 at the third of four times is drawn at %v,%v, want %v,%v", p.X, p.Y, round1(c.X0+(c.X1-c.X0)*2/3), round1(bottom-(bottom-top)*0.7))
	}
	var ticks []string
	for _, tk := range c.YTicks {
		ticks = append(ticks, tk.Label)
	}
	if d := cmp.Diff([]string{"0", "2", "4", "6", "8", "10"}, ticks); d != "" || c.YTicks[len(c.YTicks)-1].Pos != top {
		t.Errorf("the y axis's ticks (-want +got), the last at %v, want the top %v:\n%s", c.YTicks[len(c.YTicks)-1].Pos, top, d)
	}
	// Latencies: round ticks, in the unit given.
	for _, c := range []struct {
		peak float64
		want []string
	}{{0.9, []string{"0.0 ms", "0.2 ms", "0.4 ms", "0.6 ms", "0.8 ms", "1.0 ms"}}, {1.7, []string{"0.0 ms", "0.5 ms", "1.0 ms", "1.5 ms", "2.0 ms"}}, {3, []string{"0.0 ms", "1.0 ms", "2.0 ms", "3.0 ms", "4.0 ms", "5.0 ms"}}} {
		lc := newLineChart("l", "Latency", times[:2], millis, lineSeries{"p50", []float64{0.1, c.peak}})
		var got []string
		for _, tk := range lc.YTicks {
			got = append(got, tk.Label)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("ticks up to %v (-want +got):\n%s", c.peak, d)
		}
	}
	if c.Series[0].Dash == c.Series[1].Dash || c.Series[0].Marker == c.Series[1].Marker {
		t.Errorf("two series look alike but for colour: %+v %+v", c.Series[0], c.Series[1])
	}
	for _, s := range []string{`<svg role="img" aria-labelledby="c1-title c1-desc"`, `<title id="c1-title">Calls</title>`,
		`calls: 11 in all, at most 7 in one point; errors: 1 in all`, `stroke-dasharray="6 3"`,
		`<tr><th scope="row">` + times[2].UTC().Format("2006-01-02 15:04") + `</th><td>7</td><td>0</td></tr>`} {
		if !strings.Contains(out, s) {
			t.Errorf("the chart has no %s:\n%s", s, out)
		}
	}
}

// TestChartEscapes: a server's or a tool's name is text in the SVG and in
// the table, never markup.
func TestChartEscapes(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	evil := `x"><script>alert(1)</script>`
	c := newLineChart("c1", "Calls of "+evil, []time.Time{t0}, count, lineSeries{evil, []float64{1}})
	tl := newTimeline("t1", "Run "+evil, []workflow.Event{
		{Type: workflow.EventRunStarted, Time: t0},
		{Type: workflow.EventStepStarted, Step: evil, Attempt: 1, Time: t0},
		{Type: workflow.EventStepCompleted, Step: evil, Time: t0.Add(time.Second)},
	}, t0.Add(time.Second))
	for _, out := range []string{draw(t, "line-chart", c), draw(t, "timeline", tl),
		draw(t, "sparkline", newSparkline("server "+evil, time.Hour, []int64{1}, []int64{0}))} {
		if strings.Contains(out, "<script>") || strings.Contains(out, `x">`) {
			t.Errorf("a name is drawn as markup:\n%s", out)
		}
		if !strings.Contains(out, "&lt;script&gt;") {
			t.Errorf("a name is not drawn escaped:\n%s", out)
		}
	}
}

// TestChartBounds: past maxChartPoints the newest are drawn, past
// maxChartSeries the first, and the description says what is left out;
// a timeline draws at most maxTimelineRows steps.
func TestChartBounds(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	n := maxChartPoints + 10
	times := make([]time.Time, n)
	vs := make([]float64, n)
	for i := range times {
		times[i], vs[i] = t0.Add(time.Duration(i)*time.Minute), float64(i)
	}
	var series []lineSeries
	for i := range maxChartSeries + 1 {
		series = append(series, lineSeries{"s" + strconv.Itoa(i), vs})
	}
	c := newLineChart("c", "Many", times, count, series...)
	if len(c.Series) != maxChartSeries || len(c.Rows) != maxChartPoints || len(c.Series[0].Points) != maxChartPoints {
		t.Errorf("%d series, %d rows, %d points; want %d, %d, %d", len(c.Series), len(c.Rows), len(c.Series[0].Points), maxChartSeries, maxChartPoints, maxChartPoints)
	}
	if first := c.Series[0].Points[0]; first.T != times[10].Unix() || first.V != 10 {
		t.Errorf("the first point drawn is %+v, want the 11th", first)
	}
	if !strings.Contains(c.Desc, "The 10 oldest points are left out.") || !strings.Contains(c.Desc, "Not drawn: s4.") {
		t.Errorf("the description does not say what is left out: %s", c.Desc)
	}

	var evs []workflow.Event
	for i := range maxTimelineRows + 5 {
		step := "s" + strconv.Itoa(i)
		evs = append(evs, workflow.Event{Type: workflow.EventStepStarted, Step: step, Attempt: 1, Time: t0},
			workflow.Event{Type: workflow.EventStepCompleted, Step: step, Time: t0.Add(time.Second)})
	}
	tl := newTimeline("t", "Many", evs, t0.Add(time.Second))
	if len(tl.Rows) != maxTimelineRows || len(tl.Bars) != maxTimelineRows || !strings.Contains(tl.Desc, "Left out: 5 steps") {
		t.Errorf("%d rows, %d bars, %q; want %d, %d and the steps left out", len(tl.Rows), len(tl.Bars), tl.Desc, maxTimelineRows, maxTimelineRows)
	}
}

// TestTimeline: a bar per attempt from its start to its end, a gate's wait
// from gate:waiting to its answer (hatched, labelled), a retry and a
// failure marked by a symbol and a word; a step still running is drawn
// to the end given.
func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	evs := []workflow.Event{
		{Type: workflow.EventRunStarted, Time: at(0)},
		{Type: workflow.EventStepStarted, Step: "fetch", Attempt: 1, Time: at(0)},
		{Type: workflow.EventStepFailed, Step: "fetch", Attempt: 1, Time: at(1), Error: &workflow.RunError{Code: "call_failed", Message: "boom"}},
		{Type: workflow.EventStepStarted, Step: "fetch", Attempt: 2, Time: at(2)},
		{Type: workflow.EventStepCompleted, Step: "fetch", Time: at(3)},
		{Type: workflow.EventGateWaiting, Step: "approve", Time: at(3)},
		{Type: workflow.EventGateAnswered, Step: "approve", Action: "accept", Time: at(8)},
		{Type: workflow.EventStepStarted, Step: "send", Attempt: 1, Time: at(8)},
	}
	tl := newTimeline("t", "Run", evs, at(10))
	type bar struct {
		Step, Kind     string
		StartMS, DurMS int64
	}
	var got []bar
	for _, b := range tl.Bars {
		got = append(got, bar{b.Step, b.Kind, b.StartMS, b.DurMS})
	}
	want := []bar{{"fetch", "failed", 0, 1000}, {"fetch", "step", 2000, 1000}, {"approve", "gate", 3000, 5000}, {"send", "running", 8000, 2000}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bars (-want +got):\n%s", d)
	}
	// Positions: the gate's bar spans half the axis, from 30%.
	g := tl.Bars[2]
	if span := tl.X1 - tl.X0; g.X != round1(tl.X0+span*0.3) || g.W != round1(span*0.5) {
		t.Errorf("the gate's bar is at %v, %v wide; want %v, %v", g.X, g.W, round1(tl.X0+span*0.3), round1(span*0.5))
	}
	var marks []string
	for _, m := range tl.Marks {
		marks = append(marks, m.Symbol+" "+m.Text)
	}
	if d := cmp.Diff([]string{"✕ failed", "↻ retry 2"}, marks); d != "" {
		t.Errorf("marks (-want +got):\n%s", d)
	}
	out := draw(t, "timeline", tl)
	for _, s := range []string{`fill="url(#t-hatch)" data-step="approve" data-kind="gate"`, `<title>approve: gate: accept after 5.0s</title>`,
		`✕ failed`, `↻ retry 2`, `>approve — gate: accept after 5.0s</text>`, `>send</text>`, `3 steps over 10.0s: 4 bars, 1 waits at a gate, 1 retries, 1 failures.`} {
		if !strings.Contains(out, s) {
			t.Errorf("the timeline has no %s:\n%s", s, out)
		}
	}
}

// TestSparkline: the totals are in its label and data attributes; the
// highest value touches the top.
func TestSparkline(t *testing.T) {
	s := newSparkline("server a", time.Hour, []int64{0, 4, 2}, []int64{0, 1, 0})
	if s.TotalCalls != 6 || s.TotalErrors != 1 || s.Label != "server a: 6 calls, 1 errors in the last 1h" {
		t.Errorf("sparkline %+v", s)
	}
	if s.Calls != "1,26 60,2 119,14" {
		t.Errorf("calls drawn as %q", s.Calls)
	}
	out := draw(t, "sparkline", s)
	if !strings.Contains(out, `role="img" aria-label="server a: 6 calls, 1 errors in the last 1h"`) || !strings.Contains(out, `data-calls="6" data-errors="1"`) {
		t.Errorf("sparkline drawn as %s", out)
	}
}

// TestTaskTimeline: a task that went working → input_required → working
// → completed has a bar per span (the wait hatched), the end a ✓ and a
// word on a row of its own; one still waiting has its last bar open until
// now.
func TestTaskTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	hist := []taskStatus{{Status: "working", At: at(0)}, {Status: "input_required", Message: "Delete a.txt?", At: at(1)},
		{Status: "working", At: at(6)}, {Status: "completed", At: at(10)}}
	tl := taskTimeline("t", "Task", hist, at(100))
	type bar struct {
		Step, Kind     string
		StartMS, DurMS int64
	}
	var got []bar
	for _, b := range tl.Bars {
		got = append(got, bar{b.Step, b.Kind, b.StartMS, b.DurMS})
	}
	want := []bar{{"working", "step", 0, 1000}, {"input_required", "gate", 1000, 5000}, {"working", "step", 6000, 4000}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bars (-want +got):\n%s", d)
	}
	if g := tl.Bars[1]; g.X != round1(tl.X0+(tl.X1-tl.X0)*0.1) || g.W != round1((tl.X1-tl.X0)*0.5) || g.Y == tl.Bars[0].Y {
		t.Errorf("the wait's bar is at %v, %v wide, row %v; want from 10%%, half the axis, a row of its own", g.X, g.W, g.Y)
	}
	if len(tl.Marks) != 1 || tl.Marks[0].Symbol != "✓" || tl.Marks[0].X != tl.X1 || !tl.Marks[0].End || len(tl.Rows) != 3 {
		t.Errorf("marks %+v, rows %+v; want ✓ at the end, on a third row", tl.Marks, tl.Rows)
	}
	out := draw(t, "timeline", tl)
	for _, s := range []string{`fill="url(#t-hatch)" data-step="input_required" data-kind="gate"`,
		`<title>input_required: input_required (Delete a.txt?) for 5.0s</title>`, `text-anchor="end">✓ completed after 10.0s</text>`,
		`>waiting for input (hatched)</li>`, `3 status changes over 10.0s: 3 spans, 1 waits for input, then completed.`} {
		if !strings.Contains(out, s) {
			t.Errorf("the timeline has no %s:\n%s", s, out)
		}
	}

	waiting := taskTimeline("t", "Task", hist[:2], at(4))
	if b := waiting.Bars[len(waiting.Bars)-1]; b.Kind != "waiting" || b.DurMS != 3000 || len(waiting.Marks) != 0 {
		t.Errorf("a task still waiting: last bar %+v, marks %+v; want it waiting for 3s so far", b, waiting.Marks)
	}
	if empty := taskTimeline("t", "Task", nil, at(0)); len(empty.Bars) != 0 || empty.Desc == "" {
		t.Errorf("no history: %+v", empty)
	}
}
