package ui

// Agents run from the page, on the daemon (the same operations the REST
// API serves: daemon.StartAgentRun and its runs): the agents it can run,
// a run started with a prompt, and the run's events as they come (the
// page polls for those after the last it shows).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/daemon"
)

func (u *UI) agentRoutes() {
	u.mux.HandleFunc("GET /agents", u.agentsPage)
	u.mux.HandleFunc("POST /agents/run", u.startAgent)
	u.mux.HandleFunc("GET /agents/runs/{id}", u.agentRunPage)
	u.mux.HandleFunc("GET /agents/runs/{id}/live", u.agentRunLive)
	u.mux.HandleFunc("POST /agents/runs/{id}/cancel", u.cancelAgentRun)
}

type agentsPageData struct {
	chrome
	Agents []daemon.AgentInfo
	Err    string // why there are none
	Runs   []daemon.AgentRun
	Form   agentForm
}

type agentForm struct {
	Agents []daemon.AgentInfo
	Agent  string
	Prompt string
	Errors map[string]string
}

func (u *UI) agentsPage(w http.ResponseWriter, r *http.Request) {
	p := agentsPageData{chrome: chrome{"Agents", "agents"}, Runs: u.d.AgentRuns()}
	list, err := u.d.ListAgents()
	if err != nil {
		p.Err = err.Error()
	}
	p.Agents = list
	p.Form = agentForm{Agents: list, Agent: r.URL.Query().Get("agent")}
	u.render(w, http.StatusOK, "agents", "layout", p)
}

// startAgent starts the agent chosen with the prompt and sends the
// browser to the run's page.
func (u *UI) startAgent(w http.ResponseWriter, r *http.Request) {
	list, _ := u.d.ListAgents()
	f := agentForm{Agents: list, Agent: r.PostFormValue("agent"), Prompt: r.PostFormValue("prompt"), Errors: map[string]string{}}
	if f.Agent == "" {
		f.Errors["agent"] = "required"
	}
	if strings.TrimSpace(f.Prompt) == "" {
		f.Errors["prompt"] = "required"
	}
	if len(f.Errors) == 0 {
		run, err := u.d.StartAgentRun(f.Agent, f.Prompt)
		if err == nil {
			redirect(w, r, "/agents/runs/"+run.ID)
			return
		}
		if errors.Is(err, daemon.ErrNoAgent) {
			f.Errors["agent"] = err.Error()
		} else {
			f.Errors["general"] = err.Error()
		}
	}
	u.render(w, http.StatusUnprocessableEntity, "agents", "agent-form", f)
}

// agentRunData is a run and the events after After.
type agentRunData struct {
	Run    daemon.AgentRun
	Events []agentEvent
	Seq    int64 // the last event's
	Ended  bool
	OOB    bool
}

type agentEvent struct {
	agent.Event
	Args string
}

// agentRunData reads run id and its events after after: those there now
// (FollowAgentRun with a context already ended delivers what it has and
// stops). Token deltas are left out: the message event has the whole text.
func (u *UI) agentRunData(id string, after int64) (agentRunData, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := agentRunData{Seq: after}
	err := u.d.FollowAgentRun(ctx, id, after, func(ev daemon.AgentEvent) error {
		d.Seq = ev.Seq
		if ev.Type == string(agent.EventToken) {
			return nil
		}
		var e agentEvent
		json.Unmarshal(ev.Data, &e.Event)
		e.Type, e.Seq = agent.EventType(ev.Type), ev.Seq
		if e.Call != nil && len(e.Call.Arguments) > 0 {
			e.Args = string(e.Call.Arguments)
		}
		d.Events = append(d.Events, e)
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return d, err
	}
	// The status after the events: a run ended has delivered them all.
	d.Run, err = u.d.AgentRun(id)
	d.Ended = d.Run.State != daemon.AgentRunning
	return d, err
}

type agentRunPageData struct {
	chrome
	agentRunData
}

func (u *UI) agentRunPage(w http.ResponseWriter, r *http.Request) {
	d, err := u.agentRunData(r.PathValue("id"), 0)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "agent-run", "layout", agentRunPageData{chrome{"Agent run " + d.Run.ID, "agents"}, d})
}

// agentRunLive answers the poll of a run's page: the events after ?seq,
// appended to the list, and the run's status; 204 when there is nothing
// new.
func (u *UI) agentRunLive(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseInt(r.URL.Query().Get("seq"), 10, 64)
	d, err := u.agentRunData(r.PathValue("id"), after)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	if d.Seq == after && string(d.Run.State) == r.URL.Query().Get("state") {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	d.OOB = true
	u.render(w, http.StatusOK, "agent-run", "agent-live", d)
}

func (u *UI) cancelAgentRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := u.d.CancelAgentRun(id); err != nil {
		u.flash(w, daemon.StatusOf(err), "agent run "+id+": "+err.Error(), true)
		return
	}
	u.flash(w, http.StatusOK, "Cancelling "+id+".", false)
}
