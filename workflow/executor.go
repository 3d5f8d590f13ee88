package workflow

// Which process executes a run. DBOS records the executor that runs each
// workflow and, when an engine launches, recovers only the pending runs of
// its own executor id (and application version). Several processes share
// one database — `switchboard serve`, and CLI commands without a serve —
// so each engine has an executor id of its own (kind, pid and a random
// part), and says it is alive by holding an exclusive lock on a file
// beside the database, which the kernel drops when the process dies. A
// live engine's runs are never taken by another; the pending runs of an
// executor that is gone are adopted: by the next serve when it launches,
// or by `switchboard runs resume RUN`.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/switchboardmcp/switchboard/store"
)

// Executor is this process as an executor of runs: its id, alive while the
// Executor is open.
type Executor struct {
	ID  string
	dir string
	f   *os.File
}

// ExecutorDir is the folder of the executors' lock files for database (as
// EngineOptions.Database): beside a SQLite file; for PostgreSQL, beside
// the default state file (executors on other machines are not seen: a
// later issue's).
func ExecutorDir(database string) (string, error) {
	p := strings.TrimPrefix(database, "sqlite:")
	if p == "" || strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://") {
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
	var b [4]byte
	rand.Read(b[:])
	id := fmt.Sprintf("%s-%d-%s", kind, os.Getpid(), hex.EncodeToString(b[:]))
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

// Close says the executor is gone: its lock file is removed.
func (x *Executor) Close() error {
	if x == nil || x.f == nil {
		return nil
	}
	os.Remove(x.f.Name())
	err := x.f.Close()
	x.f = nil
	return err
}

// Alive reports whether the executor id holds its lock in the folder of x
// (an id without a lock file, such as the library's "local", is gone).
func (x *Executor) Alive(id string) bool {
	if id == x.ID {
		return true
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
