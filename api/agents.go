package api

// Agents: the agents the daemon can run, a run started with a prompt over
// the daemon's host, its events (kept by the daemon, followed as SSE), a
// run cancelled. The daemon keeps the runs (daemon/agents.go); the agents
// are run by its Options.AgentRunner, which StepsRunner makes of the
// CLI's agent.Steps.

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
)

// StepsRunner runs agents as s runs workflows' agent steps (the
// configuration's servers, its providers), over the daemon's host, for
// daemon.Options.AgentRunner.
func StepsRunner(s *agent.Steps) daemon.AgentRunner { return stepsRunner{s} }

type stepsRunner struct{ s *agent.Steps }

func (r stepsRunner) ListAgents() ([]daemon.AgentInfo, error) {
	as, err := agent.List(r.s.Dirs)
	out := make([]daemon.AgentInfo, len(as))
	for i, a := range as {
		out[i] = daemon.AgentInfo{ID: a.ID, Description: a.Description, Model: a.Model, File: a.File}
	}
	return out, err
}

func (r stepsRunner) RunAgent(ctx context.Context, h *host.Host, name, prompt, runID string, emit func(daemon.AgentEvent)) error {
	s := *r.s
	s.Host = h
	return s.Stream(ctx, name, prompt, runID, func(ev agent.Event) {
		b, _ := json.Marshal(ev)
		emit(daemon.AgentEvent{Type: string(ev.Type), Seq: ev.Seq, Terminal: ev.Type.Terminal(), Data: b})
	})
}

func (a *API) listAgents(w http.ResponseWriter, r *http.Request) error {
	list, err := a.d.ListAgents()
	if list == nil && err != nil {
		return err
	}
	p, perr := pageFor(r, list, func(x daemon.AgentInfo) string { return x.ID })
	if perr != nil {
		return perr
	}
	out := listPage[daemon.AgentInfo]{page: p}
	if err != nil {
		out.Error = err.Error()
	}
	return a.writeJSON(w, http.StatusOK, out)
}

// agentStartJSON starts an agent run.
type agentStartJSON struct {
	Prompt string `json:"prompt"`
}

func (a *API) startAgent(w http.ResponseWriter, r *http.Request) error {
	var req agentStartJSON
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	if req.Prompt == "" {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid agent run", Errors: []fieldError{{Field: "prompt", Detail: "required"}}}
	}
	run, err := a.d.StartAgentRun(r.PathValue("id"), req.Prompt)
	if err != nil {
		return err
	}
	w.Header().Set("Location", Prefix+"agent-runs/"+run.ID)
	return a.writeJSON(w, http.StatusCreated, run)
}

func (a *API) listAgentRuns(w http.ResponseWriter, r *http.Request) error {
	return pageOf(a, w, r, a.d.AgentRuns(), func(x daemon.AgentRun) string { return x.ID })
}

// agentRunJSON is an agent run with its events.
type agentRunJSON struct {
	daemon.AgentRun
	Events []json.RawMessage `json:"events"`
}

func (a *API) getAgentRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	st, err := a.d.AgentRun(id)
	if err != nil {
		return err
	}
	out := agentRunJSON{AgentRun: st, Events: []json.RawMessage{}}
	// Only what is there now: a run still going is not waited for.
	ctx, cancel := context.WithCancel(r.Context())
	cancel()
	a.d.FollowAgentRun(ctx, id, 0, func(ev daemon.AgentEvent) error {
		out.Events = append(out.Events, ev.Data)
		return nil
	})
	return a.writeJSON(w, http.StatusOK, out)
}

// agentRunEvents streams a run's events as SSE (event: the type, id: the
// seq), from after ?after= or Last-Event-ID, until its end.
func (a *API) agentRunEvents(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	after, err := afterSeq(r)
	if err != nil {
		return err
	}
	if _, err := a.d.AgentRun(id); err != nil {
		return err
	}
	s := a.startSSE(w)
	a.d.FollowAgentRun(r.Context(), id, after, func(ev daemon.AgentEvent) error {
		return s.send(ev.Type, strconv.FormatInt(ev.Seq, 10), ev.Data)
	})
	return nil
}

func (a *API) cancelAgentRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := a.d.CancelAgentRun(id); err != nil {
		return err
	}
	st, err := a.d.AgentRun(id)
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusAccepted, st)
}
