package workflow

// Which process executes a run. DBOS records the executor that runs each
// workflow and, when an engine launches, recovers only the pending runs of
// its own executor id (and application version). Several processes share
// one database — `switchboard serve`, CLI commands without a serve, the
// replicas of a gateway on one PostgreSQL — so each engine has an executor
// id of its own (kind, pid and a random part), and says it is alive by
// holding a lock that is dropped when its process dies, however it dies:
//
//   - on SQLite, an exclusive lock on a file beside the database, which the
//     kernel drops;
//   - on PostgreSQL, where executors run on several machines and no file
//     is seen by all, a session advisory lock (pg_try_advisory_lock on a
//     hash of the id) held on a connection of the executor's own, which
//     the server drops when the connection ends: the process died, or the
//     machine did and TCP keepalive noticed.
//
// A live engine's runs are never taken by another; the pending runs of an
// executor that is gone are adopted: by a serve when it launches and then
// every AdoptInterval, or by `switchboard runs resume RUN`.
//
// Fencing, on PostgreSQL. A process may lose its lock while it lives: its
// connection drops (the server restarted, a network cut, a pooler, an
// administrator's pg_terminate_backend), and the server releases the lock
// at once. Two rules keep such a process from running a run another has
// adopted: the executor checks its connection every LockCheckInterval
// (with a LockCheckTimeout), and once a check fails its Lost channel is
// closed, for its owner to stop executing at once (the daemon closes its
// engine and exits, to be started again as a new executor); and an
// executor whose lock is found free is taken for gone only once it has
// been free for AdoptGrace, longer than the owner needs to notice and
// stop. A process that notices nothing (stopped by a debugger, frozen
// longer than AdoptGrace) is not fenced by this: see docs/deployment.md.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/jackc/pgx/v5"

	"github.com/switchboardmcp/switchboard/store"
)

// LockCheckInterval is how often an executor on PostgreSQL checks the
// connection holding its lock, and LockCheckTimeout how long a check may
// take before the lock is taken for lost: a database that answers slower
// than that stops this process's runs rather than risk them running twice.
const (
	LockCheckInterval = time.Second
	LockCheckTimeout  = 2 * time.Second
)

// AdoptGrace is how long an executor's lock must have been seen free before
// its runs are adopted: more than an executor that lost it needs to notice
// (LockCheckInterval + LockCheckTimeout) and stop its runs.
const AdoptGrace = 10 * time.Second

// Executor is this process as an executor of runs: its id, alive while the
// Executor is open.
type Executor struct {
	ID string
	// SQLite: the lock files' folder, and this executor's.
	dir string
	f   *os.File
	// PostgreSQL: the connection holding this executor's advisory lock,
	// also used to try the others'; pgx connections are not for
	// concurrent use.
	mu   sync.Mutex
	conn *pgx.Conn
	// free: when each other executor's lock was first seen free (AdoptGrace).
	free  map[string]time.Time
	grace time.Duration
	// lost is closed when the lock is lost (lostErr says how); stop ends
	// the check.
	lost     chan struct{}
	lostErr  error
	stop     chan struct{}
	stopOnce sync.Once
	checking sync.WaitGroup
}

// ErrExecutorLost: the executor's lock on the database is lost, and
// another process may adopt its runs.
var ErrExecutorLost = errors.New("workflow executor lost its lock on the database")

// OpenExecutor makes an executor id of kind ("serve", "cli") for database
// (as EngineOptions.Database) and holds its lock until Close: on
// PostgreSQL an advisory lock on a connection of its own (the database must
// exist: the state store's, opened first), else a lock file in
// ExecutorDir(database).
func OpenExecutor(ctx context.Context, database, kind string) (*Executor, error) {
	if !isPostgres(database) {
		dir, err := ExecutorDir(database)
		if err != nil {
			return nil, err
		}
		return NewExecutor(dir, kind)
	}
	id := newExecutorID(kind)
	cc, err := pgx.ParseConfig(database)
	if err != nil {
		return nil, fmt.Errorf("workflow executors: database %s: %w", store.Describe(database), err)
	}
	// Named, so that an operator sees which backend holds which executor's
	// lock (pg_stat_activity).
	cc.RuntimeParams["application_name"] = "switchboard executor " + id
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("workflow executors: database %s: %w", store.Describe(database), err)
	}
	var held bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, executorKey(id)).Scan(&held); err != nil || !held {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("workflow executors: database %s: locking executor %s: held %v, %v", store.Describe(database), id, held, err)
	}
	x := &Executor{ID: id, conn: conn, free: map[string]time.Time{}, grace: AdoptGrace, lost: make(chan struct{}), stop: make(chan struct{})}
	x.checking.Add(1)
	go x.check()
	return x, nil
}

