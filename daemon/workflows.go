package daemon

// Workflows in a daemon or a CLI command: the workflow files found, the
// durable engine on the configuration's database with an executor id of
// this process's own, agent steps over the running host, and the engine's
// in-process server that publishes [gateway] workflows as tools.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/telemetry"
	"github.com/switchboardmcp/switchboard/workflow"
)

// LoadWorkflows finds cfg's workflows: the files in workflow.Dirs(getenv)
// and those the configuration lists (workflows = [...]), checked across
// files (ids, nested workflows, cycles) and against the configuration's
// servers (workflow.CheckServers), and every id [gateway] workflows
// publishes defined. Every problem is in the error, each with its file and
// line.
func LoadWorkflows(cfg *config.Config, getenv func(string) string) ([]*workflow.Workflow, error) {
	wfs, err := workflow.List(workflow.Dirs(getenv), cfg.Workflows...)
	errs := []error{err}
	if err := workflow.CheckAll(wfs); err != nil {
		errs = append(errs, err)
	}
	if err := workflow.CheckServers(wfs, cfg); err != nil {
		errs = append(errs, err)
	}
	for _, id := range cfg.Gateway.Workflows {
		if !slices.ContainsFunc(wfs, func(w *workflow.Workflow) bool { return w.ID == id }) {
			var ids []string
			for _, w := range wfs {
				ids = append(ids, w.ID)
			}
			known := "none found"
			if len(ids) > 0 {
				sort.Strings(ids)
				known = "found: " + fmt.Sprint(ids)
			}
			errs = append(errs, fmt.Errorf("[gateway] workflows: no workflow %q (%s)", id, known))
		}
	}
	return wfs, errors.Join(errs...)
}

// WorkflowOptions configures [OpenWorkflows].
type WorkflowOptions struct {
	// Config gives the database ([state] database), the agents' servers
	// and [gateway] workflows.
	Config *config.Config
	// Workflows are the workflows the engine runs (LoadWorkflows).
	Workflows []*workflow.Workflow
	// Kind names the process in its executor id: "serve", "cli".
	Kind string
	// Database is the engine's database, resolved
	// (config.State.ResolveDatabase); "" means Config's [state] database,
	// resolved here with Secrets and LookupEnv.
	Database string
	// Secrets and LookupEnv resolve the placeholders of [state] database
	// (a PostgreSQL password) when Database is "", and of [state]
	// encryption_key, from which the gates' requestState key is derived.
	Secrets   secret.Store
	LookupEnv func(string) (string, bool)
	// Agents runs agent steps (the CLI's, over agent.Steps: the daemon
	// knows no LLM); nil fails them.
	Agents workflow.Agents
	// Redactor redacts what the engine stores and reads back (events, a
	// run's outputs); nil means the host's once launched. OpenWorkflows
	// registers every secret of Config with it (RegisterSecrets), so that
	// a process that only reads runs redacts what others wrote.
	Redactor *secret.Redactor
	Logger   *slog.Logger
	// Telemetry, when set, records the runs (workflowEvents).
	Telemetry *telemetry.Telemetry
	// Calls makes and recovers the engine's durable calls (the gateway's
	// tasks: taskJournal); nil: none.
	Calls workflow.CallRunner
}

// Workflows is a process's workflow engine. Open it with [OpenWorkflows],
// give it its host with Launch once the host is started, and Close it
// before the host.
type Workflows struct {
	Engine   *workflow.Engine
	Executor *workflow.Executor
	cfg      *config.Config
	tel      *telemetry.Telemetry // nil: none
	byID     map[string]*workflow.Workflow
	launched chan struct{}
	once     sync.Once
	// hub passes the engine's events on to FollowRuns.
	hub runHub // the engine's events (EngineOptions.OnEvent), to every FollowRuns
	// sweep ends the adoption sweep (Launch) and done says it has.
	mu     sync.Mutex
	closed bool
	sweep  context.CancelFunc
	done   chan struct{}
}

// AdoptInterval is how often a serve looks for the pending runs of
// executors that are gone (a replica that died) and adopts them: a run
// stalls at most about that long after its process dies.
const AdoptInterval = 5 * time.Second

