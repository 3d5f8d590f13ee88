package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"

	"github.com/switchboardmcp/switchboard/host"
)

// RunOptions configures [Run]. Nil means defaults.
type RunOptions struct {
	// Host runs tool steps; it must be started. Nil means a host with no
	// servers (a tool step then fails: its tool is unknown).
	Host *host.Host
	// Agents runs agent steps; nil fails them.
	Agents Agents
	// Workflows are the workflows the run's workflow steps may run, by id.
	Workflows map[string]*Workflow
	// Database is the engine's database (see EngineOptions.Database). ""
	// means a temporary SQLite file, removed when Run returns: the run is
	// then not durable. With a database of its own, a Run that a crash
	// interrupted is resumed by calling Run again with the same RunID.
	Database string
	// RunID is the run's id; "" means a random one.
	RunID string
	// OnEvent receives each of the run's events, in order, on Run's
	// goroutine.
	OnEvent func(Event)
	// Answer answers a gate: it gets the gate's gate:waiting event (its
	// Step, Item, Text and Schema) and returns the person's answer. Nil: a
	// gate ends Run with ErrGateUnanswered, the run still waiting (answered
	// later through an Engine on the same Database).
	Answer func(ctx context.Context, gate Event) (GateAnswer, error)
	// Resolve resolves a step the run is interrupted at (a step that is not
	// idempotent, in flight when the process running it stopped: see
	// Engine.Resolve): it gets the step's step:interrupted event (its
	// Step, Item and Attempt) and returns a person's choice. Nil: an
	// interrupted step ends Run with ErrUnresolved, the run still
	// interrupted (resolved later through an Engine on the same Database).
	Resolve func(ctx context.Context, step Event) (Resolution, error)
	// Logger receives the engine's and DBOS's logs; nil discards them.
	Logger *slog.Logger
	// Limits bounds the run (EngineOptions.Limits); zero fields mean the
	// defaults. Workflows is not checked with CheckAll: a workflow that
	// runs itself stops at Limits.MaxDepth.
	Limits Limits
}

// ErrGateUnanswered: [Run] met a gate and RunOptions.Answer is nil.
var ErrGateUnanswered = errors.New("workflow: a gate waits and RunOptions.Answer is nil")

// ErrUnresolved: [Run] met an interrupted step and RunOptions.Resolve is
// nil.
var ErrUnresolved = errors.New("workflow: a step is interrupted and RunOptions.Resolve is nil")

// Run runs wf once with inputs, on an engine of its own, and returns the
// run's status when it ends: completed (Outputs), failed (Error, also
// returned as the error: a *RunError) or cancelled. A run is cancelled when
// ctx ends. It is the library form of `switchboard workflow run`, for Go
// programs.
func Run(ctx context.Context, wf *Workflow, inputs map[string]any, opts *RunOptions) (*RunStatus, error) {
	o := RunOptions{}
	if opts != nil {
		o = *opts
	}
	if wf == nil {
		return nil, errors.New("workflow: Run: no workflow")
	}
	if o.Database == "" {
		dir, err := os.MkdirTemp("", "switchboard-run-")
		if err != nil {
			return nil, fmt.Errorf("workflow %s: %w", wf.ID, err)
		}
		defer os.RemoveAll(dir)
		o.Database = filepath.Join(dir, "run.db")
	}
	h := o.Host
	if h == nil {
		var err error
		if h, err = host.New(nil, nil); err != nil {
			return nil, err
		}
		defer h.Close()
		if err := h.Start(ctx); err != nil {
			return nil, err
		}
	}
	wfs := maps.Clone(o.Workflows)
	if wfs == nil {
		wfs = map[string]*Workflow{}
	}
	wfs[wf.ID] = wf
	e, err := New(ctx, &EngineOptions{Database: o.Database, Host: h, Agents: o.Agents, Workflows: wfs, Logger: o.Logger, Limits: o.Limits})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	id, err := e.Start(ctx, wf.ID, inputs, &StartOptions{RunID: o.RunID})
	if err != nil {
		return nil, err
	}
	// A run started before (the same RunID on the same Database) replays
	// its events: its answered gates are not asked again.
	past, err := e.Events(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	answered := map[string]bool{}
	resolved := map[string]bool{} // by step and attempt
	attemptKey := func(ev *Event) string { return fmt.Sprintf("%s#%d", taskKey(ev.Step, itemOf(ev)), ev.Attempt) }
	for _, ev := range past {
		switch ev.Type {
		case EventGateAnswered:
			answered[taskKey(ev.Step, itemOf(&ev))] = true
		case EventStepResolved:
			resolved[attemptKey(&ev)] = true
		}
	}
	err = e.Follow(ctx, id, 0, func(ev Event) error {
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
		if ev.Type == EventStepInterrupted && !resolved[attemptKey(&ev)] {
			step := taskKey(ev.Step, itemOf(&ev))
			if o.Resolve == nil {
				return fmt.Errorf("%w: run %s, step %s", ErrUnresolved, id, step)
			}
			how, err := o.Resolve(ctx, ev)
			if err != nil {
				return fmt.Errorf("run %s: resolving step %s: %w", id, step, err)
			}
			resolved[attemptKey(&ev)] = true
			return e.Resolve(ctx, id, step, how)
		}
		gate := taskKey(ev.Step, itemOf(&ev))
		switch {
		case ev.Type == EventGateAnswered:
			answered[gate] = true
			return nil
		case ev.Type != EventGateWaiting || answered[gate]:
			return nil
		case o.Answer == nil:
			return fmt.Errorf("%w: run %s, gate %s", ErrGateUnanswered, id, gate)
		}
		a, err := o.Answer(ctx, ev)
		if err != nil {
			return fmt.Errorf("run %s: answering gate %s: %w", id, gate, err)
		}
		answered[gate] = true
		return e.Answer(ctx, id, gate, a)
	})
	switch {
	case ctx.Err() != nil:
		e.Cancel(context.WithoutCancel(ctx), id)
		return nil, ctx.Err()
	case err != nil:
		st, _ := e.Get(context.WithoutCancel(ctx), id)
		return st, fmt.Errorf("workflow %s: %w", wf.ID, err)
	}
	st, err := e.Wait(ctx, id)
	if err != nil {
		return nil, err
	}
	if st.Error != nil {
		return st, st.Error
	}
	return st, nil
}
