package daemon

// The local endpoints of a daemon's workflow engine, under
// /local/v1/workflows: the workflows it runs, and its runs (list, start,
// get, events and their follow, answer a gate, resolve an interrupted
// step, cancel, resume), so that a
// CLI command's run lives in the daemon. A WorkflowClient reads them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboardmcp/switchboard/workflow"
)

// workflowJSON is a workflow the daemon runs: what a command compares
// with its own to know that the daemon runs the same ones.
type workflowJSON struct {
	ID     string `json:"id"`
	Digest string `json:"digest"`
}

type startRequest struct {
	Workflow   string              `json:"workflow"`
	Inputs     map[string]any      `json:"inputs,omitempty"`
	RunID      string              `json:"run_id,omitempty"`
	MCPServers *workflow.Selection `json:"mcp_servers,omitempty"`
	Tools      *workflow.Selection `json:"tools,omitempty"`
}

type answerRequest struct {
	Gate   string              `json:"gate"`
	Answer workflow.GateAnswer `json:"answer"`
}

type resolveRequest struct {
	Step   string              `json:"step"`
	Action workflow.Resolution `json:"action"`
}

// runErrorJSON is an engine error: its message, and its kind (KindOf),
// which the caller branches on.
type runErrorJSON struct {
	Code    Kind   `json:"code,omitempty"`
	Message string `json:"message"`
}

// runAnswer is an endpoint's answer: its result, or the engine's error.
type runAnswer[R any] struct {
	Result R             `json:"result,omitzero"`
	Error  *runErrorJSON `json:"error,omitempty"`
}

func newRunError(err error) *runErrorJSON {
	if err == nil {
		return nil
	}
	return &runErrorJSON{Code: KindOf(err), Message: err.Error()}
}

// Err is the error again: of its kind, matching its kind's sentinels.
func (j *runErrorJSON) Err() error {
	if j == nil {
		return nil
	}
	return j.Code.Errorf("%s", j.Message)
}