// Lost is closed when the executor has lost its lock (PostgreSQL only;
// nil, never closed, on SQLite, where the lock is a process's own until
// it dies): its owner must stop executing runs, which another process
// may now adopt.
func (x *Executor) Lost() <-chan struct{} { return x.lost }

// LostErr says how the lock was lost, once Lost is closed.
func (x *Executor) LostErr() error {
	select {
	case <-x.lost:
		return x.lostErr
	default:
		return nil
	}
}

// check checks the lock's connection every LockCheckInterval until Close,
// or until a check fails: the lock is then lost.
func (x *Executor) check() {
	defer x.checking.Done()
	t := time.NewTicker(LockCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-x.stop:
			return
		case <-t.C:
		}
		x.mu.Lock()
		err := x.checkLocked(context.Background())
		x.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// checkLocked asks the server, on the lock's connection, whether it is
// still there (bounded by LockCheckTimeout); when not, the lock is lost.
// x.mu is held.
func (x *Executor) checkLocked(ctx context.Context) error {
	if x.conn == nil {
		select {
		case <-x.lost:
			return x.lostErr
		default:
			return fmt.Errorf("%w: executor %s is closed", ErrExecutorLost, x.ID)
		}
	}
	// Not cancelled with the caller (a step being cancelled): a query
	// interrupted midway ends its connection, and the lock with it.
	ctx = context.WithoutCancel(ctx)
	cctx, cancel := context.WithTimeout(ctx, LockCheckTimeout)
	_, err := x.conn.Exec(cctx, `SELECT 1`)
	cancel()
	if err == nil {
		return nil
	}
	// Let the lock go for certain (a slow server may still hold it): its
	// runs are now for another process to adopt.
	cctx, cancel = context.WithTimeout(ctx, LockCheckTimeout)
	x.conn.Close(cctx)
	cancel()
	x.conn = nil
	x.lostErr = fmt.Errorf("%w: executor %s: %v", ErrExecutorLost, x.ID, err)
	close(x.lost)
	return x.lostErr
}

// Check reports whether the executor holds its lock now, as a step is
// about to call something: on PostgreSQL it asks the server on the lock's
// connection, and a check that fails loses the lock as the periodic one
// does (Lost is closed; the error matches ErrExecutorLost). A lock found
// held may still be lost the moment after: what Check closes is the
// window of up to LockCheckInterval in which a process that lost it (the
// server restarted, the connection was cut) would otherwise go on calling
// steps that another process may adopt. On SQLite, where the lock is the
// process's until it dies, nil.
func (x *Executor) Check(ctx context.Context) error {
	if x == nil || x.stop == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.checkLocked(ctx)
}

// executorKey is the advisory lock key of executor id: 64 bits of a hash,
// in a space of its own (a prefix) so as to meet no other lock's key but
// by a chance that does not matter (a dead executor taken for alive: its
// runs wait for `runs resume`).
func executorKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("switchboard-executor:" + id))
	return int64(h.Sum64())
}

func isPostgres(database string) bool {
	l := strings.ToLower(database)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

func newExecutorID(kind string) string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", kind, os.Getpid(), hex.EncodeToString(b[:]))
}

