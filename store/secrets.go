package store

import (
	"context"
	"database/sql"
	"errors"
	"hash/fnv"
	"time"
)

// Secrets (migration 4) are values a caller keeps in the database sealed,
// under a key the database does not hold (secret.Sealer): the OAuth
// tokens the replicas of a gateway share. The store never sees a value
// in the clear, and treats each as opaque text.

// Secret returns the sealed value stored under name; ok is false when
// there is none.
func (s *Store) Secret(ctx context.Context, name string) (value string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, s.errf(err, "reading secret %q", name)
	}
	return value, true, nil
}

// SetSecret stores the sealed value under name, replacing any it had.
func (s *Store) SetSecret(ctx context.Context, name, value string) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO secrets (name, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		name, value, millis(time.Now())); err != nil {
		return s.errf(err, "storing secret %q", name)
	}
	return nil
}

// DeleteSecret removes name's value and reports whether there was one.
func (s *Store) DeleteSecret(ctx context.Context, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM secrets WHERE name = $1`, name)
	if err != nil {
		return false, s.errf(err, "deleting secret %q", name)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Lock takes the lock called name, which every process on the database
// respects, waiting for another holder until ctx is done, and returns the
// function that releases it. Callers hold it around a read, a slow step
// and a write that must not interleave with another process's: two
// replicas refreshing one OAuth login spend its refresh token once.
//
// On PostgreSQL it is a session advisory lock on a connection of its own,
// released by PostgreSQL if the process dies; on SQLite, a file lock
// beside the database, released by the kernel if the process dies.
func (s *Store) Lock(ctx context.Context, name string) (unlock func(), err error) {
	unlock, err = s.backend.lock(ctx, s.db, name)
	if err != nil {
		return nil, s.errf(err, "taking lock %q", name)
	}
	return unlock, nil
}

// lockKey is name's advisory lock key: PostgreSQL's two-int32 space, which
// does not overlap the one-int64 space migrations and the workflow engine
// use, with lockClass to tell the store's names from anyone else's.
func lockKey(name string) (class, key int32) {
	h := fnv.New32a()
	h.Write([]byte(name))
	return lockClass, int32(h.Sum32())
}

const lockClass = 0x5357 // "SW"