// OpenWorkflows opens the engine on the configuration's database (the
// state store's file: DBOS's tables and the engine's beside the store's)
// under a new executor of kind, without launching it.
func OpenWorkflows(ctx context.Context, o *WorkflowOptions) (*Workflows, error) {
	// The runs it reads back were written by processes that may have known
	// secrets it has not met (a server it has not started): it redacts
	// with every secret of the configuration.
	if err := o.Config.RegisterSecrets(o.LookupEnv, o.Secrets, o.Redactor); err != nil && o.Logger != nil {
		o.Logger.Debug("workflow runs are redacted without the secrets that did not resolve", "error", err)
	}
	db := o.Database
	if db == "" {
		var err error
		if db, err = o.Config.State.ResolveDatabase(o.LookupEnv, o.Secrets, o.Redactor); err != nil {
			return nil, err
		}
	}
	x, err := workflow.OpenExecutor(ctx, db, o.Kind)
	if err != nil {
		return nil, err
	}
	w := &Workflows{Executor: x, cfg: o.Config, byID: map[string]*workflow.Workflow{}, launched: make(chan struct{}), tel: o.Telemetry}
	for _, wf := range o.Workflows {
		w.byID[wf.ID] = wf
	}
	stateKey, fallbacks, err := derivedStateKey(o.Config.State, "workflow request state v1", o.LookupEnv, o.Secrets, o.Redactor) // nil: the engine's own
	if err != nil {
		x.Close()
		return nil, err
	}
	eo := &workflow.EngineOptions{
		StateKey:          stateKey,
		StateKeyFallbacks: fallbacks,
		Database:          db,
		Agents:            o.Agents,
		Workflows:         w.byID,
		Limits: workflow.Limits{MaxDepth: o.Config.Limits.MaxWorkflowDepth, MaxItems: o.Config.Limits.MaxForEachItems,
			KeepRuns: o.Config.Limits.KeepRuns},
		AppVersion: workflow.AppVersion,
		Executor:   x,
		Redactor:   o.Redactor,
		Logger:     o.Logger,
		Calls:      o.Calls,
	}
	eo.OnEvent = w.hub.publish
	if o.Telemetry != nil {
		record := workflowEvents(o.Telemetry, w.byID)
		eo.OnEvent = func(ev workflow.Event) {
			record(ev)
			w.hub.publish(ev)
		}
		eo.StepContext = func(ctx context.Context, ev workflow.Event) context.Context {
			item := -1
			if ev.Item != nil {
				item = *ev.Item
			}
			return o.Telemetry.WorkflowStepContext(ctx, ev.RunID, ev.Step, item)
		}
		eo.OnStart = func(ctx context.Context, runID, _ string) { o.Telemetry.WorkflowStarting(ctx, runID) }
	}
	e, err := workflow.New(ctx, eo)
	if err != nil {
		x.Close()
		return nil, err
	}
	w.Engine = e
	return w, nil
}

// Workflow returns the workflow id, or nil.
func (w *Workflows) Workflow(id string) *workflow.Workflow { return w.byID[id] }

