package store

import (
	"context"
	"fmt"
	"time"
)

// migrations are the schema, one step per version, in order: version i+1 is
// migrations[i]. Never edit a released step; add one. Each step is SQL both
// SQLite and PostgreSQL accept.
var migrations = []string{
	// 1: servers added at run time, and the tool-list cache.
	`CREATE TABLE servers (
		id         TEXT PRIMARY KEY,
		config     TEXT NOT NULL,
		enabled    BOOLEAN NOT NULL,
		version    BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE TABLE tool_lists (
		server   TEXT NOT NULL,
		spec     TEXT NOT NULL,
		saved_at BIGINT NOT NULL,
		ttl_ms   BIGINT NOT NULL,
		tools    TEXT NOT NULL,
		PRIMARY KEY (server, spec)
	);`,
	// 2: usage aggregates (usage.go): per minute, then per hour; bucket
	// is the bucket's start in Unix seconds, res its length in seconds;
	// b00…b16 count calls by latency (UsageLatencyBounds).
	`CREATE TABLE usage_calls (
		bucket BIGINT NOT NULL,
		res    INTEGER NOT NULL,
		server TEXT NOT NULL,
		tool   TEXT NOT NULL,
		calls  BIGINT NOT NULL,
		errors BIGINT NOT NULL,
		b00 BIGINT NOT NULL DEFAULT 0,
		b01 BIGINT NOT NULL DEFAULT 0,
		b02 BIGINT NOT NULL DEFAULT 0,
		b03 BIGINT NOT NULL DEFAULT 0,
		b04 BIGINT NOT NULL DEFAULT 0,
		b05 BIGINT NOT NULL DEFAULT 0,
		b06 BIGINT NOT NULL DEFAULT 0,
		b07 BIGINT NOT NULL DEFAULT 0,
		b08 BIGINT NOT NULL DEFAULT 0,
		b09 BIGINT NOT NULL DEFAULT 0,
		b10 BIGINT NOT NULL DEFAULT 0,
		b11 BIGINT NOT NULL DEFAULT 0,
		b12 BIGINT NOT NULL DEFAULT 0,
		b13 BIGINT NOT NULL DEFAULT 0,
		b14 BIGINT NOT NULL DEFAULT 0,
		b15 BIGINT NOT NULL DEFAULT 0,
		b16 BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (bucket, res, server, tool)
	);
	CREATE TABLE usage_tokens (
		bucket BIGINT NOT NULL,
		res    INTEGER NOT NULL,
		kind   TEXT NOT NULL,
		name   TEXT NOT NULL,
		runs   BIGINT NOT NULL,
		failed BIGINT NOT NULL,
		input  BIGINT NOT NULL,
		output BIGINT NOT NULL,
		PRIMARY KEY (bucket, res, kind, name)
	);`,
	// 3: keys shared by the processes on the database (Store.Key; IF NOT
	// EXISTS: the workflow engine made it itself before step 5), and the
	// gateway replicas serving from it, by the address the others reach
	// them at (replicas.go).
	`CREATE TABLE IF NOT EXISTS switchboard_keys (
		name TEXT PRIMARY KEY,
		key  TEXT NOT NULL
	);
	CREATE TABLE replicas (
		id      TEXT PRIMARY KEY,
		address TEXT NOT NULL,
		seen_at BIGINT NOT NULL
	);`,
	// 4: secrets sealed by their callers (secrets.go): the OAuth tokens
	// replicas share.
	`CREATE TABLE secrets (
		name       TEXT PRIMARY KEY,
		value      TEXT NOT NULL,
		updated_at BIGINT NOT NULL
	);`,
	// 5: the workflow engine's tables, whose SQL is the engine's
	// (workflow/events.go, gates.go): each run's events, each attempt of
	// a step, the one answer of each gate. IF NOT EXISTS: the engine made
	// them itself, in this shape, before this step.
	`CREATE TABLE IF NOT EXISTS switchboard_run_events (
		run_id   TEXT    NOT NULL,
		seq      BIGINT  NOT NULL,
		key      TEXT    NOT NULL,
		terminal INTEGER NOT NULL DEFAULT 0,
		body     TEXT    NOT NULL,
		PRIMARY KEY (run_id, seq),
		UNIQUE (run_id, key)
	);
	CREATE TABLE IF NOT EXISTS switchboard_step_attempts (
		run_id     TEXT    NOT NULL,
		step       TEXT    NOT NULL,
		attempt    INTEGER NOT NULL,
		executor   TEXT    NOT NULL,
		started    TEXT    NOT NULL,
		resolution TEXT,
		PRIMARY KEY (run_id, step, attempt)
	);
	CREATE TABLE IF NOT EXISTS switchboard_gate_answers (
		gate   TEXT   PRIMARY KEY,
		action TEXT   NOT NULL,
		at_ms  BIGINT NOT NULL
	);`,
	// 6: named endpoints added at run time (endpoints.go).
	`CREATE TABLE endpoints (
		name       TEXT PRIMARY KEY,
		config     TEXT NOT NULL,
		version    BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);`,
	// 7: usage by endpoint (usage.go): usage_calls gains the named
	// endpoint a call came through ('' for every other call: the default
	// endpoint, the API, agents, workflows), in its key. Rows before this
	// step are ''.
	`CREATE TABLE usage_calls_7 (
		bucket   BIGINT NOT NULL,
		res      INTEGER NOT NULL,
		endpoint TEXT NOT NULL DEFAULT '',
		server   TEXT NOT NULL,
		tool     TEXT NOT NULL,
		calls    BIGINT NOT NULL,
		errors   BIGINT NOT NULL,
		b00 BIGINT NOT NULL DEFAULT 0,
		b01 BIGINT NOT NULL DEFAULT 0,
		b02 BIGINT NOT NULL DEFAULT 0,
		b03 BIGINT NOT NULL DEFAULT 0,
		b04 BIGINT NOT NULL DEFAULT 0,
		b05 BIGINT NOT NULL DEFAULT 0,
		b06 BIGINT NOT NULL DEFAULT 0,
		b07 BIGINT NOT NULL DEFAULT 0,
		b08 BIGINT NOT NULL DEFAULT 0,
		b09 BIGINT NOT NULL DEFAULT 0,
		b10 BIGINT NOT NULL DEFAULT 0,
		b11 BIGINT NOT NULL DEFAULT 0,
		b12 BIGINT NOT NULL DEFAULT 0,
		b13 BIGINT NOT NULL DEFAULT 0,
		b14 BIGINT NOT NULL DEFAULT 0,
		b15 BIGINT NOT NULL DEFAULT 0,
		b16 BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (bucket, res, endpoint, server, tool)
	);
	INSERT INTO usage_calls_7 (bucket, res, endpoint, server, tool, calls, errors, b00, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16)
		SELECT bucket, res, '', server, tool, calls, errors, b00, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16 FROM usage_calls;
	DROP TABLE usage_calls;
	ALTER TABLE usage_calls_7 RENAME TO usage_calls;`,
	// 8: the embeddings of tool definitions (embeddings.go): search
	// mode's vectors, by model and definition digest. IF NOT EXISTS, as
	// the tests that take a database back to an older version keep it.
	`CREATE TABLE IF NOT EXISTS tool_embeddings (
		model    TEXT   NOT NULL,
		digest   TEXT   NOT NULL,
		vector   TEXT   NOT NULL,
		saved_at BIGINT NOT NULL,
		PRIMARY KEY (model, digest)
	);`,
	// 9: pinned tool definitions (pins.go): per server and tool, the
	// trusted definition (digest '' when none is yet) and the one held
	// for approval (held_digest '' when none is).
	`CREATE TABLE IF NOT EXISTS tool_pins (
		server          TEXT   NOT NULL,
		tool            TEXT   NOT NULL,
		digest          TEXT   NOT NULL DEFAULT '',
		definition      TEXT   NOT NULL DEFAULT '',
		pinned_at       BIGINT NOT NULL DEFAULT 0,
		pinned_by       TEXT   NOT NULL DEFAULT '',
		held_digest     TEXT   NOT NULL DEFAULT '',
		held_definition TEXT   NOT NULL DEFAULT '',
		held_since      BIGINT NOT NULL DEFAULT 0,
		held_reason     TEXT   NOT NULL DEFAULT '',
		PRIMARY KEY (server, tool)
	);`,
	// 10: the gateway's tasks (tasks.go, the MCP tasks extension): one
	// row per task, its status and outcome; the JSON columns are '' when
	// empty.
	`CREATE TABLE IF NOT EXISTS switchboard_tasks (
		id             TEXT   PRIMARY KEY,
		caller         TEXT   NOT NULL,
		endpoint       TEXT   NOT NULL,
		server         TEXT   NOT NULL,
		tool           TEXT   NOT NULL,
		status         TEXT   NOT NULL,
		status_message TEXT   NOT NULL DEFAULT '',
		input_requests TEXT   NOT NULL DEFAULT '',
		result         TEXT   NOT NULL DEFAULT '',
		error          TEXT   NOT NULL DEFAULT '',
		created_at     BIGINT NOT NULL,
		updated_at     BIGINT NOT NULL,
		ttl_ms         BIGINT NOT NULL,
		owner          TEXT   NOT NULL
	);
	CREATE INDEX IF NOT EXISTS switchboard_tasks_created ON switchboard_tasks (created_at);`,
	// 11: the upstream's own task a gateway task's call follows (the
	// host as a tasks client), '' when none. The table is made anew, as
	// usage_calls was at 7, rather than altered: a database taken back to
	// an older version by the tests keeps its newer tables.
	`CREATE TABLE switchboard_tasks_11 (
		id             TEXT   PRIMARY KEY,
		caller         TEXT   NOT NULL,
		endpoint       TEXT   NOT NULL,
		server         TEXT   NOT NULL,
		tool           TEXT   NOT NULL,
		status         TEXT   NOT NULL,
		status_message TEXT   NOT NULL DEFAULT '',
		input_requests TEXT   NOT NULL DEFAULT '',
		result         TEXT   NOT NULL DEFAULT '',
		error          TEXT   NOT NULL DEFAULT '',
		created_at     BIGINT NOT NULL,
		updated_at     BIGINT NOT NULL,
		ttl_ms         BIGINT NOT NULL,
		owner          TEXT   NOT NULL,
		upstream_task  TEXT   NOT NULL DEFAULT ''
	);
	INSERT INTO switchboard_tasks_11 (id, caller, endpoint, server, tool, status, status_message, input_requests, result, error, created_at, updated_at, ttl_ms, owner)
		SELECT id, caller, endpoint, server, tool, status, status_message, input_requests, result, error, created_at, updated_at, ttl_ms, owner FROM switchboard_tasks;
	DROP TABLE switchboard_tasks;
	ALTER TABLE switchboard_tasks_11 RENAME TO switchboard_tasks;
	CREATE INDEX IF NOT EXISTS switchboard_tasks_created ON switchboard_tasks (created_at);`,
	// 12: a task's status history (tasks.go, TaskStatusChange): a JSON
	// array, '' for a task made before it. Made anew, as at 11.
	`CREATE TABLE switchboard_tasks_12 (
		id             TEXT   PRIMARY KEY,
		caller         TEXT   NOT NULL,
		endpoint       TEXT   NOT NULL,
		server         TEXT   NOT NULL,
		tool           TEXT   NOT NULL,
		status         TEXT   NOT NULL,
		status_message TEXT   NOT NULL DEFAULT '',
		input_requests TEXT   NOT NULL DEFAULT '',
		result         TEXT   NOT NULL DEFAULT '',
		error          TEXT   NOT NULL DEFAULT '',
		created_at     BIGINT NOT NULL,
		updated_at     BIGINT NOT NULL,
		ttl_ms         BIGINT NOT NULL,
		owner          TEXT   NOT NULL,
		upstream_task  TEXT   NOT NULL DEFAULT '',
		history        TEXT   NOT NULL DEFAULT ''
	);
	INSERT INTO switchboard_tasks_12 (id, caller, endpoint, server, tool, status, status_message, input_requests, result, error, created_at, updated_at, ttl_ms, owner, upstream_task)
		SELECT id, caller, endpoint, server, tool, status, status_message, input_requests, result, error, created_at, updated_at, ttl_ms, owner, upstream_task FROM switchboard_tasks;
	DROP TABLE switchboard_tasks;
	ALTER TABLE switchboard_tasks_12 RENAME TO switchboard_tasks;
	CREATE INDEX IF NOT EXISTS switchboard_tasks_created ON switchboard_tasks (created_at);`,
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings the schema to SchemaVersion, in one transaction, or
// refuses a database whose schema is newer.
func (s *Store) migrate(ctx context.Context) error {
	steps := migrations
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.errf(err, "migrating")
	}
	defer tx.Rollback()
	if err := s.backend.lockMigrations(ctx, tx); err != nil {
		return s.errf(err, "migrating")
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		applied_at BIGINT NOT NULL
	)`); err != nil {
		return s.errf(err, "migrating")
	}
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return s.errf(err, "reading the schema version")
	}
	if have > len(steps) {
		return fmt.Errorf("store %s: schema version %d, and this Switchboard knows up to %d: %w; upgrade Switchboard, or point [state] database at another file",
			s.where, have, len(steps), ErrNewerSchema)
	}
	if have == len(steps) {
		return nil
	}
	now := millis(time.Now())
	for v := have + 1; v <= len(steps); v++ {
		if _, err := tx.ExecContext(ctx, steps[v-1]); err != nil {
			return s.errf(err, "migrating to schema version %d", v)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, v, now); err != nil {
			return s.errf(err, "migrating to schema version %d", v)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.errf(err, "migrating")
	}
	return nil
}
