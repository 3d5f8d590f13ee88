package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// PostgreSQL-only SQL lives in this file.

// notifyChannel is the LISTEN/NOTIFY channel a store announces its changes
// on, to the other processes on the database (see Watch).
const notifyChannel = "switchboard_state"

// migrationLock is the key of the advisory lock migrations hold: replicas
// starting at once take turns instead of racing to create the tables
// (PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against a
// concurrent one).
const migrationLock = 0x5357_4254_4348 // "SWBTCH"

type postgresBackend struct{ url string }

func (postgresBackend) name() string { return "postgres" }

func (postgresBackend) lockMigrations(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock))
	return err
}

// notify announces c in tx: PostgreSQL delivers it to the listeners when,
// and only if, tx commits.
func (postgresBackend) notify(ctx context.Context, tx *sql.Tx, c wireChange) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, string(b))
	return err
}

// lock takes a session advisory lock on a connection kept for it, so that
// the unlock is on the session that locked. If the unlock fails, the
// connection is discarded, which ends the session and so the lock.
func (postgresBackend) lock(ctx context.Context, db *sql.DB, name string) (func(), error) {
	class, key := lockKey(name)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, $2)`, class, key); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // the wait may still be on the server
		conn.Close()
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		defer cancel()
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1, $2)`, class, key); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}

// unlockTimeout bounds an unlock; past it the connection is dropped, which
// releases the lock as surely.
const unlockTimeout = 10 * time.Second

func (b postgresBackend) listen(ctx context.Context) (listener, error) {
	conn, err := pgx.Connect(ctx, b.url)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+notifyChannel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return &pgListener{conn}, nil
}

type pgListener struct{ conn *pgx.Conn }

func (l *pgListener) next(ctx context.Context) (string, error) {
	n, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		return "", err
	}
	return n.Payload, nil
}

func (l *pgListener) close() { l.conn.Close(context.Background()) }

// openPostgres opens the PostgreSQL database at url (postgres://…).
func openPostgres(ctx context.Context, url string) (*Store, error) {
	where := Describe(url)
	db, err := sql.Open("pgx", url)
	if err != nil {
		// pgx's parse errors may quote the URL: say only where.
		return nil, fmt.Errorf("store %s: not a valid PostgreSQL address", where)
	}
	s := newStore(db, postgresBackend{url: url}, where)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, s.errf(err, "connecting")
	}
	return s, nil
}

// isPostgres reports whether database is a PostgreSQL address.
func isPostgres(database string) bool {
	l := strings.ToLower(database)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Describe renders a database for messages: a SQLite path as it is, a
// PostgreSQL URL without its password, which may be in the user part or
// in the query.
func Describe(database string) string {
	if !isPostgres(database) {
		return database
	}
	u, err := neturl.Parse(database)
	if err != nil {
		return "postgres://… (not a valid URL)"
	}
	if u.User != nil {
		u.User = neturl.User(u.User.Username())
	}
	if q := u.Query(); q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