// ExecutorDir is the folder of the executors' lock files for database (as
// EngineOptions.Database): beside a SQLite file; for PostgreSQL, beside
// the default state file, which OpenExecutor does not use (an advisory lock
// does, seen from every machine).
func ExecutorDir(database string) (string, error) {
	p := strings.TrimPrefix(database, "sqlite:")
	if p == "" || isPostgres(database) {
		var err error
		if p, err = store.DefaultPath(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return abs + "-executors", nil
}

// NewExecutor makes an executor id of kind ("serve", "cli") and holds its
// lock in dir until Close.
func NewExecutor(dir, kind string) (*Executor, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workflow executors: %w", err)
	}
	id := newExecutorID(kind)
	f, err := os.OpenFile(filepath.Join(dir, id+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workflow executors: %w", err)
	}
	if held, err := tryLock(f); !errors.Is(err, errors.ErrUnsupported) && (err != nil || !held) {
		f.Close()
		return nil, fmt.Errorf("workflow executors: locking %s: %v", f.Name(), err)
	}
	return &Executor{ID: id, dir: dir, f: f}, nil
}

// Close says the executor is gone: its lock file is removed, or its
// connection closed. It is idempotent.
func (x *Executor) Close() error {
	if x == nil {
		return nil
	}
	if x.stop != nil {
		x.stopOnce.Do(func() { close(x.stop) })
		x.checking.Wait()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.conn != nil {
		err := x.conn.Close(context.Background())
		x.conn = nil
		return err
	}
	if x.f == nil {
		return nil
	}
	os.Remove(x.f.Name())
	err := x.f.Close()
	x.f = nil
	return err
}

// Alive reports whether the executor id holds its lock (an id that never
// had one, such as the library's "local", is gone). When it cannot tell
// (the database does not answer), it says alive: runs are left alone
// rather than run twice.
func (x *Executor) Alive(id string) bool {
	if id == x.ID {
		return true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.conn != nil {
		return x.alivePostgres(id)
	}
	if x.dir == "" {
		return true // closed, or lost: cannot tell
	}
	p := filepath.Join(x.dir, id+".lock")
	if filepath.Base(p) != id+".lock" {
		return false
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := tryLock(f)
	if err != nil {
		return true // cannot tell: leave its runs alone
	}
	if held {
		os.Remove(p) // its process died without Close
		return false
	}
	return true
}

// alivePostgres tries id's advisory lock on x's connection: taken, the
// executor is gone (the lock is let go at once); held by another session,
// it is alive. x's own session already holding it would take it again,
// which is why x's own id is answered before.
func (x *Executor) alivePostgres(id string) bool {
	// A bound: a database that does not answer must not hold the
	// adoption sweep.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := executorKey(id)
	var got bool
	if err := x.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
		return true
	}
	if !got {
		delete(x.free, id)
		return true
	}
	x.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key)
	// Free: gone, once it has been for the grace (an executor that lost
	// its lock stops its runs within it).
	first, seen := x.free[id]
	if !seen {
		first = time.Now()
		x.free[id] = first
	}
	return time.Since(first) < x.grace
}

// Adopt takes over the pending runs whose executor is gone (alive reports
// false for it): they are re-enqueued and resume, from their last completed
// step, in a live engine on the database (this one, unless another live
// engine's queue runner picks one first). With runIDs, only those runs and
// their nested runs and gates; else every such run. It returns the ids of
// the runs (not nested ones) adopted.
func (e *Engine) Adopt(ctx context.Context, alive func(executorID string) bool, runIDs ...string) ([]string, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	pending, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterStatus(dbos.WorkflowStatusPending))
	if err != nil {
		return nil, fmt.Errorf("listing the pending runs: %w", err)
	}
	parent := map[string]string{}
	for _, st := range pending {
		parent[st.ID] = st.ParentWorkflowID
	}
	root := func(id string) string {
		for i := 0; i < 64 && parent[id] != ""; i++ {
			id = parent[id]
		}
		return id
	}
	var ids, roots []string
	for _, st := range pending {
		if st.ExecutorID == dbos.GetExecutorID(e.dbos) || alive(st.ExecutorID) {
			continue
		}
		if len(e.workflows) == 0 && st.Name != callWorkflowName {
			// An engine with no workflows (serve's for durable calls
			// alone) would fail a run it adopted (ErrDefinition): it is
			// left for one that has them.
			continue
		}
		r := root(st.ID)
		if len(runIDs) > 0 && !slices.Contains(runIDs, r) {
			continue
		}
		ids = append(ids, st.ID)
		if st.ParentWorkflowID == "" {
			roots = append(roots, st.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if _, err := dbos.ResumeWorkflows[any](e.dbos, ids); err != nil {
		return nil, fmt.Errorf("adopting runs %s: %w", strings.Join(roots, ", "), err)
	}
	e.logger.Info("adopted the runs of executors that are gone", "runs", roots)
	return roots, nil
}
