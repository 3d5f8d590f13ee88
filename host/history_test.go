package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestHistory: a server that prints its secret and crashes has, in its
// history, its stderr lines (the secret redacted), the connection lost
// with its reason and the restart; a server whose calls time out has its
// circuit's opening; a rug pull has its tool-list change (a refresh that
// changes nothing has none).
func TestHistory(t *testing.T) {
	canary := interop.NewCanary(t)
	t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)
	crashy := fixture(t, "crashy", "-print-env", "-crash-on-call")
	crashy.Env = map[string]string{"TOKEN": "{{secrets.canary}}"}
	hung := fixture(t, "hung", "-hang")
	hung.Timeout = 50 * time.Millisecond
	rug := fixture(t, "rug", "-rug-pull")
	h, _ := start(t, []config.Server{crashy, hung, rug}, nil)
	ctx := context.Background()

	if _, err := h.CallTool(ctx, "mcp_crashy_echo", json.RawMessage(`{"text":"x"}`), nil); err == nil {
		t.Fatal("the crashing call succeeded")
	}
	var hs host.History
	waitFor(t, func() bool {
		var err error
		hs, err = h.History("crashy")
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(hs.Incidents, func(in host.Incident) bool { return in.Kind == host.IncidentRestarted })
	}, "crashy's restart in its history")
	kinds := []host.IncidentKind{}
	for _, in := range hs.Incidents {
		kinds = append(kinds, in.Kind)
	}
	if !slices.Equal(kinds, []host.IncidentKind{host.IncidentLost, host.IncidentRestarted}) {
		t.Errorf("crashy's incidents = %v, want lost, restarted", kinds)
	}
	if lost := hs.Incidents[0]; !strings.Contains(lost.Reason, "connection lost") || !strings.Contains(lost.Reason, "exiting with status 3") || lost.Time.IsZero() {
		t.Errorf("the loss = %+v, want its reason (the child's last stderr) and time", lost)
	}
	all, _ := json.Marshal(hs)
	for _, leak := range interop.Leaks(string(all), canary) {
		t.Errorf("the history holds %s", leak)
	}
	var text []string
	for _, l := range hs.Stderr {
		text = append(text, l.Line)
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{"TOKEN=[REDACTED]", "testserver: -crash-on-call: exiting with status 3"} {
		if !strings.Contains(joined, want) {
			t.Errorf("crashy's stderr lacks %q:\n%s", want, joined)
		}
	}

	for range 5 {
		h.CallTool(ctx, "mcp_hung_echo", json.RawMessage(`{"text":"x"}`), nil)
	}
	hs, _ = h.History("hung")
	if len(hs.Incidents) != 1 || hs.Incidents[0].Kind != host.IncidentCircuitOpen || !strings.Contains(hs.Incidents[0].Reason, "5 calls in a row") {
		t.Errorf("hung's incidents = %+v, want its circuit's opening", hs.Incidents)
	}

	callText(t, h, "mcp_rug_rug_pull", `{}`, nil)
	waitFor(t, func() bool {
		hs, _ = h.History("rug")
		return len(hs.Incidents) > 0
	}, "rug's tool-list change")
	if in := hs.Incidents[0]; in.Kind != host.IncidentToolsChanged || in.Changed != 1 || in.Added != 0 || in.Removed != 0 {
		t.Errorf("rug's incident = %+v, want tools-changed, 1 changed", in)
	}
	// A refresh that finds nothing changed is no incident.
	if err := h.RefreshTools(ctx, "rug"); err != nil {
		t.Fatal(err)
	}
	if hs, _ = h.History("rug"); len(hs.Incidents) != 1 {
		t.Errorf("rug's incidents after a refresh that changed nothing = %+v, want the one", hs.Incidents)
	}

	// Replaced (a restart asked for, a changed configuration), its
	// history goes on.
	if err := h.ReplaceServer(crashy); err != nil {
		t.Fatal(err)
	}
	hs, _ = h.History("crashy")
	kinds = kinds[:0]
	for _, in := range hs.Incidents {
		kinds = append(kinds, in.Kind)
	}
	if !slices.Equal(kinds, []host.IncidentKind{host.IncidentLost, host.IncidentRestarted, host.IncidentReplaced}) || len(hs.Stderr) < len(text) {
		t.Errorf("crashy's history after ReplaceServer: incidents %v, %d stderr lines (had %d)", kinds, len(hs.Stderr), len(text))
	}

	if _, err := h.History("nope"); !errors.Is(err, host.ErrUnknownServer) {
		t.Errorf("History(nope): err = %v, want ErrUnknownServer", err)
	}
}
