package host

// A server's recent history, for a person asking why it misbehaves (the
// web UI's server page, the REST API's GET /servers/{id}/history): its
// last stderr lines, and its incidents — connections lost and restarts,
// failures, circuit-breaker openings, tool-list changes and held tool
// definitions — each with its time and reason. Both are bounded rings,
// kept in memory for the server's life in this host, and redacted like
// everything else the host hands out.

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
)

const (
	// HistoryStderrLines and HistoryStderrLineBytes bound the stderr a
	// server's history keeps: its last lines, each cut to the bound.
	HistoryStderrLines     = 200
	HistoryStderrLineBytes = 1 << 10
	// HistoryIncidents bounds the incidents a server's history keeps.
	HistoryIncidents = 100
)

// IncidentKind says what an [Incident] was.
type IncidentKind string

// The kinds of incidents.
const (
	// IncidentLost: the server's connection ended on its own (a stdio
	// child exited or crashed, a network session was lost, health pings
	// went unanswered); the reason says how. The supervisor restarts it.
	IncidentLost IncidentKind = "lost"
	// IncidentRestartFailed: an attempt to connect it again failed; the
	// supervisor tries again after a backoff.
	IncidentRestartFailed IncidentKind = "restart-failed"
	// IncidentRestarted: the server is up again after a restart.
	IncidentRestarted IncidentKind = "restarted"
	// IncidentFailed: the server could not start, or failed too often,
	// and is left alone until asked.
	IncidentFailed IncidentKind = "failed"
	// IncidentCircuitOpen: the server's circuit breaker opened.
	IncidentCircuitOpen IncidentKind = "circuit-open"
	// IncidentToolsChanged: the server announced tools/list_changed and
	// its tools were read again (Added, Removed, Changed count them), or
	// a refresh asked for (Host.RefreshTools) found them changed.
	IncidentToolsChanged IncidentKind = "tools-changed"
	// IncidentReplaced: the server was stopped and started anew
	// ([Host.ReplaceServer]: its configuration changed, or a restart was
	// asked for); its history goes on.
	IncidentReplaced IncidentKind = "replaced"
	// IncidentToolHeld: one of its tool definitions is held until a
	// person approves it (Tool; the reason says why).
	IncidentToolHeld IncidentKind = "tool-held"
)

// An Incident is one thing that went wrong with, or changed in, a server.
type Incident struct {
	Time   time.Time    `json:"time"`
	Kind   IncidentKind `json:"kind"`
	Reason string       `json:"reason,omitempty"`
	Tool   string       `json:"tool,omitempty"` // IncidentToolHeld
	// IncidentToolsChanged: tools added, removed, and kept with another
	// definition.
	Added   int `json:"added,omitempty"`
	Removed int `json:"removed,omitempty"`
	Changed int `json:"changed,omitempty"`
}

// A StderrLine is one line a stdio server wrote to its stderr.
type StderrLine struct {
	Time time.Time `json:"time"`
	Line string    `json:"line"`
}

// History is a server's recent stderr lines and incidents, oldest first.
type History struct {
	Server    string       `json:"server"`
	Stderr    []StderrLine `json:"stderr"`
	Incidents []Incident   `json:"incidents"`
	// StderrDropped and IncidentsDropped count what fell out of the
	// bounds since the server was added to the host (a replaced server's
	// history goes on).
	StderrDropped    int `json:"stderr_dropped,omitempty"`
	IncidentsDropped int `json:"incidents_dropped,omitempty"`
}

// History returns a server's recent stderr lines and incidents.
func (h *Host) History(serverID string) (History, error) {
	s, err := h.server(serverID)
	if err != nil {
		return History{}, err
	}
	return s.hist.snapshot(serverID), nil
}

// history is a server's; its zero value is ready.
type history struct {
	mu        sync.Mutex
	stderr    ring[StderrLine]
	incidents ring[Incident]
}

