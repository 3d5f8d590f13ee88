package api

// Usage: the calls, errors and latency percentiles per server and tool,
// the runs and tokens per agent and workflow, over a window
// (daemon.Usage: what `switchboard stats` prints).

import (
	"net/http"
	"time"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/store"
)

// usageJSON is the usage over a window as the API shows it.
type usageJSON struct {
	Window string             `json:"window"`
	Since  time.Time          `json:"since"`
	Calls  []store.CallStats  `json:"calls"`
	Tokens []store.TokenStats `json:"tokens"`
}

func (a *API) usage(w http.ResponseWriter, r *http.Request) error {
	window, err := daemon.ParseUsageWindow(r.URL.Query().Get("window"))
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
