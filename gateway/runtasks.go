package gateway

// Run tasks: a declaring client's call of a tool whose every call is a
// durable run of its own (Options.Runs: the daemon's published
// workflows) becomes a task backed by that run, at once, whatever the
// task mode but "never" and task_wait: the run is durable from its start
// (it survives its process and is taken up by another replica), so the
// gateway keeps nothing of the task and runs no call for it. The call
// goes up as any other (the endpoint's policy, the host's validation and
// guardrails), detached (host.CallOptions.Detach): the tool's server
// starts the run and answers with its id, which the task id wraps.
//
// The task is the run as RunTasks.RunTask reads it, on any replica (runs
// are in the shared state database): running is working, waiting at a
// gate input_required with one question per gate, ended completed with
// what the call would have returned (an isError result for a failed run),
// cancelled cancelled. tasks/update answers the run's gates, tasks/cancel
// cancels the run; neither is forwarded to another replica.
//
// Run task ids are signed as the gateway's own are, under another prefix:
//
//	sbr1.BASE64URL({"run":RUN,"c":CALLER,"e":ENDPOINT}).BASE64URL(HMAC-SHA256(key, "sbr1." + payload))
//
// where CALLER is a digest of the caller (callerOf) that made the call and
// ENDPOINT the endpoint's name: the task is visible to that caller on that
// endpoint only (an anonymous caller's to whoever holds its id), as a task
// of the gateway's own is. The same call retried with the same
// idempotency key finds the same run, and so the same task id.
//
// The run keeps a note of its task (host.CallOptions.TaskNote: the
// caller, the endpoint, the server and tool called), by which the owner's
// task lists find the runs that are tasks and name them by their task ids
// (RunTaskOf), and by which TaskRun finds the run of a task id.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
)

// RunTasks are the durable runs behind the tools of one in-process server,
// whose every call starts a run when the host detaches it
// (host.CallOptions.Detach, host.MetaKeyRun): the daemon's published
// workflows (workflow.Engine.ToolTask). Its methods are safe for
// concurrent use.
type RunTasks interface {
	// Server is the id of the in-process server whose tools' calls are
	// runs.
	Server() string
	// RunTask returns run as its call's task; an error wrapping
	// ErrTaskNotFound when there is no such run.
	RunTask(ctx context.Context, run string) (RunTask, error)
	// AnswerRun gives run the client's answers to its questions, by the
	// keys of RunTask.InputRequests. An answer to another key, one that
	// came too late, or one that does not fit its question is ignored
	// (the error returned says which, for the log); an error wrapping
	// ErrTaskNotFound when there is no such run.
	AnswerRun(ctx context.Context, run string, responses map[string]json.RawMessage) error
	// CancelRun cancels run, unless it has ended; an error wrapping
	// ErrTaskNotFound when there is no such run.
	CancelRun(ctx context.Context, run string) error
}

// A RunTask is a run as its call's task.
type RunTask struct {
	// Status is TaskWorking, TaskInputRequired, TaskCompleted or
	// TaskCancelled (a failed run is completed with an isError Result).
	Status, StatusMessage string
	// InputRequests are the run's questions (TaskInputRequired).
	InputRequests mcp.InputRequestMap
	// Result is the call's result (TaskCompleted).
	Result *mcp.CallToolResult
	// Created is when the run started, Updated when it last changed.
	Created, Updated time.Time
}

// runTaskPrefix begins every run task id.
const runTaskPrefix = "sbr1."

// runTaskNote is what a run task's run keeps of it
// (host.CallOptions.TaskNote, as JSON).
type runTaskNote struct {
	Caller   string `json:"caller"`
	Endpoint string `json:"endpoint,omitempty"`
	Server   string `json:"server"`
	Tool     string `json:"tool"`
}

// A RunTaskInfo is a run task as the run's note names it (RunTaskOf).
type RunTaskInfo struct {
	// ID is the task id its caller was given.
	ID string
	// Caller is who made the call (as a task of the gateway's own names
	// it), Endpoint the endpoint's name, Server and Tool the tool called.
	Caller, Endpoint, Server, Tool string
}

// RunTaskOf is the task that run is, from the note it keeps
// (workflow.RunStatus.Task); false for a note the gateway did not write.
func (g *Gateway) RunTaskOf(run, note string) (RunTaskInfo, bool) {
	var n runTaskNote
	if note == "" || json.Unmarshal([]byte(note), &n) != nil || n.Caller == "" {
		return RunTaskInfo{}, false
	}
	return RunTaskInfo{ID: g.runTaskID(run, n.Caller, n.Endpoint), Caller: n.Caller, Endpoint: n.Endpoint, Server: n.Server, Tool: n.Tool}, true
}

// TaskRun is the run behind run task id (an id of a run task this
// gateway's key signed); false for any other id.
func (g *Gateway) TaskRun(id string) (string, bool) {
	var body runTaskBody
	if !g.open(runTaskPrefix, id, &body) || body.Run == "" {
		return "", false
	}
	return body.Run, true
}

