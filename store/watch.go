package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// Change propagation. Several processes on one PostgreSQL database (the
// replicas of a gateway) each run a host over the stored servers: a change
// one of them makes must reach the others. Every write announces itself
// with PostgreSQL's NOTIFY inside its transaction (so a change is announced
// if and only if it committed), and [Store.Watch] LISTENs on a connection
// of its own. NOTIFY carries no data a listener must trust: a change names
// what to read again, and the listener reads it from the database.

// ChangeKind says what changed.
type ChangeKind string

const (
	// ChangeServer: a stored server was added, updated, enabled,
	// disabled or deleted; read it again (ErrNotFound: deleted).
	ChangeServer ChangeKind = "server"
	// ChangeTools: a server's cached tool list changed.
	ChangeTools ChangeKind = "tools"
	// ChangeEndpoint: a stored endpoint was added, updated or deleted;
	// read it again (ErrNotFound: deleted).
	ChangeEndpoint ChangeKind = "endpoint"
	// ChangePins: tool pins were approved, imported or forgotten, of
	// Server's tools ("" for any server's); look at the tools again.
	ChangePins ChangeKind = "pins"
	// ChangeAll: changes may have been missed (the connection to the
	// database was lost and is back); read every server again.
	ChangeAll ChangeKind = "all"
)

// Change is a change made by another process on the database.
type Change struct {
	Kind ChangeKind
	// Server is the server whose record or tools changed; "" for
	// ChangeAll.
	Server string
	// Endpoint is the endpoint of a ChangeEndpoint.
	Endpoint string
}

// wireChange is a change as NOTIFY carries it: Origin is the store that
// made it, so that a store's own changes are not reported back to it.
type wireChange struct {
	Origin   string     `json:"o"`
	Kind     ChangeKind `json:"k"`
	Server   string     `json:"s,omitempty"`
	Endpoint string     `json:"e,omitempty"`
}

// listener receives the payloads of the change notifications.
type listener interface {
	next(ctx context.Context) (string, error)
	close()
}

// Watch bounds for re-listening after the connection is lost: quick at
// first, never hammering a database that is down.
const (
	relistenMin = 100 * time.Millisecond
	relistenMax = 5 * time.Second
)

// Watch reports the changes that other processes make on the database
// (through their own Store), until ctx ends or the store is closed; then
// the channel is closed. A change made through s itself is not reported.
//
// On PostgreSQL, changes arrive within milliseconds of their commit (LISTEN
// on a connection of the watch's own). When that connection is lost, the
// watch connects again (with backoff) and then reports ChangeAll, since
// changes made meanwhile were not heard. The error is that of the first
// connection. On SQLite, one machine's file, nothing is reported: the
// channel only closes.
func (s *Store) Watch(ctx context.Context) (<-chan Change, error) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	out := make(chan Change, 16)
	pb, ok := s.backend.(postgresBackend)
	if !ok {
		s.watchers.Add(1)
		go func() {
			defer s.watchers.Done()
			defer stop()
			<-ctx.Done()
			close(out)
		}()
		return out, nil
	}
	l, err := pb.listen(ctx)
	if err != nil {
		stop()
		cancel()
		return nil, s.errf(err, "listening for changes")
	}
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		defer stop()
		defer cancel()
		defer close(out)
		wait := relistenMin
		for {
			payload, err := l.next(ctx)
			if err != nil {
				l.close()
				if ctx.Err() != nil {
					return
				}
				for {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
					wait = min(2*wait, relistenMax)
					if l, err = pb.listen(ctx); err == nil {
						break
					}
				}
				wait = relistenMin
				if !send(ctx, out, Change{Kind: ChangeAll}) {
					l.close()
					return
				}
				continue
			}
			var c wireChange
			if json.Unmarshal([]byte(payload), &c) != nil || c.Origin == s.origin {
				continue
			}
			switch c.Kind {
			case ChangeServer, ChangeTools, ChangeEndpoint, ChangePins, ChangeAll:
			default:
				c.Kind = ChangeAll // from a newer Switchboard: read everything
			}
			if !send(ctx, out, Change{Kind: c.Kind, Server: c.Server, Endpoint: c.Endpoint}) {
				l.close()
				return
			}
		}
	}()
	return out, nil
}

func send(ctx context.Context, out chan<- Change, c Change) bool {
	select {
	case out <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

// write runs f in a transaction and announces change (unless nil) in it.
func (s *Store) write(ctx context.Context, f func(tx *sql.Tx) (*wireChange, error)) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	c, err := f(tx)
	if err != nil {
		return err
	}
	if c != nil {
		c.Origin = s.origin
		if err := s.backend.notify(ctx, tx, *c); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// errNoRows is what a write's f returns when it touched no row: the
// transaction is rolled back and the caller says why.
var errNoRows = errors.New("no row")

func newOrigin() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
