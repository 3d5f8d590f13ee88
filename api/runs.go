package api

// Workflows and their runs, on the daemon's engine (daemon.Workflows):
// the workflows, a run started,
// the runs, a run with its events, its events as they happen (SSE), a
// gate answered, an interrupted step resolved, a run cancelled or resumed.
// A run lives on the engine, not on the request that started it.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/workflow"
)

// workflowJSON is a workflow as the API shows it.
type workflowJSON struct {
	ID          string          `json:"id"`
	Description string          `json:"description,omitempty"`
	Digest      string          `json:"digest"`
	Inputs      json.RawMessage `json:"input_schema"`
	Steps       []string        `json:"steps"`
	Published   bool            `json:"published"`
	File        string          `json:"file,omitempty"`
}

func (a *API) workflows() (*daemon.Workflows, error) {
	w := a.d.Workflows()
	if w == nil {
		return nil, daemon.KindUnknownWorkflow.Errorf("this daemon runs no workflows (none found in its workflow folders or its configuration's workflows)")
	}
	return w, nil
}

func (a *API) workflow(w *daemon.Workflows, id string) (*workflow.Workflow, error) {
	wf := w.Workflow(id)
	if wf == nil {
		return nil, daemon.KindUnknownWorkflow.Errorf("no workflow %q", id)
	}
	return wf, nil
}

func toWorkflowJSON(wf *workflow.Workflow, published bool) workflowJSON {
	j := workflowJSON{ID: wf.ID, Description: wf.Description, Digest: wf.Digest, Inputs: wf.InputSchema(), Steps: []string{}, Published: published, File: wf.File}
	for _, s := range wf.Steps {
		j.Steps = append(j.Steps, s.ID)
	}
	return j
}

func (a *API) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	wfs := a.d.Workflows()
	if wfs == nil {
		// A daemon without workflows has none to list: an empty list, as
		// the agents' is, not an error.
		return pageOf(a, w, r, []workflowJSON{}, func(j workflowJSON) string { return j.ID })
	}
	var items []workflowJSON
	for _, wf := range wfs.List() {
		items = append(items, toWorkflowJSON(wf, wfs.Published(wf.ID)))
	}
	return pageOf(a, w, r, items, func(j workflowJSON) string { return j.ID })
}

func (a *API) getWorkflow(w http.ResponseWriter, r *http.Request) error {
	wfs, err := a.workflows()
	if err != nil {
		return err
	}
	wf, err := a.workflow(wfs, r.PathValue("id"))
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, toWorkflowJSON(wf, wfs.Published(wf.ID)))
}

// startJSON starts a run.
type startJSON struct {
	Inputs map[string]any `json:"inputs"`
	// RunID names the run; a run of that id that exists is returned as it
	// is (a retried start starts nothing twice), unless it was started
	// with other inputs (409).
	RunID string `json:"run_id"`
	// MCPServers and Tools are the run's selection for its agent steps
	// (workflow.StartOptions): absent or null, none; [] selects none.
	MCPServers *[]string `json:"mcp_servers"`
	Tools      *[]string `json:"tools"`
}

// selection is a list of startJSON as a workflow.Selection.
func selection(l *[]string) *workflow.Selection {
	if l == nil {
		return nil
	}
	return &workflow.Selection{Names: append([]string{}, *l...)}
}

func (a *API) startRun(w http.ResponseWriter, r *http.Request) error {
	wfs, err := a.workflows()
	if err != nil {
		return err
	}
	wf, err := a.workflow(wfs, r.PathValue("id"))
	if err != nil {
		return err
	}
	var req startJSON
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	// The run lives on the daemon's engine, not on this request.
	id, err := wfs.Engine.Start(r.Context(), wf.ID, req.Inputs, &workflow.StartOptions{RunID: req.RunID,
		MCPServers: selection(req.MCPServers), Tools: selection(req.Tools)})
	if err != nil {
		return runProblem(err, "inputs")
	}
	st, err := wfs.Engine.Get(r.Context(), id)
	if err != nil {
		return err
	}
	w.Header().Set("Location", Prefix+"runs/"+id)
	return a.writeJSON(w, http.StatusCreated, st)
}

func (a *API) listRuns(w http.ResponseWriter, r *http.Request) error {
	wfs := a.d.Workflows()
	if wfs == nil {
		return pageOf(a, w, r, []*workflow.RunStatus{}, func(rs *workflow.RunStatus) string { return rs.ID })
	}
	// The engine lists the newest runs, at most MaxLimit of them; a
	// page is cut from those.
	runs, err := wfs.Engine.Runs(r.Context(), &workflow.RunFilter{Workflow: r.URL.Query().Get("workflow"), Limit: MaxLimit})
	if err != nil {
		return err
	}
	return pageOf(a, w, r, runs, func(rs *workflow.RunStatus) string { return rs.ID })
}

// runJSON is a run with its events.
type runJSON struct {
	*workflow.RunStatus
	Events []workflow.Event `json:"events"`
}

func (a *API) getRun(w http.ResponseWriter, r *http.Request) error {
	wfs, err := a.workflows()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	st, err := wfs.Engine.Get(r.Context(), id)
	if err != nil {
		return err
	}
	evs, err := wfs.Engine.Events(r.Context(), id, 0)
	if err != nil {
		return err
	}
	if evs == nil {
		evs = []workflow.Event{}
	}
	return a.writeJSON(w, http.StatusOK, runJSON{st, evs})
}

