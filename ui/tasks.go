package ui

// The gateway's tasks (the MCP tasks extension, issue 29), beside the
// runs: the newest, with status, server/tool and age; a task with its
// details and outcome, and a Cancel button that cancels it through the
// daemon's gateway (daemon.CancelTask: the same as the REST API's, its
// upstream call cancelled; a task another live replica runs, through that
// replica: daemon.ForwardTask). A task's page draws its statuses over
// time (taskTimeline, from its history); a published workflow's run task
// draws its run's steps instead, as the run's page does.

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/switchboardmcp/switchboard/daemon"
)

func (u *UI) taskRoutes() {
	u.mux.HandleFunc("GET /tasks", u.tasksPage)
	u.mux.HandleFunc("GET /tasks/{id}", u.taskPage)
	u.mux.HandleFunc("POST /tasks/{id}/cancel", u.cancelTask)
}

// tasksShown bounds the tasks the list shows: the newest.
const tasksShown = 100

type taskRow struct {
	daemon.Task
	Age string
}

type tasksPageData struct {
	chrome
	Status   string
	Statuses []string
	Tasks    []taskRow
}

func (u *UI) tasksPage(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	ts, _, err := u.d.ListTasks(r.Context(), daemon.TaskFilter{Status: status, Limit: tasksShown})
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	p := tasksPageData{chrome: chrome{"Tasks", "tasks"}, Status: status,
		Statuses: []string{"working", "input_required", "completed", "failed", "cancelled"}}
	now := time.Now()
	for _, t := range ts {
		p.Tasks = append(p.Tasks, taskRow{t, daemon.Age(now.Sub(t.Created))})
	}
	u.render(w, http.StatusOK, "tasks", "layout", p)
}

// taskData is a task as its page shows it.
type taskData struct {
	Task    daemon.Task
	Ended   bool
	Message string // the error's message and code (failed)
	IsError bool   // the tool reported an error (isError)
	Texts   []string
	Result  string // the result as JSON, indented
	Inputs  string // the questions outstanding, as JSON, indented
	// Chart is the task's statuses over time, or its run's steps; nil
	// when there is nothing to draw.
	Chart *timeline
}

// taskData is t as its page shows it, with its chart.
func (u *UI) taskData(r *http.Request, t daemon.Task) taskData {
	d := taskDataOf(t)
	if t.Run != "" {
		if wfs := u.d.Workflows(); wfs != nil {
			st, err := wfs.Engine.Get(r.Context(), t.Run)
			evs, err2 := wfs.Engine.Events(r.Context(), t.Run, 0)
			if err == nil && err2 == nil {
				end := st.Ended
				if end.IsZero() {
					end = time.Now()
				}
				tl := newTimeline("task-chart", "Its run's steps over time", evs, end)
				d.Chart = &tl
			}
		}
		return d
	}
	if len(t.History) > 0 {
		hist := make([]taskStatus, 0, len(t.History))
		for _, c := range t.History {
			hist = append(hist, taskStatus{Status: c.Status, Message: c.Message, At: c.At})
		}
		tl := taskTimeline("task-chart", "The task's statuses over time", hist, time.Now())
		d.Chart = &tl
	}
	return d
}

func taskDataOf(t daemon.Task) taskData {
	out := daemon.TaskOutcomeOf(t.Result, t.Error)
	d := taskData{Task: t, Ended: daemon.TaskEnded(t.Status), Message: out.Error, IsError: out.IsError, Texts: out.Texts}
	if len(t.Result) > 0 {
		d.Result = indent(json.RawMessage(t.Result))
	}
	if len(t.InputRequests) > 0 {
		d.Inputs = indent(json.RawMessage(t.InputRequests))
	}
	return d
}

type taskPageData struct {
	chrome
	Data taskData
}

func (u *UI) taskPage(w http.ResponseWriter, r *http.Request) {
	t, err := u.d.Task(r.Context(), r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "task", "layout", taskPageData{chrome{"Task", "tasks"}, u.taskData(r, t)})
}

func (u *UI) cancelTask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, err := u.d.CancelTask(r.Context(), id)
	if err != nil {
		// A task another live replica runs: cancelled there, whose
		// page answers.
		var refused error
		if u.d.ForwardTask(w, r, err, func(e error) { refused = e }) {
			if refused != nil {
				u.flash(w, daemon.StatusOf(refused), "task: "+refused.Error(), true)
			}
			return
		}
		u.flash(w, daemon.StatusOf(err), "task: "+err.Error(), true)
		return
	}
	u.render(w, http.StatusOK, "task", "task", u.taskData(r, t))
}
