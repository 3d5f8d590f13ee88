package ui

// Charts (issue 32 §1): the geometry of the few pictures the pages draw,
// computed here and drawn as inline SVG by templates/charts.html, so that
// html/template escapes every label as it does the rest of the page. No
// script and no library: a chart is an <svg role="img"> with a <title>
// and a <desc> saying what it shows, axes with labels, and its series
// told apart by dash pattern and marker shape as well as colour (the
// colours are the stylesheet's variables, so they follow a dark or light
// preference); the same numbers are in a <table> beside it, in a
// <details>, for a screen reader and for anyone who would rather read.
//
//   - lineChart: values over time (the Usage page's calls and errors,
//     latency p50 and p95), one marker per point with calls, each marker
//     carrying its time and value as data-t and data-v;
//   - sparkline: a server's calls and errors over the last hour, small,
//     its totals in its label;
//   - runTimeline: a run's steps as bars on a time axis, a wait at a gate
//     drawn hatched and labelled, a retry and a failure marked with a
//     symbol and a word; a task's statuses the same way (taskTimeline).

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/workflow"
)

// Bounds of a chart: what is beyond them is left out, and its <desc>
// says so.
const (
	maxChartPoints   = 1000 // per series: the newest are kept
	maxChartSeries   = 4    // as many as there are distinct styles
	maxTimelineRows  = 100  // steps (and for_each items) of a timeline
	maxTimelineBars  = 500  // bars of a timeline, every row's
	chartW, chartH   = 480, 200
	chartL, chartR   = 52, 8   // the plot's left and right margins
	chartT, chartB   = 10, 28  // its top and bottom margins
	sparkW, sparkH   = 120, 28 // a sparkline's box
	timelineRowH     = 30      // a timeline's row: its label, then its bars
	timelineBarH     = 12
	timelineMinBarPx = 2 // an instant step is still seen
)

// seriesStyles tell a chart's series apart without colour: the n-th
// series is drawn with the n-th dash pattern and marker.
var seriesStyles = []struct{ Dash, Marker string }{
	{"", "circle"}, {"6 3", "square"}, {"2 3", "triangle"}, {"8 3 2 3", "diamond"},
}

// chartTick is a label on an axis at Pos (in the viewBox's units).
type chartTick struct {
	Pos   float64
	Label string
}

// chartPoint is one value of a series where it is drawn.
type chartPoint struct {
	X, Y  float64
	T     int64 // its time, Unix seconds
	V     float64
	Shape string // the marker's SVG path, centred on X, Y
}

// chartSeries is one line of a chart.
type chartSeries struct {
	Name   string
	Class  string // s0 … s3: its colour in the stylesheet
	Dash   string // stroke-dasharray, "" for solid
	Marker string // circle, square, triangle, diamond
	Line   string // the polyline's points
	Points []chartPoint
	Swatch string // the legend's marker path, in a 24×12 box
}

// chartRow is one line of a chart's table: a time and a value per series.
type chartRow struct {
	Label  string
	Values []string
}

// lineChart is a chart of values over time.
type lineChart struct {
	ID, Title, Desc string
	W, H            int
	X0, Y0, X1, Y1  float64 // the plot's box
	XTicks, YTicks  []chartTick
	Series          []chartSeries
	Head            []string // the table's columns: time, then each series
	Rows            []chartRow
}

// lineSeries is a series given to newLineChart: a value per time.
type lineSeries struct {
	Name   string
	Values []float64
}

