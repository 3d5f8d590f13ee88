// Package store keeps Switchboard's state between runs and between
// processes: the MCP servers added at run time (through the REST API), the
// tool-list cache that lets a lazy server offer its tools before it
// starts, and the usage aggregates `switchboard stats` reads (calls,
// errors and latency per server and tool, tokens per agent and workflow;
// per minute for a day, then per hour, bounded: usage.go).
//
// A [Store] is a SQL database behind database/sql. The default is an
// embedded SQLite file (modernc.org/sqlite: pure Go, no cgo) at
// [DefaultPath], $XDG_STATE_HOME/switchboard/switchboard.db; a config's
// `[state] database = "..."` names another file, or a PostgreSQL database
// (postgres://…, through pgx), which several machines share: the replicas
// of a gateway behind a load balancer. The SQL outside sqlite.go and
// postgres.go is written for both (numbered placeholders, ON CONFLICT
// upserts, times as Unix milliseconds, JSON as text); what differs (how
// migrations are serialised, how a change is announced) is the backend's.
// The schema is one list of migrations, the same for both: every table of
// ours, the workflow engine's too, whose SQL is the engine's ([Store.DB]);
// DBOS, which runs the engine, keeps its own tables beside them.
//
// On PostgreSQL, each write announces itself (NOTIFY) and [Store.Watch]
// reports the changes other processes make, so that a server added on one
// replica starts on the others.
//
// [Open] applies the migrations the database lacks, in one transaction, and
// refuses a database written by a newer Switchboard ([ErrNewerSchema])
// rather than guess at its shape. Two processes on one machine (a `serve`
// and a CLI command) may use one database at once: SQLite runs in WAL mode
// (readers never wait for the writer) with a busy timeout, and every write
// is a single statement or one transaction.
//
// Nothing secret is stored in the clear: a server's configuration holds
// placeholders ({{secrets.NAME}}), never resolved values, tool lists are
// what servers published, and the secrets a caller keeps here (the OAuth
// tokens replicas share: secrets.go) it seals first, under a key the
// database does not hold. [Store.Lock] is a lock across the processes on
// the database, for a read, a slow step and a write that must not
// interleave with another process's (an OAuth refresh).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNotFound: no such record.
	ErrNotFound = errors.New("not found")
	// ErrNewerSchema: the database was written by a newer Switchboard.
	ErrNewerSchema = errors.New("the database was written by a newer Switchboard")
	// ErrConflict: the record changed since the version the caller read.
	ErrConflict = errors.New("changed by someone else")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store closed")
)

// Store is a handle on the state database. Its methods are safe for
// concurrent use, also by several processes.
type Store struct {
	db      *sql.DB
	backend backend
	where   string // the file or address, for errors (never a password)
	origin  string // this store, in the changes it announces

	// ctx ends at Close, which waits for the watchers.
	ctx      context.Context
	cancel   context.CancelFunc
	watchers sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// backend is what differs between SQL engines; everything else is shared.
type backend interface {
	// name is "sqlite" or "postgres".
	name() string
	// lockMigrations makes the migrations of processes that open the
	// database at once take turns, within tx.
	lockMigrations(ctx context.Context, tx *sql.Tx) error
	// notify announces a change to the other processes, within tx.
	notify(ctx context.Context, tx *sql.Tx, c wireChange) error
	// lock takes the lock called name across processes (Store.Lock).
	lock(ctx context.Context, db *sql.DB, name string) (func(), error)
}

func newStore(db *sql.DB, b backend, where string) *Store {
	ctx, cancel := context.WithCancel(context.Background())
	return &Store{db: db, backend: b, where: where, origin: newOrigin(), ctx: ctx, cancel: cancel}
}

// Options configures [Open]. Nil means defaults.
type Options struct {
	// BusyTimeout is how long a write waits for another process's write to
	// finish before failing; default 5 s.
	BusyTimeout time.Duration
}

// DefaultPath is the default SQLite database:
// $XDG_STATE_HOME/switchboard/switchboard.db, or
// ~/.local/state/switchboard/switchboard.db.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "switchboard", "switchboard.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("store: no state folder: %w (set XDG_STATE_HOME or [state] database)", err)
	}
	return filepath.Join(home, ".local", "state", "switchboard", "switchboard.db"), nil
}

// Open opens the database named by database and applies the migrations it
// lacks. database is a file path (SQLite), "sqlite:" followed by a path,
// "" for [DefaultPath], or a PostgreSQL URL (postgres://user:password@host/db,
// with pgx's parameters), whose password never appears in errors. The
// folder of a new SQLite file is created, owner-only.
func Open(ctx context.Context, database string, opts *Options) (*Store, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	var s *Store
	var err error
	if isPostgres(database) {
		s, err = openPostgres(ctx, database)
	} else {
		path := strings.TrimPrefix(database, "sqlite:")
		if path == "" {
			if path, err = DefaultPath(); err != nil {
				return nil, err
			}
		}
		s, err = openSQLite(ctx, path, o)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// DB is the store's handle on the database, its one pool. Other packages
// whose tables the migrations make (the workflow engine's, step 5) query
// them through it, and the engine gives it to DBOS on SQLite, which keeps
// its own tables beside the store's and closes the handle when it shuts
// down (so an engine opens a store of its own). Close closes it.
func (s *Store) DB() *sql.DB { return s.db }

// Where is the database's file (or address, without credentials).
func (s *Store) Where() string { return s.where }

// Backend is "sqlite" or "postgres".
func (s *Store) Backend() string { return s.backend.name() }

// Ping checks that the database answers (a readiness probe).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return s.errf(err, "ping")
	}
	return nil
}

// Close ends the watches and closes the database. It is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.watchers.Wait()
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// errf wraps a database error with what was being done and where.
func (s *Store) errf(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
		err = ErrClosed
	}
	return fmt.Errorf("store %s: %s: %w", s.where, fmt.Sprintf(format, args...), err)
}

// millis and fromMillis store times as Unix milliseconds, which every
// engine compares and sorts the same way.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
