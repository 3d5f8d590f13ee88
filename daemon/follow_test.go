package daemon_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/store"
)

// TestReplicasFollowEachOther: two daemons on one PostgreSQL database (two
// replicas behind a balancer). A server added, updated, disabled, enabled
// and deleted on A reaches B's host, and B's gateway clients see its tools
// come, change and go (list_changed), without B being told anything but
// through the database.
func TestReplicasFollowEachOther(t *testing.T) {
	db := pgDatabase(t, "replicas")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "a")}}
	ra := run(t, cfg, openDB(t, db), nil)
	rb := run(t, cfg, openDB(t, db), nil)
	ra.awaitReady(t)
	rb.awaitReady(t)
	ctx := context.Background()
	cs, changed := gatewayWatch(t, rb.url)

	start := time.Now()
	m, err := ra.d.AddServer(ctx, "b", entry(t, "-tool-name", "first"))
	if err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "b added on A", func(n []string) bool { return slices.Contains(n, "mcp_b_first") })
	t.Logf("a server added on A was served by B %v later (its process started included)", time.Since(start))

	if m, err = ra.d.UpdateServer(ctx, "b", entry(t, "-tool-name", "second"), m.Version); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "b updated on A", func(n []string) bool {
		return slices.Contains(n, "mcp_b_second") && !slices.Contains(n, "mcp_b_first")
	})
	if m, err = ra.d.SetServerEnabled(ctx, "b", false, m.Version); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "b disabled on A", func(n []string) bool { return !slices.Contains(n, "mcp_b_second") })
	if m, err = ra.d.SetServerEnabled(ctx, "b", true, m.Version); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "b enabled on A", func(n []string) bool { return slices.Contains(n, "mcp_b_second") })
	if err := ra.d.DeleteServer(ctx, "b", m.Version); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "b deleted on A", func(n []string) bool {
		return !slices.Contains(n, "mcp_b_second") && slices.Contains(n, "mcp_a_echo")
	})

	// B's own operations still work on what it followed, and reach A.
	if _, err := rb.d.AddServer(ctx, "c", entry(t, "-tool-name", "third")); err != nil {
		t.Fatal(err)
	}
	csa, changedA := gatewayWatch(t, ra.url)
	awaitTools(t, csa, changedA, "c added on B", func(n []string) bool { return slices.Contains(n, "mcp_c_third") })
	// A first: B's leak check counts from when A already ran, with fewer
	// servers than it has now.
	csa.Close()
	ra.shutdown(t)
}

// openDB opens the state store on database db, closed when t ends: one
// replica's store (each replica of a test opens its own).
func openDB(t *testing.T, db string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pgDatabase starts a PostgreSQL server for t and returns the URL of a new
// database name on it.
func pgDatabase(t *testing.T, name string) string {
	t.Helper()
	return testpg.CreateDatabase(t, testpg.Start(t), name)
}

// TestLazyToolsFollow: a lazy server started on replica A (its first run)
// and lazy-idle on B, which offers the list A cached. When the list in the
// cache changes (A's server listed other tools; here written as A's host
// would, under the same spec), B's gateway clients get list_changed and
// the new list, and B still has not started the server.
func TestLazyToolsFollow(t *testing.T) {
	db := pgDatabase(t, "lazy_tools")
	lz := fixture(t, "lz")
	lz.Lazy = true
	cfg := &config.Config{Servers: []config.Server{fixture(t, "a"), lz}}
	stA := openDB(t, db)
	ra := run(t, cfg, stA, nil)
	ra.awaitReady(t)
	rb := run(t, cfg, openDB(t, db), nil)
	rb.awaitReady(t)
	if st, err := rb.d.Host().Status("lz"); err != nil || st.State != host.StateLazy {
		t.Fatalf("lz on B: %+v, %v; want lazy-idle (A cached its tools)", st, err)
	}
	cs, changed := gatewayWatch(t, rb.url)
	if names := toolNames(t, cs); !slices.Contains(names, "mcp_lz_echo") {
		t.Fatalf("B's tools: %v, want lz's cached ones", names)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var spec, tools string
	if err := conn.QueryRow(ctx, `SELECT spec, tools FROM tool_lists WHERE server = 'lz'`).Scan(&spec, &tools); err != nil {
		t.Fatal(err)
	}
	// The host keeps {"tools": [...], "scanner": ..., "findings": ...}.
	var list struct {
		Tools   []map[string]any `json:"tools"`
		Scanner string           `json:"scanner"`
	}
	if err := json.Unmarshal([]byte(tools), &list); err != nil {
		t.Fatal(err)
	}
	list.Tools = append(list.Tools, map[string]any{"name": "added", "inputSchema": map[string]any{"type": "object"}})
	raw, _ := json.Marshal(list)
	if err := stA.SaveTools(ctx, "lz", spec, raw, 0); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "lz's new tool", func(n []string) bool { return slices.Contains(n, "mcp_lz_added") })
	if st, err := rb.d.Host().Status("lz"); err != nil || st.State != host.StateLazy {
		t.Errorf("lz on B after the change: %+v, %v; want still lazy-idle", st, err)
	}
	cs.Close()
	ra.shutdown(t)
}