// newLineChart lays out series over times (one value each per time, in
// order; their labels in UTC, as the page's other times), the values formatted by format: in the table, on the y axis and
// in the description. Only the newest maxChartPoints times and the first
// maxChartSeries series are drawn.
func newLineChart(id, title string, times []time.Time, format func(float64) string, series ...lineSeries) lineChart {
	c := lineChart{ID: id, Title: title, W: chartW, H: chartH,
		X0: chartL, Y0: chartT, X1: chartW - chartR, Y1: chartH - chartB}
	var left []string
	if len(series) > maxChartSeries {
		for _, s := range series[maxChartSeries:] {
			left = append(left, s.Name)
		}
		series = series[:maxChartSeries]
	}
	cut := 0
	if len(times) > maxChartPoints {
		cut = len(times) - maxChartPoints
		times = times[cut:]
	}
	vmax := 0.0
	for i := range series {
		vs := series[i].Values
		if len(vs) > cut {
			vs = vs[cut:]
		} else {
			vs = nil
		}
		if len(vs) > len(times) {
			vs = vs[:len(times)]
		}
		series[i].Values = vs
		for _, v := range vs {
			vmax = max(vmax, v)
		}
	}
	ymax, integral := niceCeil(vmax), true
	for _, s := range series {
		for _, v := range s.Values {
			integral = integral && v == math.Trunc(v)
		}
	}
	if (integral && ymax < 1) || ymax <= 0 {
		ymax = 1
	}
	x := func(i int) float64 {
		if len(times) < 2 {
			return (c.X0 + c.X1) / 2
		}
		return round1(c.X0 + (c.X1-c.X0)*float64(i)/float64(len(times)-1))
	}
	y := func(v float64) float64 { return round1(c.Y1 - (c.Y1-c.Y0)*v/ymax) }

	// Ticks at round values: fifths of 1 or 5 (× a power of ten),
	// quarters of 2.
	div := 5
	if m := ymax / math.Pow(10, math.Floor(math.Log10(ymax))); math.Abs(m-2) < 1e-9 {
		div = 4
	}
	for i := 0; i <= div; i++ {
		v := ymax * float64(i) / float64(div)
		if integral && math.Abs(v-math.Round(v)) > 1e-9 {
			continue
		}
		c.YTicks = append(c.YTicks, chartTick{Pos: y(v), Label: format(v)})
	}
	if len(times) > 0 {
		span := times[len(times)-1].Sub(times[0])
		layout := "15:04"
		if span > 24*time.Hour {
			layout = "Jan 2 15:04"
		}
		n := min(len(times), 5)
		for k := 0; k < n; k++ {
			i := 0
			if n > 1 {
				i = k * (len(times) - 1) / (n - 1)
			}
			c.XTicks = append(c.XTicks, chartTick{Pos: x(i), Label: times[i].UTC().Format(layout)})
		}
	}

	c.Head = []string{"Time (UTC)"}
	var desc []string
	for si, s := range series {
		st := seriesStyles[si]
		cs := chartSeries{Name: s.Name, Class: "s" + strconv.Itoa(si), Dash: st.Dash, Marker: st.Marker, Swatch: markerPath(st.Marker, 12, 6)}
		var line []string
		total, peak := 0.0, 0.0
		for i, v := range s.Values {
			px, py := x(i), y(v)
			line = append(line, fmt.Sprintf("%g,%g", px, py))
			total += v
			peak = max(peak, v)
			if v != 0 {
				cs.Points = append(cs.Points, chartPoint{X: px, Y: py, T: times[i].Unix(), V: v, Shape: markerPath(st.Marker, px, py)})
			}
		}
		cs.Line = strings.Join(line, " ")
		c.Series = append(c.Series, cs)
		c.Head = append(c.Head, s.Name)
		if integral {
			desc = append(desc, fmt.Sprintf("%s: %s in all, at most %s in one point", s.Name, format(total), format(peak)))
		} else {
			desc = append(desc, fmt.Sprintf("%s: at most %s", s.Name, format(peak)))
		}
	}
	for i, t := range times {
		r := chartRow{Label: t.UTC().Format("2006-01-02 15:04")}
		for _, s := range series {
			r.Values = append(r.Values, format(s.Values[i]))
		}
		c.Rows = append(c.Rows, r)
	}
	c.Desc = fmt.Sprintf("%d points", len(times))
	if len(times) > 0 {
		c.Desc += fmt.Sprintf(" from %s to %s UTC", times[0].UTC().Format("2006-01-02 15:04"), times[len(times)-1].UTC().Format("2006-01-02 15:04"))
	}
	if len(desc) > 0 {
		c.Desc += ". " + strings.Join(desc, "; ")
	}
	c.Desc += "."
	if cut > 0 {
		c.Desc += fmt.Sprintf(" The %d oldest points are left out.", cut)
	}
	if len(left) > 0 {
		c.Desc += " Not drawn: " + strings.Join(left, ", ") + "."
	}
	return c
}

// markerPath is the SVG path of a marker of shape centred on x, y.
func markerPath(shape string, x, y float64) string {
	const r = 3.5
	switch shape {
	case "square":
		return fmt.Sprintf("M%g %gh%gv%gh%gz", round1(x-r+0.5), round1(y-r+0.5), 2*r-1, 2*r-1, -(2*r - 1))
	case "triangle":
		return fmt.Sprintf("M%g %gl%g %gh%gz", round1(x), round1(y-r), r, 2*r, -2*r)
	case "diamond":
		return fmt.Sprintf("M%g %gl%g %gl%g %gl%g %gz", round1(x), round1(y-r), r, r, -r, r, -r, -r)
	default: // circle, as two arcs
		return fmt.Sprintf("M%g %ga%g %g 0 1 0 %g 0a%g %g 0 1 0 %g 0", round1(x-r), round1(y), r, r, 2*r, r, r, -2*r)
	}
}