// serveRuns adds the workflow endpoints to mux.
func (l *local) serveRuns(mux *http.ServeMux, w *Workflows) {
	p := "/local/v1/workflows"
	mux.HandleFunc("GET "+p, func(rw http.ResponseWriter, r *http.Request) {
		out := []workflowJSON{}
		for _, wf := range w.List() {
			out = append(out, workflowJSON{ID: wf.ID, Digest: wf.Digest})
		}
		write(l, rw, out)
	})
	mux.HandleFunc("GET "+p+"/runs", func(rw http.ResponseWriter, r *http.Request) {
		f := &workflow.RunFilter{Workflow: r.FormValue("workflow")}
		f.Limit, _ = strconv.Atoi(r.FormValue("limit"))
		runs, err := w.Engine.Runs(r.Context(), f)
		if runs == nil {
			runs = []*workflow.RunStatus{}
		}
		write(l, rw, runAnswer[[]*workflow.RunStatus]{runs, newRunError(err)})
	})
	mux.HandleFunc("POST "+p+"/runs", func(rw http.ResponseWriter, r *http.Request) {
		var req startRequest
		if !readJSON(rw, r, &req) {
			return
		}
		// The run lives on the daemon's engine, not on this request.
		id, err := w.Engine.Start(r.Context(), req.Workflow, req.Inputs, &workflow.StartOptions{RunID: req.RunID, MCPServers: req.MCPServers, Tools: req.Tools})
		write(l, rw, runAnswer[string]{id, newRunError(err)})
	})
	mux.HandleFunc("GET "+p+"/runs/{id}", func(rw http.ResponseWriter, r *http.Request) {
		st, err := w.Engine.Get(r.Context(), r.PathValue("id"))
		write(l, rw, runAnswer[*workflow.RunStatus]{st, newRunError(err)})
	})
	mux.HandleFunc("GET "+p+"/runs/{id}/events", func(rw http.ResponseWriter, r *http.Request) {
		after, _ := strconv.ParseInt(r.FormValue("after"), 10, 64)
		if r.FormValue("follow") == "" {
			evs, err := w.Engine.Events(r.Context(), r.PathValue("id"), after)
			if evs == nil {
				evs = []workflow.Event{}
			}
			write(l, rw, runAnswer[[]workflow.Event]{evs, newRunError(err)})
			return
		}
		// Followed: one JSON line per event as it happens, then a last
		// line with the error that ended the follow, if any. Events are
		// redacted by the engine already.
		rw.Header().Set("Content-Type", "application/jsonl")
		fl, _ := rw.(http.Flusher)
		enc := json.NewEncoder(rw)
		err := w.Engine.Follow(r.Context(), r.PathValue("id"), after, func(ev workflow.Event) error {
			if err := enc.Encode(runAnswer[*workflow.Event]{Result: &ev}); err != nil {
				return err
			}
			if fl != nil {
				fl.Flush()
			}
			return nil
		})
		if err != nil && r.Context().Err() == nil {
			enc.Encode(runAnswer[*workflow.Event]{Error: newRunError(err)})
		}
	})
	mux.HandleFunc("POST "+p+"/runs/{id}/answer", func(rw http.ResponseWriter, r *http.Request) {
		var req answerRequest
		if !readJSON(rw, r, &req) {
			return
		}
		err := w.Engine.Answer(r.Context(), r.PathValue("id"), req.Gate, req.Answer)
		write(l, rw, runAnswer[struct{}]{Error: newRunError(err)})
	})
	mux.HandleFunc("POST "+p+"/runs/{id}/resolve", func(rw http.ResponseWriter, r *http.Request) {
		var req resolveRequest
		if !readJSON(rw, r, &req) {
			return
		}
		err := w.Engine.Resolve(r.Context(), r.PathValue("id"), req.Step, req.Action)
		write(l, rw, runAnswer[struct{}]{Error: newRunError(err)})
	})
	mux.HandleFunc("POST "+p+"/runs/{id}/cancel", func(rw http.ResponseWriter, r *http.Request) {
		err := w.Engine.Cancel(r.Context(), r.PathValue("id"))
		write(l, rw, runAnswer[struct{}]{Error: newRunError(err)})
	})
	mux.HandleFunc("POST "+p+"/runs/{id}/resume", func(rw http.ResponseWriter, r *http.Request) {
		err := w.Resume(r.Context(), r.PathValue("id"))
		write(l, rw, runAnswer[struct{}]{Error: newRunError(err)})
	})
}

// A WorkflowClient is a daemon's workflow engine as a CLI command sees it,
// over the local socket: the methods of a [workflow.Engine] a command
// uses, answered by the daemon's engine, so that a run a command starts
// lives in the daemon. Its errors match workflow.ErrNoRun,
// workflow.ErrNotWaiting, workflow.ErrGateAnswered,
// workflow.ErrInputsDiffer, workflow.ErrNotInterrupted and
// ErrLiveElsewhere as the engine's do.
type WorkflowClient struct{ c *Client }

// Workflows returns the daemon's workflow engine, and the workflows it
// runs (id → digest); an error when the daemon runs none.
func (c *Client) Workflows(ctx context.Context) (*WorkflowClient, map[string]string, error) {
	var out []workflowJSON
	if err := c.get(ctx, "workflows", &out); err != nil {
		return nil, nil, err
	}
	m := map[string]string{}
	for _, w := range out {
		m[w.ID] = w.Digest
	}
	return &WorkflowClient{c}, m, nil
}

func call[R any](ctx context.Context, c *Client, method, what string, in any) (R, error) {
	var out runAnswer[R]
	var err error
	if method == http.MethodGet {
		err = c.get(ctx, what, &out)
	} else {
		err = c.post(ctx, what, in, &out)
	}
	if err != nil {
		var zero R
		return zero, err
	}
	return out.Result, out.Error.Err()
}

func runPath(id string) string { return "workflows/runs/" + url.PathEscape(id) }

