package api

// Usage: the calls, errors and latency percentiles per server and tool,
// the runs and tokens per agent and workflow, over a window
// (daemon.Usage: what `switchboard stats` prints).

import (
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardmcp/switchboard/store"
)

// DefaultUsageWindow is the window of GET /usage without ?window=, as
// `switchboard stats` without --since.
const DefaultUsageWindow = time.Hour

// MinUsageWindow is the shortest window: the store's rows are minutes.
const MinUsageWindow = time.Minute

// usageJSON is the usage over a window as the API shows it.
type usageJSON struct {
	Window string             `json:"window"`
	Since  time.Time          `json:"since"`
	Calls  []store.CallStats  `json:"calls"`
	Tokens []store.TokenStats `json:"tokens"`
}

// ParseUsageWindow reads a usage window ("1h", "24h", any Go duration
// from MinUsageWindow to what the store keeps, store.UsageHourRetention);
// "" is DefaultUsageWindow. The ui's Usage page reads its ?window= with
// it too.
func ParseUsageWindow(s string) (time.Duration, error) {
	if s == "" {
		return DefaultUsageWindow, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < MinUsageWindow || d > store.UsageHourRetention {
		return 0, fmt.Errorf("give a duration from %v to %v (1h, 24h)", MinUsageWindow, store.UsageHourRetention)
	}
	return d, nil
}

func (a *API) usage(w http.ResponseWriter, r *http.Request) error {
	window, err := ParseUsageWindow(r.URL.Query().Get("window"))
	if err != nil {
		return &problem{Status: http.StatusBadRequest, Title: "bad window", Detail: err.Error(),
			Errors: []fieldError{{Field: "window", Detail: err.Error()}}}
	}
	rep, err := a.d.Usage(r.Context(), time.Now().Add(-window))
	if err != nil {
		return err
	}
	j := usageJSON{Window: window.String(), Since: rep.Since.UTC(), Calls: rep.Calls, Tokens: rep.Tokens}
	if j.Calls == nil {
		j.Calls = []store.CallStats{}
	}
	if j.Tokens == nil {
		j.Tokens = []store.TokenStats{}
	}
	return a.writeJSON(w, http.StatusOK, j)
}
