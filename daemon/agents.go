package daemon

// Agents run from the management faces (issue 16): an agent started with
// a prompt over the daemon's host, its events kept in memory as they come
// so that a page or a script can follow the run from its start, and the
// run cancelled. The daemon knows no LLM: Options.AgentRunner (the CLI's,
// over agent.Steps) runs them; the daemon keeps the runs.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/switchboardmcp/switchboard/host"
)

// AgentRunner runs agents over a running host, for Options.AgentRunner.
type AgentRunner interface {
	// ListAgents lists the agents that can be run, by id.
	ListAgents() ([]AgentInfo, error)
	// RunAgent runs the agent name with prompt over h, the run named
	// runID, calling emit with each of its events in order (a terminal
	// one last) until it ends; cancelling ctx cancels it. The error is
	// one that kept the run from starting.
	RunAgent(ctx context.Context, h *host.Host, name, prompt, runID string, emit func(AgentEvent)) error
}

// AgentInfo is an agent that can be run.
type AgentInfo struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	Model       string `json:"model,omitempty"`
	File        string `json:"file"`
}

// AgentEvent is one event of an agent run: its type and sequence number,
// and the event as the runner gave it (agent.Event's JSON, redacted).
type AgentEvent struct {
	Type     string          `json:"type"`
	Seq      int64           `json:"seq"`
	Terminal bool            `json:"-"`
	Data     json.RawMessage `json:"data"`
}

// ErrNoAgents: the daemon has no AgentRunner.
var ErrNoAgents = errors.New("this daemon runs no agents")

// ErrNoAgent: no agent the runner lists has that id.
var ErrNoAgent = errors.New("no such agent")

// ErrNoAgentRun: no agent run has that id (it never was, or it was
// forgotten: maxAgentRuns).
var ErrNoAgentRun = errors.New("no such agent run")

// Agent run states (AgentRun.State).
const (
	AgentRunning   = "running"
	AgentCompleted = "completed"
	AgentFailed    = "failed"
	AgentCancelled = "cancelled"
)

// AgentRun is an agent run's status.
type AgentRun struct {
	ID      string    `json:"id"`
	Agent   string    `json:"agent"`
	State   string    `json:"state"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// Error says why the run failed to start or failed.
	Error string `json:"error,omitempty"`
	// Text is a completed run's answer.
	Text string `json:"text,omitempty"`
	// FailedServers are the run's servers that failed to start (its
	// run:started event's, then its terminal event's): it went without
	// their tools.
	FailedServers []string `json:"failed_servers,omitempty"`
}

// maxAgentRuns bounds the runs kept in memory: the oldest ended ones are
// forgotten past it. maxAgentEvents bounds one run's events kept (a long
// run's token deltas); past it only its terminal event is kept.
const (
	maxAgentRuns   = 100
	maxAgentEvents = 10000
)

// agentRun is a run and its events.
type agentRun struct {
	mu     sync.Mutex
	st     AgentRun
	events []AgentEvent
	more   chan struct{} // closed and replaced at each event
	cancel context.CancelFunc
}

// agents are the daemon's agent runs.
type agents struct {
	mu   sync.Mutex
	runs []*agentRun // oldest first
	hub  fanout[AgentRunEvent]
	wg   sync.WaitGroup
	ctx  context.Context
	stop context.CancelFunc
}

func (d *Daemon) agentRunner() (AgentRunner, *host.Host, error) {
	if d.opts.AgentRunner == nil {
		return nil, nil, ErrNoAgents
	}
	h := d.Host()
	if h == nil {
		return nil, nil, ErrNotRunning
	}
	return d.opts.AgentRunner, h, nil
}

// ListAgents lists the agents the daemon can run.
func (d *Daemon) ListAgents() ([]AgentInfo, error) {
	if d.opts.AgentRunner == nil {
		return nil, ErrNoAgents
	}
	return d.opts.AgentRunner.ListAgents()
}

// StartAgentRun starts the agent name (an id ListAgents gives: never a
// path, which would run any file the daemon can read) with prompt over the
// daemon's host. The run lives on the daemon (Close cancels it), not on
// the caller's context; follow it with FollowAgentRun.
func (d *Daemon) StartAgentRun(name, prompt string) (AgentRun, error) {
	ar, h, err := d.agentRunner()
	if err != nil {
		return AgentRun{}, err
	}
	list, _ := ar.ListAgents() // the agents that load; the others' problems are the list's
	if !slices.ContainsFunc(list, func(a AgentInfo) bool { return a.ID == name }) {
		return AgentRun{}, fmt.Errorf("%w: %q", ErrNoAgent, name)
	}
	b := make([]byte, 8)
	rand.Read(b)
	r := &agentRun{st: AgentRun{ID: "agent-" + hex.EncodeToString(b), Agent: name, State: AgentRunning, Started: time.Now().UTC()}, more: make(chan struct{})}
	a := &d.agents
	a.mu.Lock()
	if a.ctx == nil {
		a.ctx, a.stop = context.WithCancel(context.Background())
	}
	if a.ctx.Err() != nil {
		a.mu.Unlock()
		return AgentRun{}, ErrNotRunning
	}
	var ctx context.Context
	ctx, r.cancel = context.WithCancel(a.ctx)
	a.runs = append(a.runs, r)
	a.forget()
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		defer r.cancel()
		err := ar.RunAgent(ctx, h, name, prompt, r.st.ID, func(ev AgentEvent) {
			if r.add(ev) {
				a.hub.publish(AgentRunEvent{Run: r.st.ID, Agent: name, AgentEvent: ev})
			}
		})
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.st.State == AgentRunning {
			// It never started, or ended without a terminal event.
			r.st.State, r.st.Ended = AgentFailed, time.Now().UTC()
			if err == nil {
				err = errors.New("the run ended without a terminal event")
			}
			r.st.Error = d.red.Redact(err.Error())
			close(r.more)
			r.more = nil
		}
	}()
	return r.status(), nil
}

// forget drops the oldest ended runs past maxAgentRuns; a.mu is held.
func (a *agents) forget() {
	for i := 0; len(a.runs) > maxAgentRuns && i < len(a.runs); {
		if a.runs[i].status().State == AgentRunning {
			i++
			continue
		}
		a.runs = slices.Delete(a.runs, i, i+1)
	}
}

// add records an event of the run, and reports whether it was taken (a
// run that ended takes no more).
func (r *agentRun) add(ev AgentEvent) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.more == nil {
		return false // ended
	}
	if len(r.events) < maxAgentEvents || ev.Terminal {
		r.events = append(r.events, ev)
	}
	if ev.Type == "run:started" || ev.Terminal {
		var f struct {
			FailedServers []string `json:"failed_servers"`
		}
		json.Unmarshal(ev.Data, &f)
		r.st.FailedServers = f.FailedServers
	}
	if ev.Terminal {
		var end struct {
			Text  string `json:"text"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(ev.Data, &end)
		r.st.Ended, r.st.Text = time.Now().UTC(), end.Text
		switch ev.Type {
		case "run:completed":
			r.st.State = AgentCompleted
		case "run:cancelled":
			r.st.State = AgentCancelled
		default:
			r.st.State = AgentFailed
			if end.Error != nil {
				r.st.Error = end.Error.Message
			}
		}
		close(r.more)
		r.more = nil
		return true
	}
	close(r.more)
	r.more = make(chan struct{})
	return true
}