// Start starts a run in the daemon, as Engine.Start.
func (w *WorkflowClient) Start(ctx context.Context, id string, inputs map[string]any, opts *workflow.StartOptions) (string, error) {
	req := startRequest{Workflow: id, Inputs: inputs}
	if opts != nil {
		req.RunID, req.MCPServers, req.Tools = opts.RunID, opts.MCPServers, opts.Tools
	}
	return call[string](ctx, w.c, http.MethodPost, "workflows/runs", req)
}

// Get returns the run's status, as Engine.Get.
func (w *WorkflowClient) Get(ctx context.Context, runID string) (*workflow.RunStatus, error) {
	return call[*workflow.RunStatus](ctx, w.c, http.MethodGet, runPath(runID), nil)
}

// Runs lists runs, as Engine.Runs.
func (w *WorkflowClient) Runs(ctx context.Context, f *workflow.RunFilter) ([]*workflow.RunStatus, error) {
	q := "workflows/runs"
	if f != nil {
		q += "?workflow=" + url.QueryEscape(f.Workflow) + "&limit=" + strconv.Itoa(f.Limit)
	}
	return call[[]*workflow.RunStatus](ctx, w.c, http.MethodGet, q, nil)
}

// Events returns the run's events after afterSeq, as Engine.Events.
func (w *WorkflowClient) Events(ctx context.Context, runID string, afterSeq int64) ([]workflow.Event, error) {
	return call[[]workflow.Event](ctx, w.c, http.MethodGet, runPath(runID)+"/events?after="+strconv.FormatInt(afterSeq, 10), nil)
}

// Follow calls fn with each of the run's events after afterSeq as the
// daemon's engine sees them, until the terminal event, fn's error or
// ctx's end, as Engine.Follow.
func (w *WorkflowClient) Follow(ctx context.Context, runID string, afterSeq int64, fn func(workflow.Event) error) error {
	body, err := w.c.stream(ctx, runPath(runID)+"/events?follow=1&after="+strconv.FormatInt(afterSeq, 10))
	if err != nil {
		return err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var a runAnswer[*workflow.Event]
		if err := dec.Decode(&a); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errors.New("switchboard serve (local socket): the run's events ended before the run did: " + err.Error())
		}
		if a.Error != nil {
			return a.Error.Err()
		}
		if a.Result == nil {
			continue
		}
		if err := fn(*a.Result); err != nil {
			return err
		}
		if a.Result.Type.Terminal() {
			return nil
		}
	}
}

// Answer answers a gate, as Engine.Answer.
func (w *WorkflowClient) Answer(ctx context.Context, runID, gate string, a workflow.GateAnswer) error {
	_, err := call[struct{}](ctx, w.c, http.MethodPost, runPath(runID)+"/answer", answerRequest{gate, a})
	return err
}

// Resolve resolves a run's interrupted step, as Engine.Resolve.
func (w *WorkflowClient) Resolve(ctx context.Context, runID, step string, how workflow.Resolution) error {
	_, err := call[struct{}](ctx, w.c, http.MethodPost, runPath(runID)+"/resolve", resolveRequest{step, how})
	return err
}

// Cancel cancels a run, as Engine.Cancel.
func (w *WorkflowClient) Cancel(ctx context.Context, runID string) error {
	_, err := call[struct{}](ctx, w.c, http.MethodPost, runPath(runID)+"/cancel", struct{}{})
	return err
}

// Resume resumes a run in the daemon, as Workflows.Resume.
func (w *WorkflowClient) Resume(ctx context.Context, runID string) error {
	_, err := call[struct{}](ctx, w.c, http.MethodPost, runPath(runID)+"/resume", struct{}{})
	return err
}

// stream GETs what and returns the answer's body, read as it comes.
func (c *Client) stream(ctx context.Context, what string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+localHost+localPrefix+what, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("switchboard serve (local socket): %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("switchboard serve (local socket): GET %s: %s: %s", what, resp.Status, bytes.TrimSpace(msg))
	}
	return resp.Body, nil
}
