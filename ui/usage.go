package ui

// Usage: the calls, errors and latency percentiles per server and tool,
// the runs and tokens per agent and workflow, over the last hour or day
// (daemon.Usage: what `switchboard stats` prints and the REST API's
// /usage serves).

import (
	"fmt"
	"net/http"
	"time"

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
	Window  string // as asked: "1h", "24h"
	Windows []string
	Since   time.Time
	Calls   []store.CallStats
	Tokens  []store.TokenStats
	Err     string
}

func (u *UI) usagePage(w http.ResponseWriter, r *http.Request) {
	p := usagePageData{chrome: chrome{"Usage", "usage"}, Windows: usageWindows, Window: r.URL.Query().Get("window")}
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
	rep, err := u.d.Usage(r.Context(), time.Now().Add(-window))
	if err != nil {
		p.Err = err.Error()
		u.render(w, http.StatusInternalServerError, "usage", "layout", p)
		return
	}
	p.Since, p.Calls, p.Tokens = rep.Since, rep.Calls, rep.Tokens
	u.render(w, http.StatusOK, "usage", "layout", p)
}

// millis formats a latency in milliseconds as `switchboard stats` does.
func millis(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}
