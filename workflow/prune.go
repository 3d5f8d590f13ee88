package workflow

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
)

// Runs are kept until Limits.KeepRuns ended runs are newer: nothing else
// removes a run's rows (DBOS's: its status, its steps' outcomes, its
// nested runs and gates; ours: its events, attempts and gate answers), so
// without a bound the database grows with every run for good.

// pruneBatch is how many runs one round of Prune deletes: one DBOS delete
// and one transaction of ours each.
const pruneBatch = 200

// pruneTimeout bounds one Prune started by the engine itself.
const pruneTimeout = time.Minute

// endedStatuses are the DBOS statuses of a run that has ended. A run
// waiting on a gate, or interrupted, is pending: never pruned.
var endedStatuses = []dbos.WorkflowStatusType{dbos.WorkflowStatusSuccess, dbos.WorkflowStatusError,
	dbos.WorkflowStatusCancelled, dbos.WorkflowStatusMaxRecoveryAttemptsExceeded}

// Prune deletes the ended runs beyond Limits.KeepRuns, oldest first (by
// start): each with its nested runs, gates and resolutions, and its
// events, attempts and gate answers. A run that has not ended (running,
// waiting on a gate, interrupted) is kept whatever its age; a cancelled
// run that is pruned can no longer be resumed. It returns how many runs
// it deleted, with the ended durable calls (StartCall), none of which is
// kept. The engine prunes on its own once at Launch and as the runs
// it started end; engines on one database may prune at once.
func (e *Engine) Prune(ctx context.Context) (int, error) {
	if err := e.closedErr(); err != nil {
		return 0, err
	}
	n, err := e.pruneCalls(ctx)
	if err != nil {
		return n, err
	}
	for {
		list, err := dbos.ListWorkflows(e.dbos, dbos.WithFilterName(runWorkflowName), dbos.WithFilterHasParent(false),
			dbos.WithFilterStatus(endedStatuses...), dbos.WithFilterSortDesc(),
			dbos.WithFilterOffset(e.limits.KeepRuns), dbos.WithFilterLimit(pruneBatch))
		if err != nil {
			return n, fmt.Errorf("workflow: listing the runs to prune: %w", err)
		}
		if len(list) == 0 {
			return n, nil
		}
		ids := make([]string, len(list))
		for i := range list {
			ids[i] = list[i].ID
		}
		// Ours first: a run whose DBOS rows outlive a failure here is
		// found again by the next Prune; rows of ours whose run DBOS no
		// longer lists would never be.
		if err := e.events.forget(ctx, ids); err != nil {
			return n, err
		}
		if err := dbos.DeleteWorkflows(e.dbos, ids, dbos.WithDeleteChildren()); err != nil {
			return n, fmt.Errorf("workflow: deleting %d runs: %w", len(ids), err)
		}
		n += len(ids)
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}

// pruneSoon prunes in the background, unless a prune of this engine runs
// already (the runs that end meanwhile are its too).
func (e *Engine) pruneSoon() {
	if !e.pruning.CompareAndSwap(false, true) {
		return
	}
	e.watchers.Go(func() {
		defer e.pruning.Store(false)
		ctx, cancel := context.WithTimeout(e.dbos, pruneTimeout)
		defer cancel()
		n, err := e.Prune(ctx)
		switch {
		case err != nil && e.closedErr() == nil:
			e.logger.Warn("workflow: pruning ended runs", "pruned", n, "keep_runs", e.limits.KeepRuns, "error", err)
		case n > 0:
			e.logger.Info("workflow: pruned the oldest ended runs", "pruned", n, "keep_runs", e.limits.KeepRuns)
		}
	})
}

// forget deletes the rows of ours of runs ids and of what they nested
// (whose ids, like their gates', are the run's id and "/…": a top-level
// run's id has no "/").
func (s *eventStore) forget(ctx context.Context, ids []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("workflow: pruning runs: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		// substr, not LIKE: a run id a caller chose may hold % or _.
		n := utf8.RuneCountInString(id) + 1
		for _, q := range []string{
			`DELETE FROM ` + eventsTable + ` WHERE run_id = $1 OR substr(run_id, 1, $2) = $3`,
			`DELETE FROM ` + attemptsTable + ` WHERE run_id = $1 OR substr(run_id, 1, $2) = $3`,
			`DELETE FROM ` + gateAnswersTable + ` WHERE gate = $1 OR substr(gate, 1, $2) = $3`,
		} {
			if _, err := tx.ExecContext(ctx, q, id, n, id+"/"); err != nil {
				return fmt.Errorf("workflow: pruning run %s: %w", id, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("workflow: pruning runs: %w", err)
	}
	return nil
}