// niceCeil is the smallest of 1, 2, 5 times a power of ten at least v
// (0 for 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*p >= v*(1-1e-12) {
			return f * p
		}
	}
	return 10 * p
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// count formats a count for a chart.
func count(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// sparkline is a small chart of a server's calls and errors, with no axes:
// its label says the totals.
type sparkline struct {
	W, H          int
	Calls, Errors string // the polylines' points
	Label         string
	TotalCalls    int64
	TotalErrors   int64
}

// newSparkline draws calls and errors (one value per bucket, the same
// number of each) of what, over span.
func newSparkline(what string, span time.Duration, calls, errors []int64) sparkline {
	s := sparkline{W: sparkW, H: sparkH}
	peak := int64(1)
	for i := range calls {
		peak = max(peak, calls[i])
		s.TotalCalls += calls[i]
		if i < len(errors) {
			peak = max(peak, errors[i])
			s.TotalErrors += errors[i]
		}
	}
	line := func(vs []int64) string {
		var ps []string
		for i, v := range vs {
			x := float64(sparkW) / 2
			if len(vs) > 1 {
				x = float64(sparkW-2)*float64(i)/float64(len(vs)-1) + 1
			}
			y := float64(sparkH-2) - float64(sparkH-4)*float64(v)/float64(peak)
			ps = append(ps, fmt.Sprintf("%g,%g", round1(x), round1(y)))
		}
		return strings.Join(ps, " ")
	}
	s.Calls, s.Errors = line(calls), line(errors)
	s.Label = fmt.Sprintf("%s: %d calls, %d errors in the last %s", what, s.TotalCalls, s.TotalErrors, shortDuration(span))
	return s
}

// shortDuration is d without its zero units: 1h, 90m, 24h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// timelineBar is one span of a step on a run's timeline.
type timelineBar struct {
	X, Y, W, H float64
	Kind       string // step, gate, skipped, failed, interrupted, running, waiting
	Step       string // its key: the step, /item in a for_each
	Attempt    int
	Text       string // what it was, in words: "gate: accept after 2.1s"
	StartMS    int64  // from the run's start
	DurMS      int64
}

// timelineMark is a symbol and a word beside a bar: a retry, a failure.
type timelineMark struct {
	X, Y   float64
	Symbol string
	Text   string
	// End: the mark is at the end of its text (an end at the axis's end).
	End bool
}

// timelineRow is a step's row: its label above its bars.
type timelineRow struct {
	Y     float64
	Label string
}

// timeline is a run's steps as bars on a time axis.
type timeline struct {
	ID, Title, Desc string
	W, H            int
	X0, X1          float64
	AxisY           float64
	XTicks          []chartTick
	Rows            []timelineRow
	Bars            []timelineBar
	Marks           []timelineMark
	// Task: the rows are a task's statuses (taskTimeline), not a run's
	// steps.
	Task bool
}

// newTimeline lays out a run's events: a bar per attempt of a step (from
// step:started to its end), per wait at a gate (gate:waiting to
// gate:answered), the last ones open until end (the run's end, or now).
// Rows are in the order their steps first appear; only the first
// maxTimelineRows and maxTimelineBars are drawn.
func newTimeline(id, title string, evs []workflow.Event, end time.Time) timeline {
	tl := timeline{ID: id, Title: title, W: chartW, X0: 8, X1: chartW - 8}
	if len(evs) == 0 {
		tl.H, tl.AxisY = 40, 10
		tl.Desc = "No events yet."
		return tl
	}
	t0 := evs[0].Time
	if end.Before(evs[len(evs)-1].Time) {
		end = evs[len(evs)-1].Time
	}
	total := end.Sub(t0)
	if total <= 0 {
		total = time.Millisecond
	}
	type open struct {
		at      time.Time
		kind    string
		attempt int
	}
	rowOf := map[string]int{}
	openOf := map[string]*open{}
	var keys []string
	dropped, droppedBars := 0, 0
	row := func(key string) (int, bool) {
		if i, ok := rowOf[key]; ok {
			return i, true
		}
		if len(keys) == maxTimelineRows {
			dropped++
			return 0, false
		}
		rowOf[key] = len(keys)
		keys = append(keys, key)
		return len(keys) - 1, true
	}
	xOf := func(t time.Time) float64 {
		return round1(tl.X0 + (tl.X1-tl.X0)*float64(t.Sub(t0))/float64(total))
	}
	yOf := func(r int) float64 { return float64(r*timelineRowH + 16) }
	var fails, retries, gates int
	closeBar := func(key string, at time.Time, kind, text string) {
		o := openOf[key]
		if o == nil {
			return
		}
		delete(openOf, key)
		r, ok := row(key)
		if !ok {
			return
		}
		if len(tl.Bars) == maxTimelineBars {
			droppedBars++
			return
		}
		if kind == "" {
			kind = o.kind
		}
		x0, x1 := xOf(o.at), xOf(at)
		b := timelineBar{X: x0, Y: yOf(r), W: max(round1(x1-x0), timelineMinBarPx), H: timelineBarH, Kind: kind, Step: key, Attempt: o.attempt,
			StartMS: o.at.Sub(t0).Milliseconds(), DurMS: at.Sub(o.at).Milliseconds()}
		b.Text = text
		if b.Text == "" {
			b.Text = kind
		}
		b.Text += " after " + shortMS(b.DurMS)
		tl.Bars = append(tl.Bars, b)
	}
	for i := range evs {
		ev := &evs[i]
		if ev.Step == "" {
			continue
		}
		key := gateKey(ev)
		switch ev.Type {
		case workflow.EventStepStarted:
			if _, ok := row(key); !ok {
				continue
			}
			openOf[key] = &open{at: ev.Time, kind: "running", attempt: max(ev.Attempt, 1)}
			if ev.Attempt > 1 {
				retries++
				r, _ := row(key)
				tl.Marks = append(tl.Marks, timelineMark{X: xOf(ev.Time), Y: yOf(r), Symbol: "↻", Text: "retry " + strconv.Itoa(ev.Attempt)})
			}
		case workflow.EventGateWaiting:
			if _, ok := row(key); !ok {
				continue
			}
			gates++
			openOf[key] = &open{at: ev.Time, kind: "waiting"}
		case workflow.EventGateAnswered:
			closeBar(key, ev.Time, "gate", "gate: "+ev.Action)
		case workflow.EventStepCompleted:
			if ev.Skipped {
				closeBar(key, ev.Time, "skipped", "skipped")
			} else {
				closeBar(key, ev.Time, "step", "completed")
			}
		case workflow.EventStepFailed:
			text := "failed"
			if ev.Continued {
				text = "failed, continued"
			}
			if r, ok := rowOf[key]; ok {
				fails++
				tl.Marks = append(tl.Marks, timelineMark{X: xOf(ev.Time), Y: yOf(r), Symbol: "✕", Text: text})
			}
			closeBar(key, ev.Time, "failed", text)
		case workflow.EventStepInterrupted:
			closeBar(key, ev.Time, "interrupted", "interrupted")
		}
	}
	// What is still open runs (or waits at its gate) until end.
	for _, key := range keys {
		if o := openOf[key]; o != nil {
			text := "running"
			if o.kind == "waiting" {
				text = "gate: waiting"
			}
			closeBar(key, end, o.kind, text+", so far")
		}
	}
	// A gate's row says, in words, how its wait ended (or that it goes
	// on).
	said := map[string]string{}
	for _, b := range tl.Bars {
		if b.Kind == "gate" || b.Kind == "waiting" {
			said[b.Step] = " — " + b.Text
		}
	}
	for i, k := range keys {
		tl.Rows = append(tl.Rows, timelineRow{Y: yOf(i) - 4, Label: k + said[k]})
	}
	tl.AxisY = yOf(len(keys)) - 2
	tl.H = int(tl.AxisY) + 18
	for k := 0; k <= 4; k++ {
		at := time.Duration(int64(total) * int64(k) / 4)
		tl.XTicks = append(tl.XTicks, chartTick{Pos: round1(tl.X0 + (tl.X1-tl.X0)*float64(k)/4), Label: shortMS(at.Milliseconds())})
	}
	tl.Desc = fmt.Sprintf("%d steps over %s: %d bars, %d waits at a gate, %d retries, %d failures.", len(keys), shortMS(total.Milliseconds()), len(tl.Bars), gates, retries, fails)
	if dropped > 0 || droppedBars > 0 {
		tl.Desc += fmt.Sprintf(" Left out: %d steps, %d bars.", dropped, droppedBars)
	}
	return tl
}

// shortMS is a duration in milliseconds for an axis: 850ms, 2.1s, 3m5s.
func shortMS(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	default:
		return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
	}
}