func (hs *history) snapshot(id string) History {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return History{Server: id, Stderr: hs.stderr.all(), Incidents: hs.incidents.all(),
		StderrDropped: hs.stderr.dropped, IncidentsDropped: hs.incidents.dropped}
}

// line keeps a stderr line, already redacted and cleaned.
func (hs *history) line(line string) {
	if len(line) > HistoryStderrLineBytes {
		line = strings.ToValidUTF8(line[:HistoryStderrLineBytes], "") + " [cut]"
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.stderr.add(StderrLine{Time: time.Now().UTC(), Line: line}, HistoryStderrLines)
}

// incident keeps an incident; its reason must be redacted already.
func (hs *history) incident(in Incident) {
	if in.Time.IsZero() {
		in.Time = time.Now().UTC()
	}
	if len(in.Reason) > HistoryStderrLineBytes*2 {
		in.Reason = strings.ToValidUTF8(in.Reason[:HistoryStderrLineBytes*2], "") + " [cut]"
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.incidents.add(in, HistoryIncidents)
}

// carry makes hs go on from old's history (a replaced server's), before
// anything of its own: old's items, then the drops.
func (hs *history) carry(old *history) {
	was := old.snapshot("")
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, l := range was.Stderr {
		hs.stderr.add(l, HistoryStderrLines)
	}
	for _, in := range was.Incidents {
		hs.incidents.add(in, HistoryIncidents)
	}
	hs.stderr.dropped += was.StderrDropped
	hs.incidents.dropped += was.IncidentsDropped
}

// ring keeps the last n items added.
type ring[T any] struct {
	items   []T
	next    int // where the next item goes once full
	dropped int
}

func (r *ring[T]) add(x T, n int) {
	if len(r.items) < n {
		r.items = append(r.items, x)
		return
	}
	r.items[r.next] = x
	r.next = (r.next + 1) % n
	r.dropped++
}

// all returns the items, oldest first.
func (r *ring[T]) all() []T {
	out := make([]T, 0, len(r.items))
	out = append(out, r.items[r.next:]...)
	return append(out, r.items[:r.next]...)
}

// stderrLine keeps one of the server's stderr lines in its history:
// cleaned of terminal escapes and control characters, and redacted (the
// child may print the secrets it was given).
func (s *server) stderrLine(line string) {
	if s.h.lim != nil {
		line, _ = s.h.lim.cleanText(line, len(line))
	}
	if s.h.red != nil {
		line = s.h.red.Redact(line)
	}
	s.hist.line(line)
}

// toolsDiff counts the tools of now that are not in was, those of was
// not in now, and those in both with another definition.
func toolsDiff(was, now []discovered) (added, removed, changed int) {
	old := make(map[string][]byte, len(was))
	for _, d := range was {
		b, _ := json.Marshal(d.tool)
		old[d.tool.Name] = b
	}
	for _, d := range now {
		b, ok := old[d.tool.Name]
		if !ok {
			added++
			continue
		}
		if nb, _ := json.Marshal(d.tool); string(nb) != string(b) {
			changed++
		}
		delete(old, d.tool.Name)
	}
	return added, len(old), changed
}

// refreshAsked is the reason of a tool-list change found by
// Host.RefreshTools.
const refreshAsked = "its tools were read again when asked (refresh)"

// noteIncident keeps the incident a change of state from was to st (with
// err, redacted already) is, if any. s.mu is held.
func (s *server) noteIncident(was, st State, err error) {
	reason := ""
	if err != nil {
		reason = err.Error()
	}
	usable := func(st State) bool { return st == StateReady || st == StateDegraded }
	switch {
	case st == StateRestarting && usable(was):
		s.hist.incident(Incident{Kind: IncidentLost, Reason: reason})
	case st == StateRestarting && was != StateRestarting:
		s.hist.incident(Incident{Kind: IncidentRestartFailed, Reason: reason})
	case st == StateFailed && was != StateFailed:
		s.hist.incident(Incident{Kind: IncidentFailed, Reason: reason})
	}
}
