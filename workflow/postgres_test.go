package workflow

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
)

// TestPostgres runs the engine's core tests on PostgreSQL (DBOS's
// PostgreSQL system database and the events table beside it), each on a
// database of its own on one throwaway server: a DAG, each step kind, a
// failure, an idempotent run id, a gate answered and timed out,
// cancel/resume, redacted events, no secret in any table, a kill -9 during a step and during
// a gate, then the run resumed by another process, and old runs pruned.
func TestPostgres(t *testing.T) {
	server := testpg.Start(t)
	for _, c := range []struct {
		name string
		test func(*testing.T, string)
	}{
		{"dag", testDAG},
		{"step_kinds", testStepKinds},
		{"failure", testFailure},
		{"idempotent_run_id", testIdempotentRunID},
		{"gate", testGate},
		{"gate_timeout", testGateTimeoutSkipRest},
		{"cancel_resume", testCancelResume},
		{"events_redacted", testEventsRedacted},
		{"secrets_at_rest", testSecretsAtRest},
		{"concurrent_events", testConcurrentEvents},
		{"kill_during_step", testKillDuringStep},
		{"kill_during_gate", testKillDuringGate},
		{"adopt_dead_executor", testAdoptDeadExecutor},
		{"kill_during_idempotent_step", testKillDuringIdempotentStep},
		{"kill_after_call_before_record", testKillAfterCallBeforeRecord},
		{"resolve_once", testResolveOnce},
		{"unique_violation", testUniqueViolation},
		{"tool_runs_on_replicas", testToolRunsOnReplicas},
		{"gate_answered_once", testGateAnsweredOnce},
		{"keep_runs", testKeepRuns},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := onDatabase(t, server, c.name)
			c.test(t, db)
			switch c.name {
			case "unique_violation":
				return // it runs no workflow
			case "kill_during_step", "kill_during_idempotent_step":
				return // its subtests run on databases of their own
			}
			// The runs and their events are in PostgreSQL, not in a
			// SQLite file the engine fell back to.
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var runs, events int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM dbos.workflow_status`).Scan(&runs); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+eventsTable).Scan(&events); err != nil {
				t.Fatal(err)
			}
			if runs == 0 || events == 0 {
				t.Errorf("PostgreSQL holds %d runs and %d events, want some", runs, events)
			}
		})
	}
}

// onDatabase returns server's URL with the database name db (DBOS creates
// it).
func onDatabase(t testing.TB, server, db string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

// TestPostgresErrorsHideSecrets: a password in a PostgreSQL URL, in its
// user part or its query, never reaches New's error.
func TestPostgresErrorsHideSecrets(t *testing.T) {
	const pw = "pw-s3cr3t-0042"
	dir := t.TempDir() // no server listens here
	for _, db := range []string{
		"postgres://postgres:" + pw + "@/x?host=" + dir + "&connect_timeout=5",
		"postgres:///x?user=postgres&password=" + pw + "&host=" + dir + "&connect_timeout=5",
	} {
		_, err := New(context.Background(), &EngineOptions{Database: db})
		if err == nil {
			t.Fatalf("New(%q) connected to nothing", db)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("New's error holds the password: %v", err)
		}
	}
}

// testUniqueViolation: the events table's insert is retried on
// PostgreSQL's unique_violation, recognised by its SQLSTATE (whatever the
// server's language), and only on it.
func testUniqueViolation(t *testing.T, database string) {
	newRigOn(t, database, nil) // its engine creates the database
	db, err := sql.Open("pgx", database)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE uv (k int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO uv VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO uv VALUES (1)`)
	if !uniqueViolation(err) {
		t.Errorf("uniqueViolation(%v) = false, want true", err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO uv VALUES ('x')`)
	if err == nil || uniqueViolation(err) {
		t.Errorf("uniqueViolation(%v) = true, want false", err)
	}
}

// createDatabase creates the database of the URL database on its server.
func createDatabase(t testing.TB, database string) {
	t.Helper()
	u, err := url.Parse(database)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresConcurrentNew: replicas starting at once on a new database
// (the state store made it, the engine's tables are not there yet) each
// open their engine: DBOS's migrations and the events table are created
// once, in turn. Without the setup lock, DBOS's migration 6 failed in one
// of them with unique_violation on pg_type (CREATE … IF NOT EXISTS racing
// another), and that replica did not start.
func TestPostgresConcurrentNew(t *testing.T) {
	server := testpg.Start(t)
	for round := range 3 {
		db := onDatabase(t, server, "concurrent_"+strconv.Itoa(round))
		createDatabase(t, db)
		const engines = 4
		errs := make(chan error, engines)
		var wg sync.WaitGroup
		for range engines {
			wg.Go(func() {
				e, err := New(context.Background(), &EngineOptions{Database: db})
				if err == nil {
					err = e.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("round %d: one of %d engines opened at once: %v", round, engines, err)
			}
		}
	}
}

// TestPostgresNewCancelled: an engine's start on a PostgreSQL that never
// answers ends when its context does, with context.Canceled (it went on
// into DBOS's start, which its context does not end, for up to DBOS's
// 2-minute startup timeout).
func TestPostgresNewCancelled(t *testing.T) {
	database, connected := testpg.Silent(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		e, err := New(ctx, &EngineOptions{Database: database})
		if err == nil {
			e.Close()
		}
		done <- err
	}()
	select {
	case <-connected:
	case err := <-done:
		t.Fatalf("New returned before it connected to the database: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("New never connected to the database")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("New after its context was cancelled: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("New still runs 5 s after its context was cancelled")
	}
}