type runTaskBody struct {
	Run      string `json:"run"`
	Caller   string `json:"c"`
	Endpoint string `json:"e"`
}

// callerDigest names caller in a run task id: whoever sees the id learns
// nothing of a session id or subject from it.
func callerDigest(caller string) string {
	sum := sha256.Sum256([]byte("switchboard run task caller\x00" + caller))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// runTaskID is the task id of run, made by caller on endpoint ep.
func (g *Gateway) runTaskID(run, caller, ep string) string {
	return g.seal(runTaskPrefix, runTaskBody{Run: run, Caller: callerDigest(caller), Endpoint: ep})
}

// startRunTask makes the call of a run's tool a task: the call goes up
// detached, and the run it starts is the task. A call refused before a run
// started (its arguments, its idempotency key) is answered as it is.
func (g *Gateway) startRunTask(ctx context.Context, req *mcp.CallToolRequest, tc *taskCall) (*mcp.CallToolResult, error) {
	caller := callerOf(ctx, req)
	note, _ := json.Marshal(runTaskNote{Caller: caller, Endpoint: tc.ep.Name, Server: tc.server, Tool: tc.tool})
	opts := &host.CallOptions{RequestOptions: *inputOptions(nil, "", req.Params.GetMeta()), Detach: true, TaskNote: string(note)}
	res, err := g.forward(ctx, req, opts, nil)
	if err != nil || res == nil {
		return res, err
	}
	run, _ := res.Meta[host.MetaKeyRun].(string)
	if run == "" || res.IsError {
		return res, nil
	}
	id := g.runTaskID(run, caller, tc.ep.Name)
	rt, err := g.opts.Runs.RunTask(ctx, run)
	if err != nil {
		g.log.Warn("reading a run just started failed", "run", run, "err", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "run " + run + " started, but reading it failed; call again with an idempotency key to find it"}
	}
	tc.created = &createTaskResult{ResultType: "task", taskFields: g.runFields(id, rt)}
	return nil, errBecameTask
}

// runFields are run task id's fields: no TTL, as a run is kept until the
// engine prunes it (a number of ended runs, not a time).
func (g *Gateway) runFields(id string, rt RunTask) taskFields {
	return taskFields{TaskID: id, Status: rt.Status, StatusMessage: rt.StatusMessage,
		CreatedAt: rt.Created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: rt.Updated.UTC().Format(time.RFC3339Nano),
		PollIntervalMs: g.opts.TaskPollInterval.Milliseconds()}
}

// runTaskMethod serves tasks/get, tasks/update and tasks/cancel of a run
// task.
func (ep *endpoint) runTaskMethod(ctx context.Context, method string, r *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	g := ep.g
	var body runTaskBody
	if g.opts.Runs == nil || !g.open(runTaskPrefix, r.Params.TaskID, &body) || body.Run == "" ||
		body.Caller != callerDigest(callerOf(ctx, r)) || body.Endpoint != ep.Name {
		return nil, errNoTask("Task not found")
	}
	var err error
	switch method {
	case "tasks/get":
		var rt RunTask
		if rt, err = g.opts.Runs.RunTask(ctx, body.Run); err == nil {
			return g.detailedRunTask(r.Params.TaskID, rt)
		}
	case "tasks/update":
		if err = g.opts.Runs.AnswerRun(ctx, body.Run, r.Params.InputResponses); err != nil && !errors.Is(err, ErrTaskNotFound) {
			// Ignored answers: acknowledged all the same.
			g.log.Info("a run task's answers were not all taken", "run", body.Run, "err", err)
			err = nil
		}
	case "tasks/cancel":
		err = g.opts.Runs.CancelRun(ctx, body.Run)
	}
	switch {
	case errors.Is(err, ErrTaskNotFound):
		// Pruned.
		return nil, errNoTask("Task not found")
	case err != nil:
		g.log.Warn("a run task failed", "method", method, "run", body.Run, "err", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + ": run " + body.Run + ": " + g.red.Redact(err.Error())}
	}
	return &taskAck{ResultType: "complete"}, nil
}

// detailedRunTask is the answer to tasks/get of run task id.
func (g *Gateway) detailedRunTask(id string, rt RunTask) (mcp.Result, error) {
	out := &detailedTask{ResultType: "complete", taskFields: g.runFields(id, rt)}
	var err error
	if rt.Status == TaskInputRequired && len(rt.InputRequests) > 0 {
		out.InputRequests, err = json.Marshal(secret.RedactValue(g.red, rt.InputRequests))
	}
	if err == nil && rt.Status == TaskCompleted && rt.Result != nil {
		out.Result, err = json.Marshal(secret.RedactValue(g.red, rt.Result))
	}
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encoding the task failed: " + err.Error()}
	}
	return out, nil
}
