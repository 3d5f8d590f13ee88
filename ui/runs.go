package ui

// Workflows and their runs, on the daemon's engine (daemon.Workflows: the
// same operations the REST API serves): the runs, a workflow started from
// a form its input schema makes, a run's timeline of steps from the
// engine's events, a waiting gate answered from a form its schema makes,
// and an interrupted step resolved (retry, skip, fail). A run lives on the
// engine, not on the request that started it.

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/workflow"
)

func (u *UI) runRoutes() {
	u.mux.HandleFunc("GET /runs", u.runsPage)
	u.mux.HandleFunc("GET /runs/live", u.runsLive)
	u.mux.HandleFunc("GET /runs/{id}", u.runPage)
	u.mux.HandleFunc("GET /runs/{id}/live", u.runLive)
	u.mux.HandleFunc("POST /runs/{id}/answer", u.answerGate)
	u.mux.HandleFunc("POST /runs/{id}/resolve", u.resolveStep)
	u.mux.HandleFunc("POST /runs/{id}/cancel", u.cancelRun)
	u.mux.HandleFunc("GET /workflows/{id}", u.workflowPage)
	u.mux.HandleFunc("POST /workflows/{id}/start", u.startRun)
}

// runsShown bounds the runs the list shows: the newest.
const runsShown = 50

// workflows answers 404 when the daemon runs no workflows.
func (u *UI) workflows(w http.ResponseWriter) *daemon.Workflows {
	wfs := u.d.Workflows()
	if wfs == nil {
		http.Error(w, "this daemon runs no workflows (none found in its workflow folders or its configuration's workflows)", http.StatusNotFound)
	}
	return wfs
}

type runsList struct {
	Runs []*workflow.RunStatus
	Sig  string // the runs and their states: the poll swaps the list when they change
}

type runsPageData struct {
	chrome
	Workflows []*workflow.Workflow
	List      runsList
}

func (u *UI) runsList(r *http.Request, wfs *daemon.Workflows) (runsList, error) {
	runs, err := wfs.Engine.Runs(r.Context(), &workflow.RunFilter{Workflow: r.URL.Query().Get("workflow"), Limit: runsShown})
	if err != nil {
		return runsList{}, err
	}
	l := runsList{Runs: runs}
	var sig []string
	for _, rs := range runs {
		sig = append(sig, rs.ID, string(rs.State))
	}
	l.Sig = hashOf(sig...)
	return l, nil
}

func (u *UI) runsPage(w http.ResponseWriter, r *http.Request) {
	p := runsPageData{chrome: chrome{"Runs", "runs"}}
	if wfs := u.d.Workflows(); wfs != nil {
		p.Workflows = wfs.List()
		l, err := u.runsList(r, wfs)
		if err != nil {
			http.Error(w, err.Error(), daemon.StatusOf(err))
			return
		}
		p.List = l
	}
	u.render(w, http.StatusOK, "runs", "layout", p)
}

