package workflow

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A gate takes exactly one answer. Whoever closes it first claims it with
// a row keyed by the gate (its DBOS workflow id) in gateAnswersTable: an
// answer (Engine.Answer) claims it and sends its message to the gate in
// the same transaction, so that a claim never stands without its message
// nor a message without its claim; a gate whose wait timed out claims it
// for the timeout (gateWorkflow). Whoever finds the row taken lost, and is
// told so (ErrGateAnswered) instead of being told its answer was taken
// and then dropped. An answer that claims the gate just after its wait
// timed out, before the timeout's claim, wins: the gate finds the claim
// taken and receives that answer.
//
// A row holds the action only (accept, decline, timeout), never an
// answer's content, and there is one per gate answered: the table grows
// with the runs, like their events.

const gateAnswersTable = "switchboard_gate_answers"

// claimGate claims gate (a gate's DBOS workflow id) for action and, if it
// won, calls also (when set) in the same transaction, committed only if
// also succeeds. When gate was claimed already it returns won false and
// the action that claimed it.
func (s *eventStore) claimGate(ctx context.Context, gate, action string, also func(*sql.Tx) error) (won bool, winner string, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, "", fmt.Errorf("claiming gate %s: %w", gate, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO `+gateAnswersTable+` (gate, action, at_ms) VALUES ($1, $2, $3) ON CONFLICT (gate) DO NOTHING`,
		gate, action, time.Now().UnixMilli())
	if err != nil {
		return false, "", fmt.Errorf("claiming gate %s: %w", gate, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, "", fmt.Errorf("claiming gate %s: %w", gate, err)
	}
	if n == 0 {
		// Taken: on PostgreSQL the insert waited for the claim it met to
		// commit, so the row is there to read.
		if err := tx.QueryRowContext(ctx, `SELECT action FROM `+gateAnswersTable+` WHERE gate = $1`, gate).Scan(&winner); err != nil {
			return false, "", fmt.Errorf("reading the claim of gate %s: %w", gate, err)
		}
		return false, winner, nil
	}
	if also != nil {
		if err := also(tx); err != nil {
			return false, "", err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, "", fmt.Errorf("claiming gate %s: %w", gate, err)
	}
	return true, action, nil
}

// gateClaim returns the action that claimed gate, or "" when none has.
func (s *eventStore) gateClaim(ctx context.Context, gate string) (string, error) {
	var action string
	err := s.db.QueryRowContext(ctx, `SELECT action FROM `+gateAnswersTable+` WHERE gate = $1`, gate).Scan(&action)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the claim of gate %s: %w", gate, err)
	}
	return action, nil
}

// answeredErr is ErrGateAnswered for gate of run, closed by action.
func answeredErr(run, gate, action string) error {
	how := map[string]string{"accept": "accepted", "decline": "declined", "timeout": "closed by its timeout"}[action]
	if how == "" {
		how = action
	}
	return fmt.Errorf("%w: gate %s of run %s was %s; this answer was not taken", ErrGateAnswered, gate, run, how)
}
