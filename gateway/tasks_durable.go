package gateway

// Durable tasks: a task's call, made here as any task's, recorded by a
// journal (Options.TaskJournal: the daemon's workflow engine, on DBOS)
// so that a crash in its flight is recovered by the rule of workflows.
// Only the calls of tools that declare readOnlyHint or idempotentHint are
// recorded: they are the ones recovery calls again, and the others are
// reported interrupted without a record (tasks.go: settle), as a
// non-idempotent step's attempt is. The journal follows a recorded call
// to its end here (FollowTask); when this process stops first (kill -9,
// or a replica that stopped heartbeating), recovery — in the restarted
// process or a surviving replica, exactly one — calls RecoverTask there,
// which makes the call again as the task's, and its outcome is the
// task's. Meanwhile tasks/get reads the row as working (TaskPending):
// the task is not reported interrupted.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/switchboardmcp/switchboard/host"
)

// TaskJournal records the calls of tasks durably (Options.TaskJournal).
type TaskJournal interface {
	// TrackTask records the call of task rec (stored already) to the
	// host's tool tool with args as in flight, made by this gateway,
	// before the task is answered. An error (args that hold a secret's
	// value, which is never stored) leaves the task as any other.
	TrackTask(ctx context.Context, rec TaskRecord, tool string, args json.RawMessage) error
	// TaskPending reports whether task id's call is recorded and has not
	// ended: recovery ends it, and tasks/get must not report it
	// interrupted.
	TaskPending(ctx context.Context, id string) bool
}

// FollowTask waits for the call of task id, made by this gateway, to end,
// and reports true; false at once when this gateway does not make it (it
// was made by a process that stopped). When ctx ends first, or the
// gateway closes before the call ends (its row still working, for
// recovery): true, with ctx's error once it ends.
func (g *Gateway) FollowTask(ctx context.Context, id string) (bool, error) {
	tr := g.localTask(id)
	if tr == nil {
		if g.ctx.Err() == nil {
			return false, nil
		}
		<-ctx.Done() // closing: its tasks are the next process's
		return true, ctx.Err()
	}
	select {
	case <-tr.ended:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	case <-g.ctx.Done():
		<-ctx.Done()
		return true, ctx.Err()
	}
}

// RecoverTask ends task id, whose call to the host's tool tool with args
// was in flight when the process that made it stopped. With again, the
// call is made once more, here, as the task's: its outcome is written as
// the task's, tasks/cancel cancels it, and RecoverTask returns once it
// ended (no client waits on it: a question its upstream asks fails). Else
// the task is reported interrupted. A task that ended, or whose time to
// live is over, is left as it is, or reported interrupted.
func (g *Gateway) RecoverTask(ctx context.Context, id, tool string, args json.RawMessage, again bool) error {
	if g.opts.Tasks == nil {
		return errNoTaskStore
	}
	if g.ctx.Err() != nil {
		<-ctx.Done()
		return ctx.Err()
	}
	rec, err := g.opts.Tasks.Task(ctx, id)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return nil // pruned
	case err != nil:
		return err
	case TaskTerminal(rec.Status):
		return nil
	}
	left := time.Until(rec.Created.Add(rec.TTL))
	if !again || left <= 0 {
		out := interrupted(rec, "the gateway that ran it stopped")
		out.Updated = time.Now()
		_, err := g.opts.Tasks.UpdateTask(ctx, out)
		return err
	}
	cctx, cancel := context.WithCancel(g.requests)
	p := &pendingCall{id: newID(), ctx: cctx, cancel: cancel, asks: make(chan *ask), done: make(chan struct{}),
		dropped: make(chan struct{}), outstanding: map[string]*ask{}}
	p.notify = newNotifyQueue(p.round) // no round: notifications are dropped
	tr := &taskRun{p: p, caller: rec.Caller, rec: rec, outstanding: map[string]*ask{}, ended: make(chan struct{})}
	g.mu.Lock()
	if g.tasks[id] != nil {
		g.mu.Unlock()
		cancel()
		return nil // recovered here already
	}
	g.tasks[id] = tr
	g.taskCallers[rec.Caller]++
	g.mu.Unlock()
	g.log.Info("a task's call, in flight when its gateway stopped, is made again (its tool is idempotent)", "task", id, "tool", tool)
	tr.mu.Lock()
	// This replica owns it now: other replicas leave it to it, and the
	// owner's cancel is forwarded here.
	rec.Owner = g.opts.Replica
	rec.StatusMessage = "called again: its gateway stopped while the call was in flight, and the tool is idempotent"
	g.storeTask(tr, rec)
	tr.mu.Unlock()
	tr.expire = time.AfterFunc(left, func() {
		tr.expired.Store(true)
		cancel()
	})
	g.wg.Add(2)
	go func() {
		defer g.wg.Done()
		// As the task's caller, on its endpoint (guardrail rules scoped
		// by endpoint apply, its usage counts there).
		res, err := g.h.CallTool(host.WithEndpoint(cctx, rec.Endpoint), tool, args,
			&host.CallOptions{PassThrough: true, Caller: rec.Caller, Timeout: left + time.Minute})
		p.res, p.err = callOutcome(cctx, res, err)
		p.notify.close()
		close(p.done)
	}()
	go func() {
		defer g.wg.Done()
		g.superviseTask(tr)
	}()
	select {
	case <-tr.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
