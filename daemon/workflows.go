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
// files (ids, nested workflows, cycles), and every id [gateway] workflows
// publishes defined. Every problem is in the error, each with its file and
// line.
func LoadWorkflows(cfg *config.Config, getenv func(string) string) ([]*workflow.Workflow, error) {
	wfs, err := workflow.List(workflow.Dirs(getenv), cfg.Workflows...)
	errs := []error{err}
	if err := workflow.CheckAll(wfs); err != nil {
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
	// (a PostgreSQL password) when Database is "".
	Secrets   secret.Store
	LookupEnv func(string) (string, bool)
	// Agents runs agent steps (the CLI's, over agent.Steps: the daemon
	// knows no LLM); nil fails them.
	Agents workflow.Agents
	// Redactor redacts the engine's events; nil means the host's.
	Redactor *secret.Redactor
	Logger   *slog.Logger
	// Telemetry, when set, records the runs (workflowEvents).
	Telemetry *telemetry.Telemetry
}

// Workflows is a process's workflow engine. Open it with [OpenWorkflows],
// give it its host with Launch once the host is started, and Close it
// before the host.
type Workflows struct {
	Engine   *workflow.Engine
	Executor *workflow.Executor
	cfg      *config.Config
	byID     map[string]*workflow.Workflow
	launched chan struct{}
	once     sync.Once
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
	w := &Workflows{Executor: x, cfg: o.Config, byID: map[string]*workflow.Workflow{}, launched: make(chan struct{})}
	for _, wf := range o.Workflows {
		w.byID[wf.ID] = wf
	}
	eo := &workflow.EngineOptions{
		Database:   db,
		Agents:     o.Agents,
		Workflows:  w.byID,
		AppVersion: workflow.AppVersion,
		ExecutorID: x.ID,
		Redactor:   o.Redactor,
		Logger:     o.Logger,
	}
	if o.Telemetry != nil {
		eo.OnEvent = workflowEvents(o.Telemetry, w.byID)
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
// it stops executing them at once (the engine closes: a step in flight is
// cancelled, and runs again where they resume), /readyz answers 503 from
// then on, and fail ends Run with the error: the process exits, for its
// supervisor (systemd's Restart=on-failure, a container's restart policy)
// to start it again, as a new executor, when the database is back.
func (d *Daemon) watchExecutor(fail context.CancelCauseFunc) (stop func()) {
	if d.wf == nil || d.wf.Executor.Lost() == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-quit:
			return
		case <-d.wf.Executor.Lost():
		}
		err := d.wf.Executor.LostErr()
		d.fenced.Store(true)
		d.log.Error("workflows: this replica's executor lost its lock on the database; its runs are stopped here, for another replica (or this one, started again) to resume; exiting", "err", d.red.Redact(err.Error()))
		if herr := d.wf.halt(); herr != nil {
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

// runPoll is how often FollowRuns looks for new runs: the engine has no
// event for a run started (by this process, a CLI command's engine or
// another serve on the same database), so new runs are found by listing
// the newest; their events then come as Follow gives them.
const runPoll = time.Second

// runPollLimit is how many of the newest runs each look lists: runs
// started faster than that within runPoll are missed by FollowRuns
// (their events are still in Engine.Events).
const runPollLimit = 20

// FollowRuns calls fn with the events of every run from now on, as the
// engine's Follow gives them: a run live now from its next event, a run
// that starts later (or is resumed) from its first. fn is called from one
// goroutine at a time. It returns when ctx ends (nil) or fn fails (its
// error); every goroutine it started has ended by then.
func (w *Workflows) FollowRuns(ctx context.Context, fn func(workflow.Event) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex           // serialises fn; guards the maps
		after   = map[string]int64{} // the last event passed on of each run
		active  = map[string]bool{}  // runs being followed
		ended   = map[string]bool{}  // runs whose terminal event was passed on
		started = false
	)
	defer wg.Wait()
	follow := func(id string, from int64) {
		active[id] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := w.Engine.Follow(ctx, id, from, func(ev workflow.Event) error {
				mu.Lock()
				defer mu.Unlock()
				if ev.Type.Terminal() {
					// A resumed run's terminal event is withdrawn and
					// its next takes its place.
					ended[id] = true
				} else {
					after[id] = ev.Seq
				}
				return fn(ev)
			})
			mu.Lock()
			active[id] = false
			mu.Unlock()
			if err != nil && ctx.Err() == nil && !errors.Is(err, workflow.ErrNoRun) {
				cancel(err)
			}
		}()
	}
	tick := time.NewTicker(runPoll)
	defer tick.Stop()
	for {
		runs, err := w.Engine.Runs(ctx, &workflow.RunFilter{Limit: runPollLimit})
		if err != nil && ctx.Err() == nil {
			return err
		}
		mu.Lock()
		for _, rs := range runs {
			last, seen := after[rs.ID]
			switch {
			case active[rs.ID]:
			case !started:
				// There before: its past is not news.
				evs, err := w.Engine.Events(ctx, rs.ID, 0)
				if err == nil && len(evs) > 0 {
					last = evs[len(evs)-1].Seq
				}
				after[rs.ID] = last
				if !rs.State.Ended() {
					follow(rs.ID, last)
				}
			case rs.State.Ended():
			case ended[rs.ID]:
				// Resumed since its end, or its end not recorded yet (the
				// run's status lags its terminal event).
				evs, err := w.Engine.Events(ctx, rs.ID, last)
				if err == nil && (len(evs) == 0 || !evs[0].Type.Terminal()) {
					ended[rs.ID] = false
					follow(rs.ID, last)
				}
			default:
				// New.
				if !seen {
					last = 0
				}
				follow(rs.ID, last)
			}
		}
		started = true
		mu.Unlock()
		select {
		case <-ctx.Done():
			if err := context.Cause(ctx); err != context.Canceled {
				return err
			}
			return nil
		case <-tick.C:
		}
	}
}

// Published reports whether workflow id is published as a tool ([gateway]
// workflows).
func (w *Workflows) Published(id string) bool { return slices.Contains(w.cfg.Gateway.Workflows, id) }
