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
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings the schema to SchemaVersion, in one transaction, or
// refuses a database whose schema is newer.
func (s *Store) migrate(ctx context.Context) error {
	return s.migrateTo(ctx, migrations)
}

func (s *Store) migrateTo(ctx context.Context, steps []string) error {
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
