package api

// Usage: the calls, errors and latency percentiles per server and tool
// and per named endpoint, the runs and tokens per agent and workflow, over
// a window, for every call or those through one named endpoint
// (daemon.Usage: what `switchboard stats` prints).

import (
	"net/http"
	"slices"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/store"
)

// usageJSON is the usage over a window as the API shows it.
type usageJSON struct {
	Window    string                `json:"window"`
	Since     time.Time             `json:"since"`
	Endpoint  string                `json:"endpoint,omitempty"`
	Calls     []store.CallStats     `json:"calls"`
	Tokens    []store.TokenStats    `json:"tokens"`
	Endpoints []store.EndpointStats `json:"endpoints"`
}

func (a *API) usage(w http.ResponseWriter, r *http.Request) error {
	window, err := daemon.ParseUsageWindow(r.URL.Query().Get("window"))
	if err != nil {
		return &problem{Status: http.StatusBadRequest, Title: "bad window", Detail: err.Error(),
			Errors: []fieldError{{Field: "window", Detail: err.Error()}}}
	}
	endpoint := r.URL.Query().Get("endpoint")
	if why := config.CheckEndpointName(endpoint); why != "" {
		return &problem{Status: http.StatusBadRequest, Title: "bad endpoint", Detail: why,
			Errors: []fieldError{{Field: "endpoint", Detail: why}}}
	}
	rep, err := a.d.Usage(r.Context(), time.Now().Add(-window), endpoint)
	if err != nil {
		return err
	}
	calls := rep.Calls
	if gr := a.d.Grant(r.Context()); !gr.All() {
		// Usage names a tool by its server's name for it; the grant, by
		// the host's. A tool the catalog no longer has is left out.
		names := map[[2]string]string{}
		if h := a.d.Host(); h != nil {
			for _, t := range h.Tools() {
				names[[2]string{t.Server, t.Tool.Name}] = t.Name
			}
		}
		calls = slices.DeleteFunc(calls, func(c store.CallStats) bool {
			name, ok := names[[2]string{c.Server, c.Tool}]
			return !ok || !gr.Tool(c.Server, name)
		})
	}
	j := usageJSON{Window: window.String(), Since: rep.Since.UTC(), Endpoint: rep.Endpoint, Calls: calls, Tokens: rep.Tokens, Endpoints: rep.Endpoints}
	if j.Calls == nil {
		j.Calls = []store.CallStats{}
	}
	if j.Tokens == nil {
		j.Tokens = []store.TokenStats{}
	}
	if j.Endpoints == nil {
		j.Endpoints = []store.EndpointStats{}
	}
	return a.writeJSON(w, http.StatusOK, j)
}
