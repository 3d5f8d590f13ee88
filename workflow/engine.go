package workflow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // DBOS on SQLite (modernc, pure Go)

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// AppVersion is the DBOS application version the engine runs under unless
// EngineOptions says otherwise. DBOS recovers only the runs of its current
// application version, and its default is a hash of the binary: an upgraded
// binary would leave every run it did not start pending forever. The
// engine checks a run's workflow definition itself (its Digest), so the
// version only changes when the engine's own recording changes shape.
const AppVersion = "switchboard-workflows-1"

// appName is the DBOS application name: it owns the rows of the system
// database this engine writes.
const appName = "switchboard"

// Names of the DBOS workflows the engine registers. They are what the
// system database records, so they are part of the stored format.
const (
	runWorkflowName  = "switchboard.run"
	gateWorkflowName = "switchboard.gate"
)

// gateTopic is the DBOS topic a gate's answer is sent on.
const gateTopic = "answer"

// ErrClosed is returned by an engine's methods after Close.
var ErrClosed = errors.New("workflow: engine closed")

// ErrNoRun is returned for a run id the engine does not know.
var ErrNoRun = errors.New("workflow: no such run")

// ErrNotWaiting is returned by Answer when the run is not waiting on that
// gate.
var ErrNotWaiting = errors.New("workflow: the run is not waiting on that gate")

// ErrGateAnswered is returned by Answer when the gate was answered already,
// by another answer or by its timeout: exactly one answer closes a gate,
// however many arrive at once, and every other answerer is told it lost.
var ErrGateAnswered = errors.New("workflow: the gate was answered already")

// ErrHoldsSecret is matched by the error of a run's inputs or a gate's
// answer that holds the value of a secret: refused, since both are kept in
// the state database.
var ErrHoldsSecret = errors.New("holds the value of a secret")

// ErrInputsDiffer is returned by Start for a run id (or an idempotency
// key: see InProcess) that names a run started with other inputs.
var ErrInputsDiffer = errors.New("workflow: a run of that id was started with other inputs")

// Agents runs an agent step: the CLI and the daemon provide it, so that
// this package knows nothing of providers and models.
type Agents interface {
	// RunAgent runs the agent req names with its prompt, over the servers
	// and tools req selects, and returns its final answer.
	RunAgent(ctx context.Context, req *AgentRequest) (*AgentResult, error)
}

// AgentRequest is one agent step's run.
type AgentRequest struct {
	// Agent is the agent (found like `switchboard run NAME`, or a path).
	Agent  string
	Prompt string
	// MCPServers are the ids of the servers the agent may use, and Tools
	// the host names of the tools it may see, as the run, the step and
	// the workflow select them (see Selection), in the form of
	// `switchboard run --mcp` and `--tools`: nil, the agent file's own;
	// empty, none.
	MCPServers []string
	Tools      []string
}

// AgentResult is an agent step's result: templates read it as
// .steps.ID.result.text, .steps.ID.result.usage and
// .steps.ID.result.failed_servers.
type AgentResult struct {
	Text  string         `json:"text"`
	Usage map[string]any `json:"usage,omitempty"`
	// FailedServers are the agent's servers that failed to start (an
	// optional server that could not start, RobotLab's
	// failed_mcp_server_names): the run went on without their tools.
	FailedServers []string `json:"failed_servers,omitempty"`
}

