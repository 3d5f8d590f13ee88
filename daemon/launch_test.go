package daemon_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/workflow"
)

// TestReadyMeansLaunched: a daemon with workflows says it is ready
// (OnReady, /readyz) only once its engine has launched, so a run started
// then is accepted. An optional server that is slow to start holds the
// host's start (and so the launch) for two seconds after the required
// one is up: the window in which the daemon used to say it was ready and
// refuse runs ("DBOS must be launched").
func TestReadyMeansLaunched(t *testing.T) {
	v, err := workflow.NewValue(map[string]any{"text": "x"})
	if err != nil {
		t.Fatal(err)
	}
	wf := &workflow.Workflow{ID: "one", Digest: "d1", Steps: []*workflow.Step{{ID: "a", Kind: workflow.StepTool, Tool: "mcp_fx_echo", Arguments: v}}}
	slow := fixture(t, "slow", "-slow-start", "2000")
	slow.Optional = true
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx"), slow}}
	cfg.State.Database = filepath.Join(t.TempDir(), "state.db") // the engine's: not the user's
	r := run(t, cfg, openStore(t), nil, daemon.Options{Workflows: []*workflow.Workflow{wf}})
	r.awaitReady(t)
	if _, err := r.d.Workflows().Engine.Start(context.Background(), "one", nil, nil); err != nil {
		t.Errorf("a run started once the daemon is ready: %v", err)
	}
	resp, err := http.Get(r.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz once ready: %d", resp.StatusCode)
	}
}
