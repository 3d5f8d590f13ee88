package ui

// A server's history on its page (issue 32 §2, why a server misbehaves):
// its recent stderr lines and its incidents (host.History), redrawn while
// the page is open by a poll of /servers/{id}/history that answers 204
// while nothing changed, as a run's page does; its answer also redraws
// the page's state and restart count, out of band.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/toolpin"
)

// historyData is the server page's history fragment.
type historyData struct {
	ID        string
	Sig       string // what it shows, hashed: the poll's ?sig
	Stderr    []host.StderrLine
	Incidents []incidentRow // newest first
	Dropped   int           // stderr lines that fell out of the bound
	Transport string        // the server's; stderr is a stdio server's alone
	// Row and Restarts are its state and restart count; with OOB (the
	// poll's answer) they replace the page's, out of band.
	Row      serverRow
	Restarts int
	OOB      bool
}

// incidentRow is an incident as the page lists it.
type incidentRow struct {
	Time   string
	Kind   string
	Text   string // what happened, in words
	Reason string
	Held   bool // a held tool definition: links to the changes to approve
}

var incidentText = map[host.IncidentKind]string{
	host.IncidentLost:          "Connection lost; restarting",
	host.IncidentRestartFailed: "Restart failed; trying again",
	host.IncidentRestarted:     "Restarted",
	host.IncidentFailed:        "Failed; not restarted until asked",
	host.IncidentCircuitOpen:   "Circuit breaker opened",
	host.IncidentToolsChanged:  "Tool list changed",
	host.IncidentToolHeld:      "Tool definition held for approval",
	host.IncidentReplaced:      "Stopped and started anew",
}

// historyOf is the fragment for a server's history.
func historyOf(m daemon.ManagedServer, hs host.History) historyData {
	id := m.ID
	d := historyData{ID: id, Stderr: hs.Stderr, Dropped: hs.StderrDropped, Row: rowOf(m)}
	if m.Status != nil {
		d.Transport, d.Restarts = string(m.Status.Transport), m.Status.Restarts
	}
	for i := len(hs.Incidents) - 1; i >= 0; i-- {
		in := hs.Incidents[i]
		r := incidentRow{Time: stamp(in.Time), Kind: string(in.Kind), Text: incidentText[in.Kind], Reason: in.Reason}
		if r.Text == "" {
			r.Text = string(in.Kind)
		}
		switch in.Kind {
		case host.IncidentToolsChanged:
			r.Text += fmt.Sprintf(": %d added, %d removed, %d changed", in.Added, in.Removed, in.Changed)
		case host.IncidentToolHeld:
			r.Text += ": " + in.Tool
			r.Held = true
		}
		d.Incidents = append(d.Incidents, r)
	}
	last := func(n int, t func() time.Time) string {
		if n == 0 {
			return ""
		}
		return t().Format(time.RFC3339Nano)
	}
	// Not its uptime, which changes each second: the state, what it is
	// doing, its error and restarts redraw it.
	d.Sig = hashOf(id, d.Row.State, d.Row.Detail, d.Row.Error, fmt.Sprint(d.Restarts),
		fmt.Sprint(len(hs.Stderr)+hs.StderrDropped), last(len(hs.Stderr), func() time.Time { return hs.Stderr[len(hs.Stderr)-1].Time }),
		fmt.Sprint(len(hs.Incidents)+hs.IncidentsDropped), last(len(hs.Incidents), func() time.Time { return hs.Incidents[len(hs.Incidents)-1].Time }))
	return d
}

// pinRow is a trusted tool definition as a server's page lists it.
type pinRow struct {
	Tool, Since, By string
}

// shownPins bounds the pinned definitions a server's page lists.
const shownPins = 100

// pins returns a server's trusted tool definitions, by tool name (at
// most shownPins), and how many more there are. A failure to read them
// leaves them out (and is logged).
func (u *UI) pins(ctx context.Context, id string) ([]pinRow, int) {
	ex, err := u.d.ExportPins(ctx, id)
	if err != nil {
		u.log.Warn("ui: reading the pinned tool definitions", "server", id, "err", err)
		return nil, 0
	}
	ps := ex.Pins
	slices.SortFunc(ps, func(a, b toolpin.Pin) int { return strings.Compare(a.Tool, b.Tool) })
	var rows []pinRow
	for _, p := range ps[:min(len(ps), shownPins)] {
		r := pinRow{Tool: p.Tool, By: p.PinnedBy}
		if !p.PinnedAt.IsZero() {
			r.Since = stamp(p.PinnedAt)
		}
		rows = append(rows, r)
	}
	return rows, len(ps) - len(rows)
}

// stamp is a time as the history shows it: UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// serverHistory answers the history's poll: the fragment, or 204 when it
// would show what the page has (?sig).
func (u *UI) serverHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, err := u.d.GetServer(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	hs, err := u.d.ServerHistory(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	d := historyOf(m, hs)
	if r.URL.Query().Get("sig") == d.Sig {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	d.OOB, d.Row.OOB = true, true
	u.render(w, http.StatusOK, "server", "history", d)
}
