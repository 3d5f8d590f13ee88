package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrExists: a record with that id exists already.
var ErrExists = errors.New("exists already")

// ServerRecord is an MCP server added at run time. Servers from config
// files are not stored: they stay read-only in their files and, on an id
// clash, win over a stored one.
type ServerRecord struct {
	ID string
	// Config is the server's configuration as JSON (the caller's encoding
	// of a config entry). Secrets appear only as placeholders.
	Config json.RawMessage
	// Enabled servers are started; disabled ones are kept, not started.
	Enabled bool
	// Version increases with every change (an HTTP ETag); it is set by the
	// store.
	Version int64
	// Created and Updated are set by the store.
	Created, Updated time.Time
}

// Servers returns every stored server, oldest first.
func (s *Store) Servers(ctx context.Context) ([]ServerRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, config, enabled, version, created_at, updated_at FROM servers ORDER BY created_at, id`)
	if err != nil {
		return nil, s.errf(err, "listing servers")
	}
	defer rows.Close()
	var out []ServerRecord
	for rows.Next() {
		r, err := scanServer(rows)
		if err != nil {
			return nil, s.errf(err, "listing servers")
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf(err, "listing servers")
	}
	return out, nil
}

// Server returns the stored server id, or ErrNotFound.
func (s *Store) Server(ctx context.Context, id string) (ServerRecord, error) {
	r, err := scanServer(s.db.QueryRowContext(ctx, `SELECT id, config, enabled, version, created_at, updated_at FROM servers WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ServerRecord{}, fmt.Errorf("server %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return ServerRecord{}, s.errf(err, "reading server %q", id)
	}
	return r, nil
}

// AddServer stores a new server at version 1; ErrExists if its id is
// taken.
func (s *Store) AddServer(ctx context.Context, r ServerRecord) (ServerRecord, error) {
	if err := checkServer(r); err != nil {
		return ServerRecord{}, err
	}
	now := time.Now()
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO servers (id, config, enabled, version, created_at, updated_at)
		VALUES ($1, $2, $3, 1, $4, $4) ON CONFLICT (id) DO NOTHING`, r.ID, string(r.Config), r.Enabled, millis(now))
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errNoRows
		}
		return &wireChange{Kind: ChangeServer, Server: r.ID}, nil
	})
	if errors.Is(err, errNoRows) {
		return ServerRecord{}, fmt.Errorf("server %q: %w", r.ID, ErrExists)
	}
	if err != nil {
		return ServerRecord{}, s.errf(err, "adding server %q", r.ID)
	}
	return s.Server(ctx, r.ID)
}

// UpdateServer replaces a stored server's config and enabled flag, and
// increases its version. With ifVersion > 0 it does so only if the stored
// version is ifVersion (ErrConflict otherwise); ErrNotFound if there is no
// such server.
func (s *Store) UpdateServer(ctx context.Context, r ServerRecord, ifVersion int64) (ServerRecord, error) {
	if err := checkServer(r); err != nil {
		return ServerRecord{}, err
	}
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		res, err := tx.ExecContext(ctx, `UPDATE servers SET config = $1, enabled = $2, version = version + 1, updated_at = $3
		WHERE id = $4 AND ($5 = 0 OR version = $5)`, string(r.Config), r.Enabled, millis(time.Now()), r.ID, ifVersion)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errNoRows
		}
		return &wireChange{Kind: ChangeServer, Server: r.ID}, nil
	})
	if errors.Is(err, errNoRows) {
		return ServerRecord{}, s.missingOrConflict(ctx, r.ID, ifVersion)
	}
	if err != nil {
		return ServerRecord{}, s.errf(err, "updating server %q", r.ID)
	}
	return s.Server(ctx, r.ID)
}

// DeleteServer removes a stored server (and its cached tools), with the
// same ifVersion rule as UpdateServer.
func (s *Store) DeleteServer(ctx context.Context, id string, ifVersion int64) error {
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM servers WHERE id = $1 AND ($2 = 0 OR version = $2)`, id, ifVersion)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errNoRows
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tool_lists WHERE server = $1`, id); err != nil {
			return nil, err
		}
		return &wireChange{Kind: ChangeServer, Server: id}, nil
	})
	if errors.Is(err, errNoRows) {
		return s.missingOrConflict(ctx, id, ifVersion)
	}
	if err != nil {
		return s.errf(err, "deleting server %q", id)
	}
	return nil
}

// missingOrConflict says why a conditional write touched no row.
func (s *Store) missingOrConflict(ctx context.Context, id string, ifVersion int64) error {
	cur, err := s.Server(ctx, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("server %q: version %d, not %d: %w", id, cur.Version, ifVersion, ErrConflict)
}

func checkServer(r ServerRecord) error {
	if r.ID == "" {
		return errors.New("store: a server needs an id")
	}
	if !json.Valid(r.Config) {
		return fmt.Errorf("store: server %q: its config is not JSON", r.ID)
	}
	return nil
}

type scanner interface{ Scan(...any) error }

func scanServer(row scanner) (ServerRecord, error) {
	var r ServerRecord
	var config string
	var created, updated int64
	if err := row.Scan(&r.ID, &config, &r.Enabled, &r.Version, &created, &updated); err != nil {
		return ServerRecord{}, err
	}
	r.Config = json.RawMessage(config)
	r.Created, r.Updated = fromMillis(created), fromMillis(updated)
	return r, nil
}