// EngineOptions configures [New]. Nil means defaults.
type EngineOptions struct {
	// Database is the engine's database, the state store's (store.Open:
	// a SQLite file path, "sqlite:" and a path, or a postgres:// URL); ""
	// means its default file (store.DefaultPath), which `[state] database`
	// changes. The engine opens a store of its own on it.
	Database string
	// Host runs tool steps (Host.CallTool: validated and timed out like any
	// call). Nil: New does not launch; call Launch with the host once it
	// is started, since the host may need the engine's in-process server
	// (InProcess) first.
	Host *host.Host
	// Agents runs agent steps; nil fails them.
	Agents Agents
	// Workflows is the registry, by id. Runs of a workflow not in it, or
	// whose definition changed since they started, fail with ErrDefinition.
	Workflows map[string]*Workflow
	// Limits bounds runs: how deeply they nest, how many items a
	// for_each has. Zero fields mean the defaults.
	Limits Limits
	// AppVersion is DBOS's application version; "" means AppVersion.
	AppVersion string
	// ExecutorID names this process to DBOS (runs are recovered by the
	// executor that started them); "" means "local", or Executor's.
	ExecutorID string
	// Executor, when set, is this process as an executor of runs
	// (OpenExecutor), and ExecutorID its ID. The engine is fenced by it:
	// each tool or agent step checks, right before it calls anything,
	// that the executor still holds its lock (Executor.Check), and calls
	// nothing otherwise; and once the lock is lost (Executor.Lost) the
	// engine closes itself, stopping its runs where they are without
	// recording anything, for the process that adopts them.
	Executor *Executor
	// Redactor redacts what the engine stores (events, and what DBOS
	// keeps of a run: inputs, outputs, step outcomes) and what it reads
	// back (a run's status and events); nil means the host's, once
	// launched. An engine that only reads runs (not launched) redacts with
	// this one: give it the configuration's secrets.
	Redactor *secret.Redactor
	// StateKey signs the requestStates of gates (32 bytes or more), the
	// same for every engine on the database; nil means a key made once in
	// the database (switchboard_keys), which whoever reads the database
	// could sign with.
	StateKey []byte
	// StateKeyFallbacks also verify gates' requestStates, and never sign
	// one: the keys being rotated in or out. Used only with StateKey.
	StateKeyFallbacks [][]byte
	// Logger receives the engine's and DBOS's logs; nil discards them.
	Logger *slog.Logger
	// OnEvent, when set, is called with every event of every run once it
	// is stored (once per event, even when a recovered run replays it),
	// with Workflow set to the run's workflow id whatever the event's
	// type, and Seq the one the event was stored under. Events of one run
	// emitted at once (parallel steps) may reach it out of Seq's order.
	// It is called on the run's goroutine and must not block: telemetry's
	// runs and steps and the daemon's live event stream
	// (daemon.Workflows.FollowRuns) attach here.
	OnEvent func(Event)
	// StepContext, when set, gives the context a tool or agent step's
	// attempt runs in (its tool call, its agent run), from the step's
	// context and the attempt's step:started event (RunID, Workflow,
	// Step, Item, Attempt set): telemetry puts the step's span there, so
	// that the calls it makes are children of it. The context returned
	// must derive from the one given (its deadline and cancellation
	// hold).
	StepContext func(ctx context.Context, ev Event) context.Context
	// OnStart, when set, is called by Start as it starts a new run (not
	// one that exists), with Start's context, before the run's first
	// event: telemetry takes the caller's trace context there, so that
	// the run's span is a child of the call that started it.
	OnStart func(ctx context.Context, runID, workflow string)
	// Calls makes the durable calls of StartCall (durablecall.go), and
	// recovers those in flight when their process stopped; nil refuses
	// StartCall (a call recovered then waits until the engine closes).
	Calls CallRunner
}

// Engine runs workflows durably on DBOS. Its methods are safe for
// concurrent use.
type Engine struct {
	opts      EngineOptions
	dbos      dbos.Context
	events    *eventStore
	workflows map[string]*Workflow
	limits    Limits // opts.Limits with defaults
	logger    *slog.Logger

	mu       sync.Mutex
	host     *host.Host
	red      *secret.Redactor
	launched bool
	closed   bool
	closing  atomic.Bool // Close has begun: DBOS's shutdown noise is dropped
	// published are InProcess's servers (see published).
	published []*published
	// kick is closed and replaced whenever a run or a gate of this
	// process ends, so that steps waiting on one look again at once.
	kick chan struct{}

	// watchers are the goroutines that wake waiters when a run started
	// here has its status recorded (Start), and prune (pruneSoon).
	watchers sync.WaitGroup
	// pruning: a prune of this engine runs (pruneSoon).
	pruning atomic.Bool
	// lastCallPrune is when the end of a durable call last started a
	// prune (UnixNano).
	lastCallPrune atomic.Int64

	closeOnce sync.Once
	closeErr  error

	// runKey is the key of the run ids of calls with an idempotency key
	// (see keyedRunID), read from the database once.
	runKey []byte

	// testHookGateTimedOut, when set, is called by a gate's workflow when
	// its wait for an answer timed out, before the timeout closes the gate.
	testHookGateTimedOut func(run, gate string)
	// unfence stops the watch of opts.Executor's Lost (fenced says it
	// fired).
	unfence func()
	fenced  atomic.Bool
}