func (r *agentRun) status() AgentRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

func (d *Daemon) agentRun(id string) (*agentRun, error) {
	a := &d.agents
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.runs {
		if r.st.ID == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNoAgentRun, id)
}

// AgentRuns lists the agent runs kept, newest first.
func (d *Daemon) AgentRuns() []AgentRun {
	a := &d.agents
	a.mu.Lock()
	runs := slices.Clone(a.runs)
	a.mu.Unlock()
	out := make([]AgentRun, len(runs))
	for i, r := range runs {
		out[len(runs)-1-i] = r.status()
	}
	return out
}

// AgentRun returns the run id's status.
func (d *Daemon) AgentRun(id string) (AgentRun, error) {
	r, err := d.agentRun(id)
	if err != nil {
		return AgentRun{}, err
	}
	return r.status(), nil
}

// FollowAgentRun calls fn with each event of run id after sequence number
// after, in order, as they happen, until the run has ended (its terminal
// event delivered), fn fails or ctx ends.
func (d *Daemon) FollowAgentRun(ctx context.Context, id string, after int64, fn func(AgentEvent) error) error {
	r, err := d.agentRun(id)
	if err != nil {
		return err
	}
	for {
		r.mu.Lock()
		var evs []AgentEvent
		for _, ev := range r.events {
			if ev.Seq > after {
				evs = append(evs, ev)
			}
		}
		more := r.more
		r.mu.Unlock()
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
			after = ev.Seq
		}
		if more == nil {
			return nil
		}
		select {
		case <-more:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// AgentRunEvent is an event of one of the daemon's agent runs, as
// [Daemon.FollowAgentRuns] passes it on: the run's id and agent, and the
// event.
type AgentRunEvent struct {
	Run   string `json:"run"`
	Agent string `json:"agent"`
	AgentEvent
}

// FollowAgentRuns calls fn with the events of every agent run of this
// daemon from now on, as they happen, until ctx ends (nil) or fn or lost
// fails (its error). It never slows a run: a follower more than
// runSubBuffer events behind (a run's token deltas come fast) loses the
// rest, and lost is called with how many. fn and lost are called from the
// caller's goroutine.
func (d *Daemon) FollowAgentRuns(ctx context.Context, fn func(AgentRunEvent) error, lost func(n int) error) error {
	hub := &d.agents.hub
	sub := hub.subscribe()
	defer hub.unsubscribe(sub)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-sub.ch:
			if err := fn(ev); err != nil {
				return err
			}
		case <-sub.lost:
			if err := lost(hub.takeLost(sub)); err != nil {
				return err
			}
		}
	}
}

// CancelAgentRun cancels run id; its terminal event says so.
func (d *Daemon) CancelAgentRun(id string) error {
	r, err := d.agentRun(id)
	if err != nil {
		return err
	}
	r.cancel()
	return nil
}

// closeAgents cancels the agent runs and waits for them.
func (a *agents) close() {
	a.mu.Lock()
	if a.ctx == nil {
		a.ctx, a.stop = context.WithCancel(context.Background())
	}
	a.stop()
	a.mu.Unlock()
	a.wg.Wait()
}
