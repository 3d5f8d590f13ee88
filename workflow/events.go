package workflow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// Events are kept in a table of the engine's database, next to DBOS's
// tables, written as the run goes. An event has a key that names it in the
// run ("step:completed/fetch", "step:started/fetch#2/3"): a run replayed
// after a crash emits the same events again, and the key makes each one
// land once, so sequence numbers are assigned once, in the order events
// first happened, with no gap and no duplicate. Nothing is inserted after
// the run's terminal event.

const eventsTable = "switchboard_run_events"

// eventStore is the engine's SQL, on the tables the store's migrations
// make for it (events, attempts: here; gate answers: gates.go; keys:
// store.Key).
type eventStore struct {
	st       *store.Store
	db       *sql.DB // st's
	sqlite   bool
	red      *secret.Redactor
	onInsert func()
	// onEvent is EngineOptions.OnEvent.
	onEvent func(Event)
}

// close closes the engine's store (after DBOS, which may have closed its
// handle already).
func (s *eventStore) close() error { return s.st.Close() }

// insertTries bounds the retries of an insert that lost a race for its
// sequence number (PostgreSQL; SQLite serialises writers).
const insertTries = 20

// emit stores ev, an event of a run of workflow wf, under key unless an
// event of that key, or a terminal event, is already stored for the run.
// It reports whether it stored it.
func (s *eventStore) emit(ctx context.Context, wf, key string, ev *Event) (bool, error) {
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	terminal := 0
	if ev.Type.Terminal() {
		terminal = 1
	}
	q := `INSERT INTO ` + eventsTable + ` (run_id, seq, key, terminal, body)
		SELECT $1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM ` + eventsTable + ` WHERE run_id = $1), $2, $3, $4
		WHERE NOT EXISTS (SELECT 1 FROM ` + eventsTable + ` WHERE run_id = $1 AND (key = $2 OR terminal = 1))
		RETURNING seq`
	// A run's events are its history: written even when the step that
	// emits them is being cancelled.
	ctx = context.WithoutCancel(ctx)
	for try := 0; ; try++ {
		var seq int64
		err := s.db.QueryRowContext(ctx, q, ev.RunID, key, terminal, string(body)).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil // stored before (a replay), or the run has ended
		}
		if err != nil {
			if try < insertTries && !s.sqlite && uniqueViolation(err) {
				continue
			}
			return false, fmt.Errorf("recording event %s of run %s: %w", ev.Type, ev.RunID, err)
		}
		if s.onInsert != nil {
			s.onInsert()
		}
		if s.onEvent != nil {
			c := *ev
			c.Seq = seq
			c.Workflow = wf
			s.onEvent(c)
		}
		return true, nil
	}
}

// Each attempt of a tool or agent step writes a row of its own here,
// before it calls anything: the durable record that the call may have
// been made. DBOS records a step's outcome after the step, so a step whose
// process died during the call has no outcome and DBOS runs it again on
// recovery; the row says that this attempt started before, and a step
// that is not idempotent is then not called again but interrupted, until
// a person resolves it (Engine.Resolve, whose choice the row keeps:
// exactly one resolution wins).
const attemptsTable = "switchboard_step_attempts"

// markAttempt records that attempt of the run's step (a task key) starts
// here, by executor. It reports false when that attempt had started
// before: in an execution of the step that ended without an outcome (the
// process died, or the run was stopped), or in another process executing
// the same run at once.
func (s *eventStore) markAttempt(ctx context.Context, runID, step string, attempt int, executor string) (bool, error) {
	res, err := s.db.ExecContext(context.WithoutCancel(ctx), `INSERT INTO `+attemptsTable+` (run_id, step, attempt, executor, started)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, step, attempt) DO NOTHING`,
		runID, step, attempt, executor, time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return false, fmt.Errorf("recording that step %s of run %s starts attempt %d: %w", step, runID, attempt, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("recording that step %s of run %s starts attempt %d: %w", step, runID, attempt, err)
	}
	return n == 1, nil
}

// lastAttempt returns the highest attempt of the run's step that started,
// 0 for none.
func (s *eventStore) lastAttempt(ctx context.Context, runID, step string) (int, error) {
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(attempt) FROM `+attemptsTable+` WHERE run_id = $1 AND step = $2`, runID, step).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the attempts of step %s of run %s: %w", step, runID, err)
	}
	return int(n.Int64), nil
}

// resolve records resolution for the interrupted attempt of the run's
// step, unless one is recorded: it returns the resolution that stands,
// and whether it is this one.
func (s *eventStore) resolve(ctx context.Context, runID, step string, attempt int, resolution Resolution) (Resolution, bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE `+attemptsTable+` SET resolution = $1
		WHERE run_id = $2 AND step = $3 AND attempt = $4 AND resolution IS NULL`, string(resolution), runID, step, attempt)
	if err != nil {
		return "", false, fmt.Errorf("resolving step %s of run %s: %w", step, runID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", false, fmt.Errorf("resolving step %s of run %s: %w", step, runID, err)
	} else if n == 1 {
		return resolution, true, nil
	}
	got, err := s.resolution(ctx, runID, step, attempt)
	if err == nil && got == "" {
		err = fmt.Errorf("%w: run %s: step %s has no attempt %d", ErrNotInterrupted, runID, step, attempt)
	}
	return got, false, err
}

// resolution returns the resolution recorded for attempt of the run's
// step, "" for none.
func (s *eventStore) resolution(ctx context.Context, runID, step string, attempt int) (Resolution, error) {
	var got sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT resolution FROM `+attemptsTable+` WHERE run_id = $1 AND step = $2 AND attempt = $3`,
		runID, step, attempt).Scan(&got)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("reading the resolution of step %s of run %s: %w", step, runID, err)
	}
	return Resolution(got.String), nil
}

// list returns the run's events after seq afterSeq, at most limit (0: all).
func (s *eventStore) list(ctx context.Context, runID string, afterSeq int64, limit int) ([]Event, error) {
	q := `SELECT seq, body FROM ` + eventsTable + ` WHERE run_id = $1 AND seq > $2 ORDER BY seq`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.QueryContext(ctx, q, runID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("reading the events of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var seq int64
		var body string
		if err := rows.Scan(&seq, &body); err != nil {
			return nil, err
		}
		var ev Event
		if err := json.Unmarshal([]byte(body), &ev); err != nil {
			return nil, fmt.Errorf("run %s event %d: %w", runID, seq, err)
		}
		ev.Seq = seq
		// Redacted when written, by the redactor of the process that ran
		// the run, which may have known fewer secrets than this one.
		out = append(out, secret.RedactValue(s.red, ev))
	}
	return out, rows.Err()
}

// withdraw removes the run's terminal event: a resumed run goes on.
func (s *eventStore) withdraw(ctx context.Context, runID string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM `+eventsTable+` WHERE run_id = $1 AND terminal = 1`, runID)
	return err
}

