package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// The tool-list cache: a server's tools as it last listed them, under a
// hash of its launch spec (the host's business), so that a changed server
// never gets a stale list. One list per server is kept: saving a list under
// a new spec drops the old one.

// LoadTools returns the tool list saved for server under spec, when it was
// saved, and the lifetime the server gave it (0: none). ErrNotFound if
// there is none.
func (s *Store) LoadTools(ctx context.Context, server, spec string) (json.RawMessage, time.Time, time.Duration, error) {
	var tools string
	var saved, ttl int64
	err := s.db.QueryRowContext(ctx, `SELECT tools, saved_at, ttl_ms FROM tool_lists WHERE server = $1 AND spec = $2`, server, spec).
		Scan(&tools, &saved, &ttl)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, 0, fmt.Errorf("tools of server %q: %w", server, ErrNotFound)
	}
	if err != nil {
		return nil, time.Time{}, 0, s.errf(err, "reading the tools of server %q", server)
	}
	return json.RawMessage(tools), fromMillis(saved), time.Duration(ttl) * time.Millisecond, nil
}

// SaveTools saves server's tool list under spec, with the lifetime the
// server gave it (0: none), replacing any list saved for the server.
func (s *Store) SaveTools(ctx context.Context, server, spec string, tools json.RawMessage, ttl time.Duration) error {
	if !json.Valid(tools) {
		return fmt.Errorf("store: tools of server %q: not JSON", server)
	}
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		// The other processes are told only when the list itself changed:
		// a replica that hears of a change lists the server again and
		// saves what it got, which must not be announced back.
		var old string
		err := tx.QueryRowContext(ctx, `SELECT tools FROM tool_lists WHERE server = $1 AND spec = $2`, server, spec).Scan(&old)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		changed := err != nil || !sameJSON(old, string(tools))
		if _, err := tx.ExecContext(ctx, `DELETE FROM tool_lists WHERE server = $1 AND spec <> $2`, server, spec); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tool_lists (server, spec, saved_at, ttl_ms, tools) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (server, spec) DO UPDATE SET saved_at = excluded.saved_at, ttl_ms = excluded.ttl_ms, tools = excluded.tools`,
			server, spec, millis(time.Now()), ttl.Milliseconds(), string(tools)); err != nil {
			return nil, err
		}
		if !changed {
			return nil, nil
		}
		return &wireChange{Kind: ChangeTools, Server: server}, nil
	})
	if err != nil {
		return s.errf(err, "saving the tools of server %q", server)
	}
	return nil
}

// sameJSON reports whether two JSON texts hold the same value (a server
// may list the same tools with other spacing or key order).
func sameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