// runsLive answers the poll of the runs page: the list when it changed
// since ?sig, else 204 (nothing swapped).
func (u *UI) runsLive(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	l, err := u.runsList(r, wfs)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	if r.URL.Query().Get("sig") == l.Sig {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	u.render(w, http.StatusOK, "runs", "runs-list", l)
}

// --- starting a run

type workflowPageData struct {
	chrome
	Workflow *workflow.Workflow
	Start    startData
}

type startData struct {
	Workflow string
	Fields   []field
	General  []string
}

func (u *UI) workflowPage(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	wf := wfs.Workflow(r.PathValue("id"))
	if wf == nil {
		http.Error(w, "no workflow "+strconv.Quote(r.PathValue("id")), http.StatusNotFound)
		return
	}
	u.render(w, http.StatusOK, "workflow", "layout", workflowPageData{chrome{"Workflow " + wf.ID, "runs"}, wf,
		startData{Workflow: wf.ID, Fields: fieldsOf(wf.InputSchema())}})
}

// startRun starts a run from the workflow's form and sends the browser to
// its page; inputs its schema refuses are shown next to their fields.
func (u *UI) startRun(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	wf := wfs.Workflow(r.PathValue("id"))
	if wf == nil {
		http.Error(w, "no workflow "+strconv.Quote(r.PathValue("id")), http.StatusNotFound)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d := startData{Workflow: wf.ID, Fields: fieldsOf(wf.InputSchema())}
	args, ok := argumentsOf(d.Fields, r.PostForm)
	var inputs map[string]any
	if ok {
		json.Unmarshal(args, &inputs)
		// The run lives on the daemon's engine, not on this request.
		id, err := wfs.Engine.Start(r.Context(), wf.ID, inputs, nil)
		if err == nil {
			redirect(w, r, "/runs/"+id)
			return
		}
		d.General = problemsOf(d.Fields, err)
	}
	u.render(w, http.StatusUnprocessableEntity, "workflow", "start", d)
}

// problemsOf places a validation error's problems next to fields; any
// other error is general.
func problemsOf(fields []field, err error) []string {
	var ve *schema.ValidationError
	if errors.As(err, &ve) {
		return placeProblems(fields, ve)
	}
	return []string{err.Error()}
}

// --- one run

type runData struct {
	Run    *workflow.RunStatus
	Events []workflow.Event
	Seq    int64 // the last event's: the poll asks for what came after
	// Chart is the steps as bars over time, from Events.
	Chart timeline
	Gate  *gateData
	// Interrupted is the step an interrupted run waits on a resolution
	// for.
	Interrupted *interruptedData
}

// interruptedData offers the resolutions of the step a run is interrupted
// at.
type interruptedData struct {
	Key     string // the step's key: its id, and /item in a for_each
	Attempt int
	Message string
	General []string
}

// gateData is the form that answers the gate the run waits on.
type gateData struct {
	Key     string // the gate's key: its step, and /item in a for_each
	Text    string
	Fields  []field
	General []string
}

type runPageData struct {
	chrome
	runData
}

func gateKey(ev *workflow.Event) string {
	if ev.Item != nil {
		return ev.Step + "/" + strconv.Itoa(*ev.Item)
	}
	return ev.Step
}

func (u *UI) runData(r *http.Request, wfs *daemon.Workflows, id string) (runData, error) {
	st, err := wfs.Engine.Get(r.Context(), id)
	if err != nil {
		return runData{}, err
	}
	evs, err := wfs.Engine.Events(r.Context(), id, 0)
	if err != nil {
		return runData{}, err
	}
	d := runData{Run: st, Events: evs}
	end := st.Ended
	if end.IsZero() {
		end = time.Now()
	}
	d.Chart = newTimeline("run-chart", "Run "+st.ID+"'s steps over time", evs, end)
	if len(evs) > 0 {
		d.Seq = evs[len(evs)-1].Seq
	}
	if (st.State == workflow.RunWaiting || st.State == workflow.RunInterrupted) && st.Gate != nil {
		d.Gate = &gateData{Key: gateKey(st.Gate), Text: st.Gate.Text, Fields: fieldsOf(st.Gate.Schema)}
	}
	if ev := st.Interrupted; st.State == workflow.RunInterrupted && ev != nil {
		d.Interrupted = &interruptedData{Key: gateKey(ev), Attempt: ev.Attempt}
		if ev.Error != nil {
			d.Interrupted.Message = ev.Error.Message
		}
	}
	return d, nil
}

func (u *UI) runPage(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	d, err := u.runData(r, wfs, r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "run", "layout", runPageData{chrome{"Run " + d.Run.ID, "runs"}, d})
}

// runLive answers the poll of a run's page: the run again when it has
// events after ?seq (or its state changed), else 204, so that a gate's
// form being filled in is not replaced while nothing happens.
func (u *UI) runLive(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	d, err := u.runData(r, wfs, r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	q := r.URL.Query()
	if q.Get("seq") == strconv.FormatInt(d.Seq, 10) && q.Get("state") == string(d.Run.State) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	u.render(w, http.StatusOK, "run", "run", d)
}

// answerGate answers the gate ?gate of the run: ?action=accept with the
// form's content (valid against the gate's schema: a problem is shown
// next to its field), or decline.
func (u *UI) answerGate(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	id, gate, action := r.PathValue("id"), r.URL.Query().Get("gate"), r.URL.Query().Get("action")
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d, err := u.runData(r, wfs, id)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	if d.Gate == nil || d.Gate.Key != gate {
		u.flash(w, http.StatusConflict, "run "+id+" is not waiting on gate "+strconv.Quote(gate)+" (answered already?)", true)
		return
	}
	var ans workflow.GateAnswer
	switch action {
	case "accept":
		args, ok := argumentsOf(d.Gate.Fields, r.PostForm)
		if !ok {
			u.render(w, http.StatusUnprocessableEntity, "run", "run", d)
			return
		}
		ans = workflow.GateAnswer{Action: "accept"}
		json.Unmarshal(args, &ans.Content)
	case "decline":
		ans = workflow.GateAnswer{Action: "decline"}
	default:
		http.Error(w, "action: accept or decline", http.StatusBadRequest)
		return
	}
	if err := wfs.Engine.Answer(r.Context(), id, gate, ans); err != nil {
		d.Gate.General = problemsOf(d.Gate.Fields, err)
		u.render(w, daemon.StatusOf(err), "run", "run", d)
		return
	}
	d, err = u.runData(r, wfs, id)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "run", "run", d)
}

// resolveStep resolves the step ?step the run is interrupted at with
// ?action (or the form's action): retry, skip or fail. A resolution that
// lost to another (or came after the run went on) is said on the page.
func (u *UI) resolveStep(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	id, step, how := r.PathValue("id"), r.URL.Query().Get("step"), workflow.Resolution(r.FormValue("action"))
	switch how {
	case workflow.ResolveRetry, workflow.ResolveSkip, workflow.ResolveFail:
	default:
		http.Error(w, "action: retry, skip or fail", http.StatusBadRequest)
		return
	}
	err := wfs.Engine.Resolve(r.Context(), id, step, how)
	d, derr := u.runData(r, wfs, id)
	if derr != nil {
		http.Error(w, derr.Error(), daemon.StatusOf(derr))
		return
	}
	if err != nil {
		if d.Interrupted == nil {
			u.flash(w, daemon.StatusOf(err), "run "+id+": "+err.Error(), true)
			return
		}
		d.Interrupted.General = []string{err.Error()}
		u.render(w, daemon.StatusOf(err), "run", "run", d)
		return
	}
	u.render(w, http.StatusOK, "run", "run", d)
}

func (u *UI) cancelRun(w http.ResponseWriter, r *http.Request) {
	wfs := u.workflows(w)
	if wfs == nil {
		return
	}
	id := r.PathValue("id")
	if err := wfs.Engine.Cancel(r.Context(), id); err != nil {
		u.flash(w, daemon.StatusOf(err), "run "+id+": "+err.Error(), true)
		return
	}
	d, err := u.runData(r, wfs, id)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "run", "run", d)
}