// value renders v for an event: redacted of secrets, and cut to
// EventValueBytes (then a JSON string saying so).
func (s *eventStore) value(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	v = secret.RedactValue(s.red, v)
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprintf("(not JSON: %v)", err))
	}
	if s.red != nil {
		// RedactValue redacts the values it walks; a secret may also sit
		// in what it does not (a map key, a number rendered with others).
		b = []byte(s.red.Redact(string(b)))
	}
	if len(b) <= EventValueBytes {
		return b
	}
	cut := b[:EventValueBytes-64]
	for len(cut) > 0 && !utf8.Valid(cut) {
		cut = cut[:len(cut)-1]
	}
	b, _ = json.Marshal(fmt.Sprintf("%s… (cut: %d bytes)", cut, len(b)))
	return b
}

// text redacts a message for an event.
func (s *eventStore) text(t string) string {
	if s.red == nil {
		return t
	}
	return s.red.Redact(t)
}

var errStop = errors.New("stop")

// uniqueViolation reports whether err is PostgreSQL's unique_violation
// (SQLSTATE 23505): two emitters took the same seq. By its code, not its
// text, which the server words in its own language.
func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// setupLock is the key of the advisory lock an engine holds on PostgreSQL
// while DBOS applies its migrations and the events table is made:
// replicas starting at once on a new database take turns, instead of
// racing to create the same schema, types and tables (CREATE … IF NOT
// EXISTS is not safe against a concurrent one: the loser fails with
// unique_violation, and its replica does not start). Another key than the
// state store's, whose migrations take their own turns.
const setupLock = 0x5357_4254_4357 // "SWBTCW"

// lockSetup takes setupLock on a connection of its own and returns what
// releases it. A database that cannot be connected to yet is not locked:
// DBOS creates a missing database (a CLI run on a server of its own) or
// reports why it cannot, as it would have.
func lockSetup(ctx context.Context, u string) (func(), error) {
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		// Unless the start was cancelled: DBOS's own, which follows, is
		// not (its context is the engine's lifetime).
		return func() {}, context.Cause(ctx)
	}
	// Tried, not waited for: a statement waiting on pg_advisory_lock holds
	// a snapshot, and the holder's DBOS migrations create indexes
	// CONCURRENTLY, which wait for every older snapshot to end: the two
	// would wait for each other for ever.
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var got bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(setupLock)).Scan(&got); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("waiting for other processes' migrations: %w", err)
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			conn.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("waiting for other processes' migrations: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
	return func() {
		// Closing the session releases the lock.
		conn.Close(context.WithoutCancel(ctx))
	}, nil
}

// Nothing the engine writes to its database holds a secret its redactor
// knows: not the events (value, text), and not what DBOS keeps of a run —
// its inputs and outputs, each step's outcome, a nested workflow's inputs,
// a gate's message and answer (issue 23 §4). What a run computes (outputs
// a template joined from pieces that are no secret alone, an agent's
// reply, an error that quotes a prompt) is redacted before DBOS stores it,
// and the run goes on with what was stored, so that a recovered run sees
// what the first execution saw. What a person gives (a run's inputs, a
// gate's answer) is refused instead: run on "[REDACTED]", it would do
// something else than asked, without saying so.

// atRest returns v redacted of every secret the engine's redactor knows,
// as DBOS may store it.
func (s *eventStore) atRest(v any) any {
	if v == nil || s.red == nil {
		return v
	}
	return secret.RedactValue(s.red, v)
}

// errAtRest returns rerr with its message redacted, its attempt kept.
func (s *eventStore) errAtRest(rerr *RunError) *RunError {
	if rerr == nil || s.red == nil {
		return rerr
	}
	if m := s.red.Redact(rerr.Message); m != rerr.Message {
		c := *rerr
		c.Message = m
		return &c
	}
	return rerr
}

// secretAt returns where in v (under the path prefix, map keys in
// order) the first value that holds a secret the redactor knows is, and
// "" when none does.
func (s *eventStore) secretAt(prefix string, v any) string {
	if s.red == nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		if s.red.Redact(v) != v {
			return prefix
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if s.red.Redact(k) != k {
				return p + " (its name)"
			}
			if at := s.secretAt(p, v[k]); at != "" {
				return at
			}
		}
	case []any:
		for i, e := range v {
			if at := s.secretAt(fmt.Sprintf("%s[%d]", prefix, i), e); at != "" {
				return at
			}
		}
	default:
		// Numbers, booleans: their JSON text.
		if b, err := json.Marshal(v); err == nil && s.red.Redact(string(b)) != string(b) {
			return prefix
		}
	}
	return ""
}