// A taskStatus is when a task came to a status (store.TaskStatusChange).
type taskStatus struct {
	Status, Message string
	At              time.Time
}

// taskTimeline lays out a task's status history (oldest first): a row
// per status it was in, a bar per span of it (working drawn as a step,
// input_required hatched as a wait at a gate), the last open until now
// when the task goes on; a status it ended in (completed, failed,
// cancelled) is a row of its own with a symbol and a word at its time.
func taskTimeline(id, title string, hist []taskStatus, now time.Time) timeline {
	tl := timeline{ID: id, Title: title, W: chartW, X0: 8, X1: chartW - 8, Task: true}
	if len(hist) == 0 {
		tl.H, tl.AxisY = 40, 10
		tl.Desc = "No status history kept."
		return tl
	}
	t0, end := hist[0].At, hist[len(hist)-1].At
	last := hist[len(hist)-1]
	ended := taskEndSymbol(last.Status) != ""
	if !ended && now.After(end) {
		end = now
	}
	total := end.Sub(t0)
	if total <= 0 {
		total = time.Millisecond
	}
	xOf := func(t time.Time) float64 {
		return round1(tl.X0 + (tl.X1-tl.X0)*float64(t.Sub(t0))/float64(total))
	}
	yOf := func(r int) float64 { return float64(r*timelineRowH + 16) }
	rowOf := map[string]int{}
	var keys []string
	row := func(status string) int {
		if i, ok := rowOf[status]; ok {
			return i
		}
		rowOf[status] = len(keys)
		keys = append(keys, status)
		return len(keys) - 1
	}
	waits := 0
	for i, c := range hist {
		if taskEndSymbol(c.Status) != "" {
			r := row(c.Status)
			tl.Marks = append(tl.Marks, timelineMark{X: xOf(c.At), Y: yOf(r), Symbol: taskEndSymbol(c.Status),
				Text: c.Status + " after " + shortMS(c.At.Sub(t0).Milliseconds()), End: c.At.Sub(t0) > total/2})
			continue
		}
		to, open := end, true
		if i+1 < len(hist) {
			to, open = hist[i+1].At, false
		}
		kind := "step"
		if c.Status == "input_required" {
			kind, waits = "gate", waits+1
		}
		text := c.Status
		if open {
			kind = map[string]string{"step": "running", "gate": "waiting"}[kind]
			text += ", so far"
		}
		if c.Message != "" {
			text += " (" + c.Message + ")"
		}
		x0, x1 := xOf(c.At), xOf(to)
		tl.Bars = append(tl.Bars, timelineBar{X: x0, Y: yOf(row(c.Status)), W: max(round1(x1-x0), timelineMinBarPx), H: timelineBarH,
			Kind: kind, Step: c.Status, Text: text + " for " + shortMS(to.Sub(c.At).Milliseconds()),
			StartMS: c.At.Sub(t0).Milliseconds(), DurMS: to.Sub(c.At).Milliseconds()})
	}
	for i, k := range keys {
		tl.Rows = append(tl.Rows, timelineRow{Y: yOf(i) - 4, Label: k})
	}
	tl.AxisY = yOf(len(keys)) - 2
	tl.H = int(tl.AxisY) + 18
	for k := 0; k <= 4; k++ {
		at := time.Duration(int64(total) * int64(k) / 4)
		tl.XTicks = append(tl.XTicks, chartTick{Pos: round1(tl.X0 + (tl.X1-tl.X0)*float64(k)/4), Label: shortMS(at.Milliseconds())})
	}
	tl.Desc = fmt.Sprintf("%d status changes over %s: %d spans, %d waits for input", len(hist)-1, shortMS(total.Milliseconds()), len(tl.Bars), waits)
	if ended {
		tl.Desc += ", then " + last.Status + "."
	} else {
		tl.Desc += "; " + last.Status + " still."
	}
	return tl
}

// taskEndSymbol is the symbol of a status a task ends in, "" for one it
// goes on in.
func taskEndSymbol(status string) string {
	switch status {
	case "completed":
		return "✓"
	case "failed":
		return "✕"
	case "cancelled":
		return "⊘"
	}
	return ""
}
