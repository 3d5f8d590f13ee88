package ui

// The gateway's tasks (the MCP tasks extension, issue 29), beside the
// runs: the newest, with status, server/tool and age; a task with its
// details and outcome, and a Cancel button that cancels it through the
// daemon's gateway (daemon.CancelTask: the same as the REST API's, its
// upstream call cancelled; a task another live replica runs, through that
// replica: daemon.ForwardTask).

import (
	"encoding/json"
	"fmt"
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
		p.Tasks = append(p.Tasks, taskRow{t, age(now.Sub(t.Created))})
	}
	u.render(w, http.StatusOK, "tasks", "layout", p)
}

// taskData is a task as its page shows it.
type taskData struct {
	Task    daemon.Task
	Ended   bool
	Message string // the error's message (failed)
	Texts   []string
	Result  string // the result as JSON, indented
	Inputs  string // the questions outstanding, as JSON, indented
}

func taskDataOf(t daemon.Task) taskData {
	d := taskData{Task: t, Ended: t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"}
	if len(t.Error) > 0 {
		var je struct {
			Message string `json:"message"`
		}
		json.Unmarshal(t.Error, &je)
		d.Message = je.Message
	}
	if len(t.Result) > 0 {
		var res struct {
			Content []struct {
				Type, Text string
			} `json:"content"`
		}
		json.Unmarshal(t.Result, &res)
		for _, c := range res.Content {
			if c.Type == "text" {
				d.Texts = append(d.Texts, c.Text)
			}
		}
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
	u.render(w, http.StatusOK, "task", "layout", taskPageData{chrome{"Task", "tasks"}, taskDataOf(t)})
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
	u.render(w, http.StatusOK, "task", "task", taskDataOf(t))
}

// age is d, rounded for a list: 45s, 12m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