// runEvents streams a run's events as Server-Sent Events (event: the
// event's type, id: its seq), from after ?after= or Last-Event-ID, until
// its terminal event; then the stream ends.
func (a *API) runEvents(w http.ResponseWriter, r *http.Request) error {
	wfs, err := a.workflows()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	after, err := afterSeq(r)
	if err != nil {
		return err
	}
	if _, err := wfs.Engine.Get(r.Context(), id); err != nil {
		return err
	}
	s := a.startSSE(w)
	err = wfs.Engine.Follow(r.Context(), id, after, func(ev workflow.Event) error {
		return s.send(string(ev.Type), strconv.FormatInt(ev.Seq, 10), ev)
	})
	if err != nil && r.Context().Err() == nil {
		s.send("error", "", a.problemOf(err))
	}
	return nil
}

// afterSeq is the sequence number a client has seen: ?after=, or the
// Last-Event-ID of a reconnecting EventSource.
func afterSeq(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("after")
	field := "after"
	if v == "" {
		v, field = r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, &problem{Status: http.StatusBadRequest, Title: "bad " + field, Errors: []fieldError{{Field: field, Detail: "not an event's seq"}}}
	}
	return n, nil
}

// answerJSON answers a gate.
type answerJSON struct {
	Gate   string              `json:"gate"`
	Answer workflow.GateAnswer `json:"answer"`
}

func (a *API) answerGate(w http.ResponseWriter, r *http.Request) error {
	wfs, err := a.workflows()
	if err != nil {
		return err
	}
	var req answerJSON
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	var bad []fieldError
	if req.Gate == "" {
		bad = append(bad, fieldError{Field: "gate", Detail: "required"})
	}
	if req.Answer.Action != "accept" && req.Answer.Action != "decline" {
		bad = append(bad, fieldError{Field: "answer.action", Detail: "accept or decline"})
	}
	if bad != nil {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid answer", Errors: bad}
	}
	id := r.PathValue("id")
	if err := wfs.Engine.Answer(r.Context(), id, req.Gate, req.Answer); err != nil {
		return runProblem(err, "answer.content")
	}
	return a.writeRun(w, r, wfs, id, http.StatusOK)
}

// resolveJSON resolves an interrupted step.
type resolveJSON struct {
	Step   string              `json:"step"`
	Action workflow.Resolution `json:"action"`
}

func (a *API) resolveStep(w http.ResponseWriter, r *http.Request) error {
	wfs, err := a.workflows()
	if err != nil {
		return err
	}
	var req resolveJSON
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	var bad []fieldError
	if req.Step == "" {
		bad = append(bad, fieldError{Field: "step", Detail: "required"})
	}
	switch req.Action {
	case workflow.ResolveRetry, workflow.ResolveSkip, workflow.ResolveFail:
	default:
		bad = append(bad, fieldError{Field: "action", Detail: "retry, skip or fail"})
	}
	if bad != nil {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid resolution", Errors: bad}
	}
	id := r.PathValue("id")
	if err := wfs.Engine.Resolve(r.Context(), id, req.Step, req.Action); err != nil {
		return err
	}
	return a.writeRun(w, r, wfs, id, http.StatusOK)
}

// runAction does what act does to the run {id} and answers the run's
// status then.
func (a *API) runAction(status int, act func(ctx context.Context, wfs *daemon.Workflows, id string) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		wfs, err := a.workflows()
		if err != nil {
			return err
		}
		id := r.PathValue("id")
		if err := act(r.Context(), wfs, id); err != nil {
			return err
		}
		return a.writeRun(w, r, wfs, id, status)
	}
}

// cancelRun cancels a run (its step in flight interrupted, its gates
// closed); resumeRun resumes it from its last completed step.
var (
	cancelRun = func(ctx context.Context, wfs *daemon.Workflows, id string) error { return wfs.Engine.Cancel(ctx, id) }
	resumeRun = func(ctx context.Context, wfs *daemon.Workflows, id string) error { return wfs.Resume(ctx, id) }
)

func (a *API) writeRun(w http.ResponseWriter, r *http.Request, wfs *daemon.Workflows, id string, status int) error {
	st, err := wfs.Engine.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return a.writeJSON(w, status, st)
}

// runProblem is an engine error, with each problem of a value its schema
// refuses (a run's inputs, a gate's answer) named under field, and the
// error as its cause.
func runProblem(err error, field string) (perr error) {
	defer func() {
		if p, ok := perr.(*problem); ok {
			p.Cause = causeOf(err)
		}
	}()
	var ve *schema.ValidationError
	if !errors.As(err, &ve) || field == "" {
		return err
	}
	k := daemon.KindInvalid
	p := &problem{Type: k.Type(), Title: k.Title(), Status: k.Status(), Detail: err.Error()}
	for _, vp := range ve.Problems {
		p.Errors = append(p.Errors, fieldError{Field: field + strings.ReplaceAll(vp.Pointer, "/", "."), Detail: vp.Message})
	}
	return p
}
