package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardmcp/switchboard/internal/flock"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// SQLite-only SQL lives in this file.

type sqliteBackend struct{ path string }

func (sqliteBackend) name() string { return "sqlite" }

// lockMigrations: nothing to do, the transaction took the write lock as it
// began (_txlock=immediate).
func (sqliteBackend) lockMigrations(context.Context, *sql.Tx) error { return nil }

// notify: nothing to do; a SQLite file is one machine's, and Watch reports
// nothing on it.
func (sqliteBackend) notify(context.Context, *sql.Tx, wireChange) error { return nil }

// lock: a file lock beside the database, one file per name (a SQLite file
// is one machine's, and its processes share its folder). Where files
// cannot be locked (not unix), it fails with errors.ErrUnsupported.
func (b sqliteBackend) lock(ctx context.Context, _ *sql.DB, name string) (func(), error) {
	_, key := lockKey(name)
	return flock.Lock(ctx, fmt.Sprintf("%s.lock-%08x", b.path, uint32(key)), nil)
}

// openSQLite opens (creating if needed, owner-only) the SQLite file at path.
func openSQLite(ctx context.Context, path string, o Options) (*Store, error) {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", path, err)
		}
		path = abs
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store %s: creating its folder: %w", path, err)
	}
	// Create the file owner-only before SQLite does (it would use 0644);
	// its -wal and -shm files take the same permissions.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	f.Close()
	q := url.Values{}
	// WAL: readers never wait for the writer, so a CLI command reads while
	// serve writes. busy_timeout: a write waits that long for another
	// process's write instead of failing at once. _txlock=immediate: a
	// transaction takes the write lock when it begins, so two processes
	// migrating at once take turns instead of one failing on upgrade.
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	// One connection: this process's writers (the store's, the workflow
	// engine's and DBOS's, which share it) queue in Go instead of meeting
	// SQLITE_BUSY, whose handler sleeps 1, 2, 5, 10… ms between tries.
	// Under concurrency those sleeps were the cost of a workflow step: 20
	// steps at once went from 4.1 to 1.1 ms of overhead a step, 50
	// concurrent runs from 10 to 65 runs/s (docs/performance.md). SQLite
	// has one writer anyway, and no user of the handle (the store, the
	// engine, DBOS v1.8.0's sysdb) holds a connection while asking for
	// another. Other processes on the file still wait through busy_timeout.
	db.SetMaxOpenConns(1)
	s := newStore(db, sqliteBackend{path: path}, path)
	if err := pingSQLite(ctx, db, o.BusyTimeout); err != nil {
		db.Close()
		return nil, s.errf(err, "opening")
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, s.errf(err, "reading the journal mode")
	}
	if mode != "wal" {
		db.Close()
		return nil, s.errf(errors.New("journal_mode is "+mode), "WAL mode refused (is the file on a network file system?)")
	}
	return s, nil
}

// pingSQLite opens db's first connection, which switches a new file to
// WAL. That switch needs the file to itself, and SQLite answers
// SQLITE_BUSY at once, without its busy handler, to a connection that
// meets another one switching the same new file (several processes, or
// goroutines, opening a new database at once): the ping is tried again,
// for up to wait.
func pingSQLite(ctx context.Context, db *sql.DB, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err := db.PingContext(ctx)
		var se interface{ Code() int }
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay): // another connection is switching the file to WAL: a moment
		}
	}
}

// sqliteBusy is SQLite's primary result code SQLITE_BUSY.
const sqliteBusy = 5
