package daemon_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// endpointTools lists the tools a new MCP client is offered at url; an
// error when nothing is served there.
func endpointTools(url string) ([]string, error) {
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names, nil
}

// TestReplicasFollowEndpoints: two daemons on one PostgreSQL database. An
// endpoint added on A is served by B at its path, replaced on A is served
// anew by B, and deleted on A is no longer served by B, B being told
// nothing but through the database.
func TestReplicasFollowEndpoints(t *testing.T) {
	db := pgDatabase(t, "endpoints")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "a")}}
	ra := run(t, cfg, openDB(t, db), nil)
	rb := run(t, cfg, openDB(t, db), nil)
	ra.awaitReady(t)
	rb.awaitReady(t)
	ctx := context.Background()
	at := rb.url + "/e/code/mcp"
	toolsOnB := func(what string, want ...string) {
		t.Helper()
		wait.For(t, what, func() (string, bool) {
			got, err := endpointTools(at)
			if err != nil {
				return err.Error(), len(want) == 0
			}
			return "", slices.Equal(got, want)
		})
	}

	m, err := ra.d.AddEndpoint(ctx, "code", json.RawMessage(`{"servers":["a"],"tools":["mcp_a_echo"]}`))
	if err != nil {
		t.Fatal(err)
	}
	toolsOnB("code added on A served by B", "mcp_a_echo")
	if m, err = ra.d.UpdateEndpoint(ctx, "code", json.RawMessage(`{"servers":["a"],"tools":["mcp_a_add"]}`), m.Version); err != nil {
		t.Fatal(err)
	}
	toolsOnB("code replaced on A served anew by B", "mcp_a_add")
	if got, err := rb.d.GetEndpoint(ctx, "code"); err != nil || got.Version != m.Version || got.Err != nil {
		t.Errorf("B's GetEndpoint(code) = %+v, %v; want version %d, served", got, err, m.Version)
	}
	if err := ra.d.DeleteEndpoint(ctx, "code", m.Version); err != nil {
		t.Fatal(err)
	}
	toolsOnB("code deleted on A gone from B")
	// A first: B's leak check counts from when A already ran.
	ra.shutdown(t)
}
