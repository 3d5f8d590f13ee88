package ui

// Usage: the calls, errors and latency percentiles per server and tool
// and per named endpoint, the runs and tokens per agent and workflow, over
// the last hour or day, of every call or those through one endpoint
// (daemon.Usage: what `switchboard stats` prints and the REST API's
// /usage serves).

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
	Since     time.Time
	Calls     []store.CallStats
	Tokens    []store.TokenStats
	Endpoints []store.EndpointStats
	Err       string
}

func (u *UI) usagePage(w http.ResponseWriter, r *http.Request) {
	p := usagePageData{chrome: chrome{"Usage", "usage"}, Windows: usageWindows, Window: r.URL.Query().Get("window"), Endpoint: r.URL.Query().Get("endpoint")}
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
	rep, err := u.d.Usage(r.Context(), time.Now().Add(-window), p.Endpoint)
	if err != nil {
		p.Err = err.Error()
		u.render(w, http.StatusInternalServerError, "usage", "layout", p)
		return
	}
	p.Since, p.Calls, p.Tokens, p.Endpoints = rep.Since, rep.Calls, rep.Tokens, rep.Endpoints
	u.render(w, http.StatusOK, "usage", "layout", p)
}

// millis formats a latency in milliseconds as `switchboard stats` does.
func millis(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}
