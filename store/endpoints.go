package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// EndpointRecord is a named MCP endpoint added at run time. Endpoints of
// config files are not stored: they stay read-only in their files, and a
// stored endpoint cannot take their names or paths (the daemon checks).
type EndpointRecord struct {
	Name string
	// Config is the endpoint as JSON (the caller's encoding of an
	// [[endpoints]] table). Its token appears only as a placeholder.
	Config json.RawMessage
	// Version increases with every change (an HTTP ETag); set by the
	// store, as are Created and Updated.
	Version          int64
	Created, Updated time.Time
}

// Endpoints returns every stored endpoint, oldest first.
func (s *Store) Endpoints(ctx context.Context) ([]EndpointRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, config, version, created_at, updated_at FROM endpoints ORDER BY created_at, name`)
	if err != nil {
		return nil, s.errf(err, "listing endpoints")
	}
	defer rows.Close()
	var out []EndpointRecord
	for rows.Next() {
		r, err := scanEndpoint(rows)
		if err != nil {
			return nil, s.errf(err, "listing endpoints")
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf(err, "listing endpoints")
	}
	return out, nil
}

// Endpoint returns the stored endpoint name, or ErrNotFound.
func (s *Store) Endpoint(ctx context.Context, name string) (EndpointRecord, error) {
	r, err := scanEndpoint(s.db.QueryRowContext(ctx, `SELECT name, config, version, created_at, updated_at FROM endpoints WHERE name = $1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return EndpointRecord{}, fmt.Errorf("endpoint %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return EndpointRecord{}, s.errf(err, "reading endpoint %q", name)
	}
	return r, nil
}

// AddEndpoint stores a new endpoint at version 1; ErrExists if its name is
// taken.
func (s *Store) AddEndpoint(ctx context.Context, r EndpointRecord) (EndpointRecord, error) {
	if err := checkEndpoint(r); err != nil {
		return EndpointRecord{}, err
	}
	now := time.Now()
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO endpoints (name, config, version, created_at, updated_at)
		VALUES ($1, $2, 1, $3, $3) ON CONFLICT (name) DO NOTHING`, r.Name, string(r.Config), millis(now))
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errNoRows
		}
		return &wireChange{Kind: ChangeEndpoint, Endpoint: r.Name}, nil
	})
	if errors.Is(err, errNoRows) {
		return EndpointRecord{}, fmt.Errorf("endpoint %q: %w", r.Name, ErrExists)
	}
	if err != nil {
		return EndpointRecord{}, s.errf(err, "adding endpoint %q", r.Name)
	}
	return s.Endpoint(ctx, r.Name)
}

// UpdateEndpoint replaces a stored endpoint's config and increases its
// version. With ifVersion > 0 it does so only if the stored version is
// ifVersion (ErrConflict otherwise); ErrNotFound if there is none.
func (s *Store) UpdateEndpoint(ctx context.Context, r EndpointRecord, ifVersion int64) (EndpointRecord, error) {
	if err := checkEndpoint(r); err != nil {
		return EndpointRecord{}, err
	}
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		res, err := tx.ExecContext(ctx, `UPDATE endpoints SET config = $1, version = version + 1, updated_at = $2
		WHERE name = $3 AND ($4 = 0 OR version = $4)`, string(r.Config), millis(time.Now()), r.Name, ifVersion)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errNoRows
		}
		return &wireChange{Kind: ChangeEndpoint, Endpoint: r.Name}, nil
	})
	if errors.Is(err, errNoRows) {
		return EndpointRecord{}, s.endpointMissingOrConflict(ctx, r.Name, ifVersion)
	}
	if err != nil {
		return EndpointRecord{}, s.errf(err, "updating endpoint %q", r.Name)
	}
	return s.Endpoint(ctx, r.Name)
}

// DeleteEndpoint removes a stored endpoint, with the same ifVersion rule
// as UpdateEndpoint.
func (s *Store) DeleteEndpoint(ctx context.Context, name string, ifVersion int64) error {
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM endpoints WHERE name = $1 AND ($2 = 0 OR version = $2)`, name, ifVersion)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errNoRows
		}
		return &wireChange{Kind: ChangeEndpoint, Endpoint: name}, nil
	})
	if errors.Is(err, errNoRows) {
		return s.endpointMissingOrConflict(ctx, name, ifVersion)
	}
	if err != nil {
		return s.errf(err, "deleting endpoint %q", name)
	}
	return nil
}

// endpointMissingOrConflict says why a conditional write touched no row.
func (s *Store) endpointMissingOrConflict(ctx context.Context, name string, ifVersion int64) error {
	cur, err := s.Endpoint(ctx, name)
	if err != nil {
		return err
	}
	return fmt.Errorf("endpoint %q: version %d, not %d: %w", name, cur.Version, ifVersion, ErrConflict)
}

func checkEndpoint(r EndpointRecord) error {
	if r.Name == "" {
		return errors.New("store: an endpoint needs a name")
	}
	if !json.Valid(r.Config) {
		return fmt.Errorf("store: endpoint %q: its config is not JSON", r.Name)
	}
	return nil
}

func scanEndpoint(row scanner) (EndpointRecord, error) {
	var r EndpointRecord
	var config string
	var created, updated int64
	if err := row.Scan(&r.Name, &config, &r.Version, &created, &updated); err != nil {
		return EndpointRecord{}, err
	}
	r.Config = json.RawMessage(config)
	r.Created, r.Updated = fromMillis(created), fromMillis(updated)
	return r, nil
}
