package ui

// Usage: the calls, errors and latency percentiles per server and tool
// and per named endpoint, the runs and tokens per agent and workflow, over
// the last hour or day, of every call or those through one endpoint
// (daemon.Usage: what `switchboard stats` prints and the REST API's
// /usage serves); and over time, charts of the calls and errors and of
// the latency p50 and p95 (daemon.UsageSeries), of every server or one
// (?server=), of every tool or one (?tool=).

import (
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/store"
)

func (u *UI) usageRoutes() {
	u.mux.HandleFunc("GET /usage", u.usagePage)
}

// usageWindows are the windows the page offers as links; ?window= takes
// any the API takes.
var usageWindows = []string{"1h", "24h", "168h"}

type usagePageData struct {
	chrome
	Window    string // as asked: "1h", "24h"
	Windows   []string
	Endpoint  string // ?endpoint=: the named endpoint's calls alone
	Server    string // ?server=: one server's calls alone
	Tool      string // ?tool=: one tool's (of Server) alone
	Step      time.Duration
	CallChart lineChart // calls and errors over time
	LatChart  lineChart // p50 and p95 over time
	Since     time.Time
	Calls     []store.CallStats
	Tokens    []store.TokenStats
	Endpoints []store.EndpointStats
	Err       string
}

func (u *UI) usagePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := usagePageData{chrome: chrome{"Usage", "usage"}, Windows: usageWindows, Window: q.Get("window"), Endpoint: q.Get("endpoint"),
		Server: q.Get("server"), Tool: q.Get("tool")}
	if p.Window == "" {
		p.Window = "1h"
	}
	window, err := daemon.ParseUsageWindow(p.Window)
	if err != nil {
		p.Err = "window " + p.Window + ": " + err.Error()
		p.Window = ""
		u.render(w, http.StatusBadRequest, "usage", "layout", p)
		return
	}
	if why := config.CheckEndpointName(p.Endpoint); why != "" {
		p.Err = "endpoint: " + why
		p.Endpoint = ""
		u.render(w, http.StatusBadRequest, "usage", "layout", p)
		return
	}
	if len(p.Server) > maxFilterLen || len(p.Tool) > maxFilterLen || (p.Tool != "" && p.Server == "") {
		p.Err = fmt.Sprintf("server, tool: give a server (and one of its tools), each of at most %d bytes", maxFilterLen)
		p.Server, p.Tool = "", ""
		u.render(w, http.StatusBadRequest, "usage", "layout", p)
		return
	}
	now := time.Now()
	rep, err := u.d.Usage(r.Context(), now.Add(-window), p.Endpoint)
	if err != nil {
		p.Err = err.Error()
		u.render(w, http.StatusInternalServerError, "usage", "layout", p)
		return
	}
	p.Since, p.Tokens, p.Endpoints = rep.Since, rep.Tokens, rep.Endpoints
	for _, c := range rep.Calls {
		if (p.Server == "" || c.Server == p.Server) && (p.Tool == "" || c.Tool == p.Tool) {
			p.Calls = append(p.Calls, c)
		}
	}
	ser, err := u.d.UsageSeries(r.Context(), store.UsageSeriesQuery{Since: now.Add(-window), Until: now,
		Endpoint: p.Endpoint, Server: p.Server, Tool: p.Tool})
	if err != nil {
		p.Err = err.Error()
		u.render(w, http.StatusInternalServerError, "usage", "layout", p)
		return
	}
	p.CallChart, p.LatChart, p.Step = usageCharts(ser.Series[0], p.Server, p.Tool)
	u.render(w, http.StatusOK, "usage", "layout", p)
}

// maxFilterLen bounds ?server= and ?tool=.
const maxFilterLen = 256

// usageCharts lays out a usage series as its two charts: calls and
// errors, latency p50 and p95.
func usageCharts(s store.UsageSeries, server, tool string) (calls, latency lineChart, step time.Duration) {
	of := "every server's"
	switch {
	case tool != "":
		of = "server " + server + "'s tool " + tool + ","
	case server != "":
		of = "server " + server + "'s"
	}
	times := make([]time.Time, len(s.Points))
	var nc, ne, p50, p95 []float64
	for i, pt := range s.Points {
		times[i] = pt.Time
		nc, ne = append(nc, float64(pt.Calls)), append(ne, float64(pt.Errors))
		p50, p95 = append(p50, pt.P50MS), append(p95, pt.P95MS)
	}
	per := shortDuration(s.Step)
	calls = newLineChart("chart-calls", fmt.Sprintf("Calls and errors, %s calls, per %s", of, per), times, count,
		lineSeries{"calls", nc}, lineSeries{"errors", ne})
	latency = newLineChart("chart-latency", fmt.Sprintf("Latency p50 and p95, %s calls, per %s", of, per), times, millis,
		lineSeries{"p50", p50}, lineSeries{"p95", p95})
	return calls, latency, s.Step
}

// millis formats a latency in milliseconds as `switchboard stats` does.
func millis(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}
