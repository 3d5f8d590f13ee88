package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// Key returns the key named name shared by every process on the database,
// made (32 random bytes) by the first to ask: the replicas of a gateway
// sign what one issues and another verifies with it. It lives in the
// switchboard_keys table, where the workflow engine keeps the key of its
// gates' requestStates; a database's keys are as secret as the database.
func (s *Store) Key(ctx context.Context, name string) ([]byte, error) {
	var k [32]byte
	rand.Read(k[:])
	// ON CONFLICT DO NOTHING: two replicas starting at once make one key.
	if _, err := s.db.ExecContext(ctx, `INSERT INTO switchboard_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		name, base64.StdEncoding.EncodeToString(k[:])); err != nil {
		return nil, s.errf(err, "making key %q", name)
	}
	var key string
	if err := s.db.QueryRowContext(ctx, `SELECT key FROM switchboard_keys WHERE name = $1`, name).Scan(&key); err != nil {
		return nil, s.errf(err, "reading key %q", name)
	}
	b, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(b) < 16 {
		return nil, fmt.Errorf("store: key %q in %s: not a base64 key of 16 bytes or more", name, s.where)
	}
	return b, nil
}

// A Replica is a gateway process serving from the database, and the
// address (host:port) at which the others reach it.
type Replica struct {
	ID, Address string
	// Seen is when it last said it was alive (SaveReplica).
	Seen time.Time
}

// SaveReplica records that replica id serves at address, now: a replica
// calls it when it starts and then periodically, and DeleteReplica when it
// stops.
func (s *Store) SaveReplica(ctx context.Context, id, address string) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO replicas (id, address, seen_at) VALUES ($1, $2, $3)
	ON CONFLICT (id) DO UPDATE SET address = excluded.address, seen_at = excluded.seen_at`, id, address, millis(time.Now())); err != nil {
		return s.errf(err, "recording replica %q", id)
	}
	return nil
}

// Replica returns replica id as last saved; ErrNotFound if there is none.
func (s *Store) Replica(ctx context.Context, id string) (Replica, error) {
	r := Replica{ID: id}
	var seen int64
	err := s.db.QueryRowContext(ctx, `SELECT address, seen_at FROM replicas WHERE id = $1`, id).Scan(&r.Address, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return Replica{}, fmt.Errorf("replica %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Replica{}, s.errf(err, "reading replica %q", id)
	}
	r.Seen = fromMillis(seen)
	return r, nil
}

// DeleteReplica forgets replica id, and replicas not seen since before
// (a zero before forgets none): those that died without a word.
func (s *Store) DeleteReplica(ctx context.Context, id string, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM replicas WHERE id = $1 OR seen_at < $2`, id, millis(before)); err != nil {
		return s.errf(err, "deleting replica %q", id)
	}
	return nil
}