// New opens the engine's database, applies its migrations and registers
// the engine with DBOS. With opts.Host set it also launches DBOS, which
// recovers the runs this executor left pending; otherwise call Launch.
func New(ctx context.Context, opts *EngineOptions) (*Engine, error) {
	o := EngineOptions{}
	if opts != nil {
		o = *opts
	}
	if o.AppVersion == "" {
		o.AppVersion = AppVersion
	}
	if o.Executor != nil && o.ExecutorID == "" {
		o.ExecutorID = o.Executor.ID
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e := &Engine{opts: o, workflows: maps.Clone(o.Workflows), limits: o.Limits.withDefaults(), logger: o.Logger, kick: make(chan struct{}), unfence: func() {}}
	if e.workflows == nil {
		e.workflows = map[string]*Workflow{}
	}
	cfg := dbos.Config{
		AppName:            appName,
		ApplicationVersion: o.AppVersion,
		ExecutorID:         o.ExecutorID,
		Logger:             slog.New(&dbosLog{next: o.Logger.Handler(), closing: &e.closing}),
	}
	// The engine's tables are the store's (its migrations make them), on
	// a store of the engine's own: DBOS, given the store's one connection
	// on SQLite (so that its writers and the engine's queue in Go: see
	// store/sqlite.go), closes it when it shuts down.
	var st *store.Store
	var err error
	where := store.Describe(o.Database)
	unlock := func() {}
	defer func() { unlock() }()
	if isPostgres(o.Database) {
		// DBOS first, on a pool of its own: it creates a missing database
		// (a CLI run on a server of its own). Its migrations and the
		// store's take turns with other processes' (setupLock).
		cfg.DatabaseURL = o.Database
		if unlock, err = lockSetup(ctx, o.Database); err != nil {
			return nil, fmt.Errorf("workflow: database %s: %w", where, err)
		}
	} else {
		if st, err = store.Open(ctx, o.Database, nil); err != nil {
			return nil, fmt.Errorf("workflow: %w", err)
		}
		cfg.SQLiteSystemDB, where = st.DB(), st.Where()
	}
	d, err := dbos.NewContext(context.WithoutCancel(ctx), cfg)
	if err != nil {
		if st != nil {
			st.Close()
		}
		return nil, fmt.Errorf("workflow: database %s: %w", where, err)
	}
	e.dbos = d
	if st == nil {
		if st, err = store.Open(ctx, o.Database, nil); err != nil {
			dbos.Shutdown(d, time.Second)
			return nil, fmt.Errorf("workflow: %w", err)
		}
	}
	e.events = &eventStore{st: st, db: st.DB(), sqlite: st.Backend() == "sqlite"}
	// The tables are made: the next process's turn (not after Launch,
	// whose recovery may take a while).
	unlock()
	unlock = func() {}
	e.events.onInsert = e.wake
	e.events.onEvent = o.OnEvent
	e.red, e.events.red = o.Redactor, o.Redactor
	dbos.RegisterWorkflow(d, e.runWorkflow, dbos.WithWorkflowName(runWorkflowName))
	dbos.RegisterWorkflow(d, e.gateWorkflow, dbos.WithWorkflowName(gateWorkflowName))
	dbos.RegisterWorkflow(d, e.callWorkflow, dbos.WithWorkflowName(callWorkflowName))
	e.unfence = e.watchExecutor()
	if o.Host != nil {
		if err := e.Launch(ctx, o.Host); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// Launch gives the engine its host and launches DBOS, which recovers the
// runs this executor left pending (interrupted runs resume from their last
// completed step; gates that were waiting wait again). It is called once,
// by New when EngineOptions.Host is set.
func (e *Engine) Launch(ctx context.Context, h *host.Host) error {
	if h == nil {
		return errors.New("workflow: Launch: no host")
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	if e.launched {
		e.mu.Unlock()
		return errors.New("workflow: already launched")
	}
	e.host, e.launched = h, true
	if e.red == nil {
		e.red = h.Redactor()
	}
	e.events.red = e.red
	published := e.published
	e.mu.Unlock()
	for _, p := range published {
		e.publish(p, h) // annotated from the host's tools, now known
	}
	if err := dbos.Launch(e.dbos); err != nil {
		return fmt.Errorf("workflow: launching DBOS: %w", err)
	}
	e.pruneSoon()
	return nil
}

// shutdownTimeout bounds how long Close waits for the runs in flight to
// stop: they are not lost (DBOS resumes them at the next start), so a
// slow tool must not hold the process.
const shutdownTimeout = 10 * time.Second

// Close stops DBOS (runs in flight stop where they are, to be resumed by
// the next engine on the database) and closes the database. It waits at
// most shutdownTimeout, is idempotent, and leaves no goroutine the engine
// started.
func (e *Engine) Close() error {
	e.unfence()
	e.closeOnce.Do(e.close)
	return e.closeErr
}

func (e *Engine) close() {
	e.closing.Store(true)
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.closeErr = dbos.Shutdown(e.dbos, shutdownTimeout)
	e.watchers.Wait()
	if err := e.events.close(); err != nil && e.closeErr == nil {
		e.closeErr = err
	}
}

// watchExecutor closes the engine when its executor loses its lock
// (EngineOptions.Executor): another process may adopt its runs, and
// nothing here may go on with them. It returns what stops the watch.
func (e *Engine) watchExecutor() (stop func()) {
	x := e.opts.Executor
	if x == nil || x.Lost() == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-quit:
		case <-x.Lost():
			e.fenced.Store(true)
			e.logger.Warn("workflow: this process's executor lost its lock on the database; the engine closes, its runs stop here for another process to resume", "executor", x.ID, "error", e.events.text(fmt.Sprint(x.LostErr())))
			e.closeOnce.Do(e.close)
		}
	}()
	return sync.OnceFunc(func() {
		close(quit)
		<-done
	})
}

// fence returns an error when this engine's executor does not hold its
// lock now (EngineOptions.Executor): nothing may be called for a run.
func (e *Engine) fence(ctx context.Context) error {
	if e.opts.Executor == nil {
		return nil
	}
	return e.opts.Executor.Check(ctx)
}

// Workflow returns the registered workflow id, or nil.
func (e *Engine) Workflow(id string) *Workflow { return e.workflows[id] }

// wake tells every waiter of this process to look again.
func (e *Engine) wake() {
	e.mu.Lock()
	close(e.kick)
	e.kick = make(chan struct{})
	e.mu.Unlock()
}

// kicked returns a channel closed at the next wake.
func (e *Engine) kicked() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kick
}

func (e *Engine) hostRedactor() (*host.Host, *secret.Redactor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.host, e.red
}

// newRunID returns a random run id.
func newRunID() string {
	var b [12]byte
	rand.Read(b[:])
	return "run-" + hex.EncodeToString(b[:])
}

// dbosLog passes DBOS's log records on, except once the engine closes:
// DBOS's background loops then report every query the shutdown cancels
// ("context canceled") as warnings and errors, which are not.
type dbosLog struct {
	next    slog.Handler
	closing *atomic.Bool
}

func (h *dbosLog) Enabled(ctx context.Context, l slog.Level) bool {
	return !h.closing.Load() && h.next.Enabled(ctx, l)
}

func (h *dbosLog) Handle(ctx context.Context, r slog.Record) error {
	if h.closing.Load() {
		return nil
	}
	if r.Level == slog.LevelWarn && cancellation(r) {
		r.Level = slog.LevelDebug
		if !h.next.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.next.Handle(ctx, r)
}

// cancellation reports whether r is one of the warnings DBOS logs on the
// way through a cancellation the engine asked for (Ctrl-C on `workflow
// run`, `runs cancel`): a receive (a gate's answer) whose context was
// cancelled, and the cancelled run's function finding that it no longer
// owns the run (DBOS says so in two ways, depending on which it meets
// first: the run's ID taken, or its outcome not recorded). Neither is
// news to the user, who asked for it; a run lost to another executor is
// told by the engine itself (ErrExecutorLost). DBOS's other warnings
// pass as they are.
func cancellation(r slog.Record) bool {
	switch r.Message {
	case "Workflow ID conflict detected. Waiting for existing workflow to complete",
		"Workflow outcome was not recorded: the workflow is no longer owned by this execution. Waiting for the recorded outcome":
		return true
	}
	if !strings.HasSuffix(r.Message, " context cancelled") {
		return false
	}
	cancelled := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "cause" {
			err, ok := a.Value.Any().(error)
			cancelled = ok && errors.Is(err, context.Canceled)
			return false
		}
		return true
	})
	return cancelled
}

func (h *dbosLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &dbosLog{next: h.next.WithAttrs(as), closing: h.closing}
}

func (h *dbosLog) WithGroup(name string) slog.Handler {
	return &dbosLog{next: h.next.WithGroup(name), closing: h.closing}
}