// List returns the workflows, by id.
func (w *Workflows) List() []*workflow.Workflow {
	out := make([]*workflow.Workflow, 0, len(w.byID))
	for _, wf := range w.byID {
		out = append(out, wf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// InProcess is the server that publishes [gateway] workflows as tools,
// for host.Options.InProcess; ok false when none is published. A call
// that comes before Launch waits for it.
func (w *Workflows) InProcess() (host.InProcessServer, bool, error) {
	ids := w.cfg.Gateway.Workflows
	if len(ids) == 0 {
		return host.InProcessServer{}, false, nil
	}
	ip, err := w.Engine.InProcess(ids, w.cfg.Gateway.WorkflowToolName("{id}"))
	if err != nil {
		return host.InProcessServer{}, false, err
	}
	ip.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				select {
				case <-w.launched:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
	if w.tel != nil {
		// A call's trace context, from its _meta, to Start (OnStart): the
		// run's span is under the host's client span of the call.
		ip.Server.AddReceivingMiddleware(w.tel.ContextMiddleware())
	}
	// Published as [gateway] workflow_tool_format names them
	// (workflow_{id}), not as mcp_workflows_…: the format is the
	// operator's choice of the name clients see.
	ip.OwnNames = true
	// A run waiting on a gate lasts as long as the person takes: the
	// call is not bounded by a server's default timeout.
	ip.Timeout = maxCallTimeout
	return ip, true, nil
}

// maxCallTimeout bounds a call of a published workflow: a run that waits
// on a gate keeps the call open while the person answers.
const maxCallTimeout = 7 * 24 * time.Hour

// Hidden returns the host tool names the published workflows with
// hide_tools call: what the gateway leaves out of its tools.
func (w *Workflows) Hidden() []string {
	var out []string
	for _, id := range w.cfg.Gateway.Workflows {
		if wf := w.byID[id]; wf != nil && wf.HideTools {
			for _, t := range wf.Tools() {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// Launch gives the engine its started host and launches it; with adopt,
// it also takes over the pending runs of executors that are gone, then
// and every AdoptInterval until Close (a replica that dies while this one
// runs has its runs finished here).
func (w *Workflows) Launch(ctx context.Context, h *host.Host, adopt bool) error {
	if err := w.Engine.Launch(ctx, h); err != nil {
		return err
	}
	w.once.Do(func() { close(w.launched) })
	if !adopt {
		return nil
	}
	if _, err := w.Engine.Adopt(ctx, w.Executor.Alive); err != nil {
		return err
	}
	sweepCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		cancel()
		return nil
	}
	w.sweep, w.done = cancel, done
	w.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(AdoptInterval)
		defer t.Stop()
		for {
			select {
			case <-sweepCtx.Done():
				return
			case <-t.C:
				// Errors are the engine's to log; the next sweep tries
				// again.
				w.Engine.Adopt(sweepCtx, w.Executor.Alive)
			}
		}
	}()
	return nil
}

// Close stops the adoption sweep, closes the engine (runs in flight stop
// where they are, to be resumed) and then says the executor is gone.
func (w *Workflows) Close() error {
	err := w.halt()
	return errors.Join(err, w.Executor.Close())
}

// halt stops the adoption sweep and closes the engine: runs in flight stop
// where they are, and no step starts here again.
func (w *Workflows) halt() error {
	w.mu.Lock()
	w.closed = true
	sweep, done := w.sweep, w.done
	w.mu.Unlock()
	if sweep != nil {
		sweep()
		<-done
	}
	return w.Engine.Close()
}

// watchExecutor fences this process when its workflow executor loses its
// lock on the database (workflow.ErrExecutorLost): another replica may
// adopt its runs once the lock has been free for workflow.AdoptGrace, so
// it stops executing them at once (the engine, fenced by the executor,
// calls no step once the lock is lost and closes: a step in flight is
// cancelled, and is called again where the run resumes only if it is
// idempotent), /readyz answers 503 from then on, and fail ends Run with
// the error: the process exits, for its supervisor (systemd's
// Restart=on-failure, a container's restart policy) to start it again, as
// a new executor, when the database is back.
func (d *Daemon) watchExecutor(fail context.CancelCauseFunc) (stop func()) {
	if d.engine == nil || d.engine.Executor.Lost() == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-quit:
			return
		case <-d.engine.Executor.Lost():
		}
		err := d.engine.Executor.LostErr()
		d.fenced.Store(true)
		d.log.Error("workflows: this replica's executor lost its lock on the database; its runs are stopped here, for another replica (or this one, started again) to resume; exiting", "err", d.red.Redact(err.Error()))
		if herr := d.engine.halt(); herr != nil {
			d.log.Debug("workflows: closing the fenced engine", "err", d.red.Redact(herr.Error()))
		}
		fail(err)
	}()
	return sync.OnceFunc(func() {
		close(quit)
		<-done
	})
}

// ErrLiveElsewhere: the run is executed by another live process (a
// serve, or a CLI command's engine), which keeps it.
var ErrLiveElsewhere = errors.New("in another live process (a switchboard serve, or a workflow run): it is not resumed here")

// Resume resumes run id here: a cancelled run from its last completed
// step, or a pending one whose process is gone (adopted). An ended run is
// left as it is; one a live process executes is ErrLiveElsewhere.
func (w *Workflows) Resume(ctx context.Context, id string) error {
	st, err := w.Engine.Get(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case st.State == workflow.RunCancelled:
		return w.Engine.Resume(ctx, id)
	case st.State.Ended():
		return nil
	}
	ids, err := w.Engine.Adopt(ctx, w.Executor.Alive, id)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return fmt.Errorf("run %s is %s %w", id, st.State, ErrLiveElsewhere)
	}
	return nil
}

// runPoll is how often FollowRuns looks for the runs of other processes
// (another serve on the same PostgreSQL database, a CLI command's engine
// on the same file): the engine has no event for those, so they are found
// by listing the newest runs; their events then come as Follow gives
// them. This process's runs need no poll: their events come from the
// engine's own hook (EngineOptions.OnEvent) as each is stored.
const runPoll = time.Second

// runPollLimit is how many of the newest runs each look lists: runs of
// other processes started faster than that within runPoll are missed by
// FollowRuns (their events are still in Engine.Events). This process's
// runs are never missed.
const runPollLimit = 20

// runSubBuffer is how many events a FollowRuns may be behind the engine:
// the hook must not block a run, so a follower further behind loses
// events, and is told how many.
const runSubBuffer = 1024

// runHub passes the engine's events to every FollowRuns of this process.
type runHub = fanout[workflow.Event]

// FollowRuns calls fn with the events of every run from now on: a run
// live now from its next event, a run that starts later (or is resumed)
// from its first, a run that starts and ends at once included. The runs
// this process executes are passed on from the engine's hook as each
// event is stored, none missed unless this follower falls runSubBuffer
// events behind: then lost is called with how many it missed (the
// caller refetches). The runs of other processes (replicas on one
// PostgreSQL database, a CLI command's engine) are found by a poll of the
// newest runPollLimit runs every runPoll and their events read from the
// store (Engine.Follow), so they come within about a second, and runs of
// theirs beyond that many per poll are missed. fn and lost are called
// from one goroutine at a time. FollowRuns returns when ctx ends (nil),
// or fn or lost fails (its error); every goroutine it started has ended
// by then.
func (w *Workflows) FollowRuns(ctx context.Context, fn func(workflow.Event) error, lost func(n int) error) error {
	sub := w.hub.subscribe()
	defer w.hub.unsubscribe(sub)
	// A run that started no earlier than a poll before this call is news,
	// all of it, though the first look finds it: a client that subscribes
	// and then starts a run (through another process) gets its every
	// event, whichever comes first of the first look and the run's start;
	// and clocks of other processes may lag this one a little.
	since := time.Now().Add(-runPoll)
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)

	// polled are the runs of other processes this follows from the store;
	// hub the last seq passed on from the hook of each run of this
	// process. Both keep only the runs of the last poll, and those live.
	type polledRun struct {
		after  int64 // the last event passed on
		active bool  // being followed
		ended  bool  // its terminal event was passed on
	}
	var (
		mu     sync.Mutex // serialises fn and lost; guards the maps
		polled = map[string]*polledRun{}
		hub    = map[string]int64{}
	)
	follow := func(id string, p *polledRun) {
		p.active = true
		wg.Go(func() {
			err := w.Engine.Follow(ctx, id, p.after, func(ev workflow.Event) error {
				mu.Lock()
				defer mu.Unlock()
				if ev.Type.Terminal() {
					// A resumed run's terminal event is withdrawn and
					// its next takes its place.
					p.ended = true
				} else {
					p.after = ev.Seq
				}
				return fn(ev)
			})
			mu.Lock()
			p.active = false
			mu.Unlock()
			if err != nil && ctx.Err() == nil && !errors.Is(err, workflow.ErrNoRun) {
				cancel(err)
			}
		})
	}
	wg.Go(func() {
		tick := time.NewTicker(runPoll)
		defer tick.Stop()
		self := w.Engine.ExecutorID()
		for first := true; ; first = false {
			runs, err := w.Engine.Runs(ctx, &workflow.RunFilter{Limit: runPollLimit})
			if err != nil {
				if ctx.Err() == nil {
					cancel(err)
				}
				return
			}
			mu.Lock()
			listed := map[string]bool{}
			for _, rs := range runs {
				listed[rs.ID] = true
				p := polled[rs.ID]
				if p == nil && rs.Executor == self {
					continue // this process's: the hook passes its events on
				}
				switch {
				case p == nil:
					p = &polledRun{}
					polled[rs.ID] = p
					if last, ok := hub[rs.ID]; ok {
						// Ours until now (resumed elsewhere).
						p.after = last
					} else if first && rs.Started.Before(since) {
						// There before: its past is not news.
						evs, err := w.Engine.Events(ctx, rs.ID, 0)
						if err == nil && len(evs) > 0 {
							p.after = evs[len(evs)-1].Seq
						}
						if rs.State.Ended() {
							p.ended = true
							continue
						}
					}
					// New since the last look, ended already or not: all
					// of it.
					follow(rs.ID, p)
				case p.active, !p.ended, rs.State.Ended():
				default:
					// Resumed since its end, or its end not recorded yet
					// (the run's status lags its terminal event).
					evs, err := w.Engine.Events(ctx, rs.ID, p.after)
					if err == nil && (len(evs) == 0 || !evs[0].Type.Terminal()) {
						p.ended = false
						follow(rs.ID, p)
					}
				}
			}
			for id, p := range polled {
				if !listed[id] && !p.active {
					delete(polled, id)
				}
			}
			for id := range hub {
				if !listed[id] {
					delete(hub, id)
				}
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})

	for {
		select {
		case <-ctx.Done():
			if err := context.Cause(ctx); err != context.Canceled {
				return err
			}
			return nil
		case ev := <-sub.ch:
			mu.Lock()
			var err error
			// A run followed from the store has its events passed on by
			// its follower (one of another process's, adopted here):
			// those it has passed on or will.
			if p := polled[ev.RunID]; p == nil || !p.active && ev.Seq > p.after && !p.ended {
				hub[ev.RunID] = max(hub[ev.RunID], ev.Seq)
				err = fn(ev)
			}
			mu.Unlock()
			if err != nil {
				return err
			}
		case <-sub.lost:
			mu.Lock()
			err := lost(w.hub.takeLost(sub))
			mu.Unlock()
			if err != nil {
				return err
			}
		}
	}
}

// Published reports whether workflow id is published as a tool ([gateway]
// workflows).
func (w *Workflows) Published(id string) bool { return slices.Contains(w.cfg.Gateway.Workflows, id) }
