package host

// Upstream tasks: a tool a server runs as a task (the tasks of protocol
// 2025-11-25, which server-everything and the TypeScript SDK speak) is
// called as one, and the call's caller gets the tool's result as from any
// call. A tool that requires a task cannot be called otherwise; a tool
// that runs longer than a call's timeout can be, as a task, bounded by
// the server's upstream_task_timeout instead.
//
// The go-sdk (v1.8.0) knows no tasks: its decoder drops a tool's
// execution.taskSupport and a CreateTaskResult's task, and its
// CallToolParams cannot carry params.task. So the bytes are touched, here
// and nowhere else, by the taps every message passes on its way (the
// progressConn of stdio, SSE, WebSocket and in-process connections; the
// progressTransport of Streamable HTTP, request and response bodies):
//
//   - a tools/list result's tool that has execution.taskSupport gets it in
//     its _meta, under MetaKeyTaskSupport (and a server's own value there
//     is dropped): the host's tool keeps it, the cache, the CLI and the
//     REST API show it;
//   - a tools/call whose _meta holds metaKeyTask (CallTool sets it, and
//     drops a caller's) has it moved to params.task;
//   - a result {"task": {...}} without content (a CreateTaskResult) becomes
//     a CallToolResult without content whose _meta holds the task under
//     metaKeyTask (and a server's own value there is dropped).
//
// The rest is the go-sdk's: tasks/get, tasks/result and tasks/cancel are
// custom methods (mcp.AddSendingCustomMethod), their answers bounded by
// the connection's message bound like any other; the questions a server
// asks within a task (delivered while tasks/result waits, tagged with the
// task's id) are answered by the call's own handlers, like those of a plain
// call.
//
// Tasks of the 2026-07-28 extension (io.modelcontextprotocol/tasks,
// SEP-2663) differ: the client declares the extension in each request's
// _meta client capabilities instead of sending params.task, the server
// alone decides, its answer is a flat {"resultType": "task", "taskId", …},
// input requests come in tasks/get's inputRequests and are answered with
// tasks/update, the outcome is in tasks/get too (result, or error), and
// there is no tasks/result nor execution.taskSupport. The host declares
// the extension on a call to a server whose connection speaks 2026-07-28
// and advertises it (v2Tasks), unless upstream_task is "never": under
// "auto" on every call of a connection that speaks it (a plain result is
// then as without), and a call the server requires as a task (-32021 with
// the extension in data.requiredCapabilities) is made again declaring it;
// under "always" (or task mode "always"), and for a tool known to require
// a task, a call whose own connection is older goes out on the server's
// 2026-07-28 connection (generation.go), whose input-required rounds the
// host then answers itself, with the call's handlers. A call made for a
// caller that answers input-required results itself
// (CallOptions.InputRequired) declares it only for a tool known to
// require it; such a call has no handlers, and its task's questions go to
// the host's (Options.Elicitation, Options.Sampling) or are declined.
// Two more tap rules:
//
//   - a request whose _meta holds metaKeyTaskExtension (set here only) has
//     it removed and the extension added to its _meta client capabilities
//     (the go-sdk puts them there on every 2026-07-28 request);
//   - a flat CreateTaskResult ({"resultType": "task", "taskId": …}) becomes
//     a CallToolResult without content whose _meta holds the task under
//     metaKeyTask, as a 2025-11-25 one does.
//
// Both generations are followed by one loop (followTask): tasks/get with
// backoff, status messages as progress, tasks/cancel when the call ends
// first; what differs is how input and the outcome are fetched.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/secret"
)

// MetaKeyTaskSupport is the _meta key of a host's tool (Tool.Tool.Meta)
// under which the host keeps its server's execution.taskSupport:
// TaskRequired, TaskOptional or TaskForbidden; absent when the server
// says nothing (forbidden, for the protocol).
const MetaKeyTaskSupport = "switchboard/task_support"

// A tool's task support, as a server declares it.
const (
	TaskRequired  = "required"
	TaskOptional  = "optional"
	TaskForbidden = "forbidden"
)

// metaKeyTask carries a task between CallTool and the taps: in a
// tools/call's _meta, the params.task to send; in a result's _meta, the
// task a CreateTaskResult made.
const metaKeyTask = "switchboard/task"

// metaKeyTaskExtension, true in a request's _meta, has the tap declare the
// tasks extension in the request's _meta client capabilities.
const metaKeyTaskExtension = "switchboard/tasks_extension"

// TasksExtension is the identifier of the MCP tasks extension of protocol
// 2026-07-28 (SEP-2663).
const TasksExtension = "io.modelcontextprotocol/tasks"

// metaKeyRelatedTask is the protocol's _meta key naming the task a
// message belongs to.
const metaKeyRelatedTask = "io.modelcontextprotocol/related-task"

// The statuses of a task.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// UpstreamTask is a task a server runs for a call, as the server last
// described it.
type UpstreamTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	// TTL is how long, in milliseconds from its creation, the server keeps
	// the task; nil: as long as it likes.
	TTL *int64 `json:"ttl,omitempty"`
	// PollInterval is how often, in milliseconds, the server would have
	// the task polled; 0: it does not say.
	PollInterval int64 `json:"pollInterval,omitempty"`
}

// terminal reports whether the task has ended.
func (t *UpstreamTask) terminal() bool {
	switch t.Status {
	case TaskCompleted, TaskFailed, TaskCancelled:
		return true
	}
	return false
}

// taskParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// taskUpdateParams are the params of tasks/update (2026-07-28).
type taskUpdateParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId"`
	InputResponses mcp.InputResponseMap `json:"inputResponses"`
}

// wireTask is a task as either generation sends it: 2025-11-25's ttl and
// pollInterval, or 2026-07-28's ttlMs and pollIntervalMs.
type wireTask struct {
	UpstreamTask
	TTLMs          *int64 `json:"ttlMs,omitempty"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// task is w as an UpstreamTask.
func (w *wireTask) task() *UpstreamTask {
	t := w.UpstreamTask
	if w.TTLMs != nil {
		t.TTL = w.TTLMs
	}
	if w.PollIntervalMs > 0 {
		t.PollInterval = w.PollIntervalMs
	}
	return &t
}

// taskResult is the result of tasks/get and tasks/cancel: the task (an
// empty acknowledgement for 2026-07-28's tasks/cancel and tasks/update),
// and for 2026-07-28's tasks/get what its status says: the questions
// outstanding (input_required), the tool's result (completed), the
// JSON-RPC error (failed).
type taskResult struct {
	mcp.ResultBase
	wireTask
	InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Result        json.RawMessage     `json:"result,omitempty"`
	Error         json.RawMessage     `json:"error,omitempty"`
}

// addTaskMethods lets c send the task methods.
func addTaskMethods(c *mcp.Client) {
	// Errors only for a standard method's name, which these are not.
	_ = mcp.AddSendingCustomMethod[*taskParams, *taskResult](c, "tasks/get")
	_ = mcp.AddSendingCustomMethod[*taskParams, *taskResult](c, "tasks/cancel")
	_ = mcp.AddSendingCustomMethod[*taskParams, *mcp.CallToolResult](c, "tasks/result")
	_ = mcp.AddSendingCustomMethod[*taskUpdateParams, *taskResult](c, "tasks/update")
}

// taskRequest are the params of a tasks/get or tasks/cancel of task id: a
// 2026-07-28 one (v2) declares the extension, as every request of the
// extension's must.
func taskRequest(id string, v2 bool) *taskParams {
	p := &taskParams{TaskID: id}
	if v2 {
		p.Meta = mcp.Meta{metaKeyTaskExtension: true}
	}
	return p
}

// v2Tasks reports whether cs speaks 2026-07-28 and its server offers the
// tasks extension (capabilities.extensions, from server/discover or
// initialize).
func v2Tasks(cs *mcp.ClientSession) bool {
	init := cs.InitializeResult()
	if init == nil || init.ProtocolVersion < InputRequiredVersion || init.Capabilities == nil {
		return false
	}
	_, ok := init.Capabilities.Extensions[TasksExtension]
	return ok
}

// wantsTask reports whether the server's tool (its own name) is meant to
// run as a task whenever its server offers one: upstream_task "always",
// or the tool's task mode "always" (a call configured as long).
func (s *server) wantsTask(tool string) bool {
	switch s.cfg.UpstreamTask {
	case config.UpstreamTaskNever:
		return false
	case config.UpstreamTaskAlways:
		return true
	}
	return s.cfg.TaskMode(tool) == config.TaskAlways
}

// requiresTask reports whether the server has refused a call of tool (its
// own name) for want of the tasks extension (noteRequiresTask).
func (s *server) requiresTask(tool string) bool {
	_, ok := s.taskRequired.Load(tool)
	return ok
}

// noteRequiresTask remembers that the server requires tool as a task, for
// as long as the host runs: its next calls declare the extension at once.
func (s *server) noteRequiresTask(tool string) { s.taskRequired.Store(tool, true) }

// requiresTasksExtension reports whether err is a server's refusal of a
// request for want of the tasks extension: -32021 naming it in
// data.requiredCapabilities.extensions.
func requiresTasksExtension(err error) bool {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapabilities {
		return false
	}
	var data struct {
		RequiredCapabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"requiredCapabilities"`
	}
	if json.Unmarshal(je.Data, &data) != nil {
		return false
	}
	_, ok := data.RequiredCapabilities.Extensions[TasksExtension]
	return ok
}

// TaskSupport returns a tool's task support as its server declared it
// (MetaKeyTaskSupport); "" when it declared none.
func TaskSupport(t *mcp.Tool) string {
	if t == nil {
		return ""
	}
	s, _ := t.Meta[MetaKeyTaskSupport].(string)
	return s
}

// asTask reports whether a call of t goes as a 2025-11-25 task (the
// server's upstream_task, the tool's task mode and task support).
func (s *server) asTask(t *mcp.Tool) bool {
	support := TaskSupport(t)
	switch s.cfg.UpstreamTask {
	case config.UpstreamTaskNever:
		return false
	case config.UpstreamTaskAlways:
		return support == TaskRequired || support == TaskOptional
	}
	if t != nil && s.cfg.TaskMode(t.Name) == config.TaskAlways {
		return support == TaskRequired || support == TaskOptional
	}
	return support == TaskRequired
}

// taskTimeout bounds a call made as a task.
func (s *server) taskTimeout() time.Duration {
	if s.cfg.UpstreamTaskTimeout > 0 {
		return s.cfg.UpstreamTaskTimeout
	}
	return config.DefaultUpstreamTaskTimeout
}

// The host's polling of a task: the wait before a poll is a tenth of the
// time the task has run, at least the server's pollInterval (clamped to
// [minTaskPoll, maxTaskPollInterval]; defaultTaskPoll when it gives none)
// and at most maxTaskPoll (or that interval, if longer). A short task is
// polled as its server asks, and its end seen within an interval; a long
// one is seen to end within a tenth of its time, or maxTaskPoll. A task
// of the longest timeout (a day) is polled under 9,000 times, and a
// server that asks to be polled often is not polled more often than
// every minTaskPoll.
const (
	defaultTaskPoll     = time.Second
	minTaskPoll         = 100 * time.Millisecond
	maxTaskPoll         = 10 * time.Second
	maxTaskPollInterval = time.Minute
	// taskCancelTimeout bounds the tasks/cancel sent when a call ends
	// before its task: the caller has gone, and does not wait long.
	taskCancelTimeout = 10 * time.Second
)

// taskPoll is the wait before the next poll of a task that has run for
// ran, whose server asks for intervalMs between polls.
func taskPoll(intervalMs int64, ran time.Duration) time.Duration {
	base := defaultTaskPoll
	if intervalMs > 0 {
		base = time.Duration(intervalMs) * time.Millisecond
	}
	base = min(max(base, minTaskPoll), maxTaskPollInterval)
	return min(max(base, ran/10), max(base, maxTaskPoll))
}

// createdTask returns the task a CreateTaskResult made (the tap put it in
// the result's _meta), or nil.
func createdTask(res *mcp.CallToolResult) *UpstreamTask {
	if res == nil || res.Meta == nil {
		return nil
	}
	v, ok := res.Meta[metaKeyTask]
	if !ok {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var t wireTask
	if json.Unmarshal(b, &t) != nil || t.TaskID == "" {
		return nil
	}
	return t.task()
}

// followTask follows the task t a call made to its end and returns the
// tool's result: it polls tasks/get (each poll bounded by the server's
// timeout), reports each new status as progress and to CallOptions.OnTask,
// and fetches the outcome. A 2025-11-25 task's (v2 false) comes from
// tasks/result, asked once the task has ended or waits for input (the
// server's questions, delivered while tasks/result waits, reach the call's
// handlers; status polls go on meanwhile). A 2026-07-28 task's (v2) comes
// with the poll that sees it end, and its questions with the polls that
// see it wait for input: each is asked of the call's handlers once (by
// its key), and the answer sent with tasks/update. ctx is the call's,
// bounded by its timeout: when it ends first, or following fails, the
// task is cancelled upstream (tasks/cancel).
func (s *server) followTask(ctx context.Context, cs *mcp.ClientSession, c *call, token string, t *UpstreamTask, v2 bool) (res *mcp.CallToolResult, err error) {
	c.mu.Lock()
	c.task = t.TaskID
	c.mu.Unlock()
	type fetched struct {
		res *mcp.CallToolResult
		err error
	}
	var result chan fetched // set while tasks/result is asked
	fctx, fcancel := context.WithCancel(ctx)
	fetch := func() {
		result = make(chan fetched, 1)
		go func() {
			r, err := mcp.CallCustomMethod[*taskParams, *mcp.CallToolResult](fctx, cs, "tasks/result", &taskParams{TaskID: t.TaskID})
			result <- fetched{r, err}
		}()
	}
	var answering sync.WaitGroup
	asked := map[string]bool{}    // the keys of questions asked (v2)
	failed := make(chan error, 1) // the first answer that failed (v2)
	var outcome *taskResult       // the poll that saw the task end (v2)
	defer func() {
		fcancel()
		if result != nil {
			<-result // withdrawn: it ends at once
		}
		answering.Wait()
		if err != nil && !t.terminal() {
			s.cancelTask(ctx, cs, t.TaskID, v2)
		}
	}()
	seq := 0
	s.taskStatus(c, token, t, &seq)
	began := time.Now()
	timer := time.NewTimer(taskPoll(t.PollInterval, 0))
	defer timer.Stop()
	for {
		switch {
		case v2 && outcome != nil && t.terminal():
			return s.taskOutcome(t, outcome)
		case !v2 && result == nil && (t.terminal() || t.Status == TaskInputRequired):
			if t.Status == TaskCancelled {
				return nil, fmt.Errorf("the server cancelled the tool's task %s%s", t.TaskID, statusSuffix(t))
			}
			fetch()
		}
		select {
		case f := <-result:
			result = nil
			if f.err != nil {
				if ctx.Err() != nil {
					return nil, f.err
				}
				var je *jsonrpc.Error
				if t.Status == TaskFailed && errors.As(f.err, &je) {
					return nil, fmt.Errorf("the tool's task %s failed%s", t.TaskID, statusSuffix(t))
				}
				return nil, fmt.Errorf("tasks/result: %w", f.err)
			}
			t.Status = TaskCompleted // the result is final, whatever the last poll said
			return withoutTaskMeta(f.res), nil
		case err := <-failed:
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
		if !v2 && t.terminal() {
			// Only the result is awaited now.
			timer.Reset(maxTaskPollInterval)
			continue
		}
		r, err := s.getTask(ctx, cs, t.TaskID, v2)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, fmt.Errorf("tasks/get %s: %w", t.TaskID, err)
		}
		nt := r.task()
		if nt.TaskID == "" {
			nt.TaskID = t.TaskID
		}
		if nt.Status != t.Status || nt.StatusMessage != t.StatusMessage {
			*t = *nt
			s.taskStatus(c, token, t, &seq)
		} else {
			*t = *nt
		}
		if v2 {
			outcome = r
			if t.Status == TaskInputRequired {
				for key, q := range r.InputRequests {
					if asked[key] {
						continue // asked already: the snapshot repeats it until answered
					}
					asked[key] = true
					id := t.TaskID // t changes under the goroutine
					answering.Go(func() {
						if err := s.answerTaskInput(fctx, cs, c, id, key, q); err != nil && fctx.Err() == nil {
							select {
							case failed <- err:
							default:
							}
						}
					})
				}
			}
			if t.terminal() {
				continue
			}
		}
		timer.Reset(taskPoll(t.PollInterval, time.Since(began)))
	}
}

// maxInputRounds bounds the input-required rounds of one call the host
// answers itself (as the go-sdk's client does).
const maxInputRounds = 10

// answerInputs answers a 2026-07-28 server's input-required result's
// questions with the call's handlers (answerInput), one after another.
func (s *server) answerInputs(ctx context.Context, cs *mcp.ClientSession, c *call, qs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	out := make(mcp.InputResponseMap, len(qs))
	for key, q := range qs {
		resp, err := s.answerInput(ctx, cs, c, q)
		if err != nil {
			return nil, fmt.Errorf("answering the server's question %q: %w", key, err)
		}
		out[key] = resp
	}
	return out, nil
}

// taskOutcome is the outcome of a 2026-07-28 task that has ended, as the
// poll r that saw it end describes it.
func (s *server) taskOutcome(t *UpstreamTask, r *taskResult) (*mcp.CallToolResult, error) {
	switch t.Status {
	case TaskCompleted:
		if len(r.Result) == 0 {
			return nil, fmt.Errorf("the tool's task %s completed without a result", t.TaskID)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(r.Result, &res); err != nil {
			return nil, fmt.Errorf("the tool's task %s completed with a result that is not a tool's: %w", t.TaskID, err)
		}
		return withoutTaskMeta(secret.RedactValue(s.h.red, &res)), nil
	case TaskFailed:
		var je jsonrpc.Error
		if len(r.Error) == 0 || json.Unmarshal(r.Error, &je) != nil || je.Message == "" {
			return nil, fmt.Errorf("the tool's task %s failed%s", t.TaskID, statusSuffix(t))
		}
		// The server's protocol error, for a caller that passes it on.
		return nil, fmt.Errorf("the tool's task %s failed: %w", t.TaskID, redactRPCError(s.h.red, &je))
	}
	return nil, fmt.Errorf("the server cancelled the tool's task %s%s", t.TaskID, statusSuffix(t))
}

// answerTaskInput asks the call's handlers question q of a 2026-07-28
// task (key is the server's), as a question the server asked during the
// call would be, and sends the answer with tasks/update.
func (s *server) answerTaskInput(ctx context.Context, cs *mcp.ClientSession, c *call, id, key string, q mcp.InputRequest) error {
	resp, err := s.answerInput(ctx, cs, c, q)
	if err != nil {
		return fmt.Errorf("answering the question %q of the tool's task %s: %w", key, id, err)
	}
	p := &taskUpdateParams{TaskID: id, InputResponses: mcp.InputResponseMap{key: resp}}
	p.Meta = mcp.Meta{metaKeyTaskExtension: true}
	uctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, ErrTimeout)
	defer cancel()
	if _, err := mcp.CallCustomMethod[*taskUpdateParams, *taskResult](uctx, cs, "tasks/update", p); err != nil {
		return fmt.Errorf("tasks/update %s: %w", id, err)
	}
	return nil
}

// answerInput answers a server's input request (2026-07-28: in an
// input-required result or a task's inputRequests) with the call's
// handlers, as the go-sdk answers one with the client's: redacted and
// cleaned, routed to the call c.
func (s *server) answerInput(ctx context.Context, cs *mcp.ClientSession, c *call, q mcp.InputRequest) (mcp.InputResponse, error) {
	ctx = context.WithValue(ctx, callKey{}, c)
	switch p := q.(type) {
	case *mcp.ElicitParams:
		return s.elicit(ctx, &mcp.ElicitRequest{Session: cs, Params: p})
	case *mcp.CreateMessageParams:
		return s.sampleInput(ctx, cs, c, p)
	case *mcp.CreateMessageWithToolsParams:
		if len(p.Tools) > 0 {
			return nil, errors.New("sampling/createMessage with tools: not answered by switchboard")
		}
		base := &mcp.CreateMessageParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Metadata: p.Metadata,
			ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt, Temperature: p.Temperature}
		for _, m := range p.Messages {
			if len(m.Content) != 1 {
				return nil, fmt.Errorf("sampling/createMessage: a message of %d content blocks, want 1", len(m.Content))
			}
			base.Messages = append(base.Messages, &mcp.SamplingMessage{Content: m.Content[0], Role: m.Role})
		}
		return s.sampleInput(ctx, cs, c, base)
	case *mcp.ListRootsParams:
		if res, err, ok := s.roots(ctx); ok {
			return res, err
		}
		res := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
		for _, r := range s.cfg.Roots {
			res.Roots = append(res.Roots, &mcp.Root{URI: r})
		}
		return res, nil
	}
	return nil, fmt.Errorf("an input request of type %T", q)
}

// sampleInput answers a sampling input request, when the call or the host
// has a sampling handler.
func (s *server) sampleInput(ctx context.Context, cs *mcp.ClientSession, c *call, p *mcp.CreateMessageParams) (mcp.InputResponse, error) {
	if c.opts.Sampling == nil && s.h.opts.Sampling == nil {
		return nil, errors.New("sampling/createMessage: the call has no sampling handler")
	}
	return s.sample(ctx, &mcp.CreateMessageRequest{Session: cs, Params: p})
}

// statusSuffix is ": " and the task's status message, or "".
func statusSuffix(t *UpstreamTask) string {
	if t.StatusMessage == "" {
		return ""
	}
	return ": " + t.StatusMessage
}

// getTask asks the server for its task id, bounded by the server's
// timeout.
func (s *server) getTask(ctx context.Context, cs *mcp.ClientSession, id string, v2 bool) (*taskResult, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, ErrTimeout)
	defer cancel()
	r, err := mcp.CallCustomMethod[*taskParams, *taskResult](ctx, cs, "tasks/get", taskRequest(id, v2))
	if err != nil {
		if errors.Is(context.Cause(ctx), ErrTimeout) {
			return nil, fmt.Errorf("%w: no answer within %s", ErrTimeout, s.cfg.Timeout)
		}
		return nil, err
	}
	return r, nil
}

// cancelTask asks the server to cancel its task id, for a call that
// ended (ctx may have ended): bounded by taskCancelTimeout, and logged,
// not returned, when it fails.
func (s *server) cancelTask(ctx context.Context, cs *mcp.ClientSession, id string, v2 bool) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(taskCancelTimeout, s.cfg.Timeout))
	defer cancel()
	stop := context.AfterFunc(s.life, cancel) // a closing host does not wait
	defer stop()
	r, err := mcp.CallCustomMethod[*taskParams, *taskResult](cctx, cs, "tasks/cancel", taskRequest(id, v2))
	if err != nil {
		s.log.Info("could not cancel the server's task", "task", id, "error", s.h.redact(err.Error()))
		return
	}
	s.log.Debug("cancelled the server's task", "task", id, "status", r.Status)
}

// taskStatus tells the call a task's new status: CallOptions.OnTask, and
// CallOptions.Progress (through the host's progress routing, which also
// restarts a timeout that progress resets) with the status message.
func (s *server) taskStatus(c *call, token string, t *UpstreamTask, seq *int) {
	t = secret.RedactValue(s.h.red, t)
	if c.opts.OnTask != nil {
		c.opts.OnTask(s.cfg.ID, *t)
	}
	*seq++
	msg := t.StatusMessage
	switch {
	case msg == "":
		msg = t.Status
	case t.Status != TaskWorking:
		msg = t.Status + ": " + msg
	}
	s.h.progress(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(*seq), Message: msg})
}

// withoutTaskMeta is a task's result without the task's id in its _meta:
// the result of the call, as of a plain one.
func withoutTaskMeta(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}}
	}
	if _, ok := res.Meta[metaKeyRelatedTask]; !ok {
		return res
	}
	out := *res
	out.Meta = maps.Clone(res.Meta)
	delete(out.Meta, metaKeyRelatedTask)
	if len(out.Meta) == 0 {
		out.Meta = nil
	}
	return &out
}

// UpstreamTask asks the named server for its task id (tasks/get), bounded
// by the server's timeout: a task a call made (CallOptions.OnTask) on the
// server's own connection. A task id is the connection's that made it: a
// 2026-07-28 task made on the server's second connection (generation.go)
// is not found on its own.
func (h *Host) UpstreamTask(ctx context.Context, serverID, id string) (*UpstreamTask, error) {
	return request(h, ctx, serverID, "tasks/get", id, func(ctx context.Context, cs *mcp.ClientSession) (*UpstreamTask, error) {
		r, err := mcp.CallCustomMethod[*taskParams, *taskResult](ctx, cs, "tasks/get", taskRequest(id, v2Tasks(cs)))
		if err != nil {
			return nil, err
		}
		return secret.RedactValue(h.red, r.task()), nil
	})
}

// byTask is the call in flight whose task a server's request names (its
// _meta's related-task) and that has, or nil.
func (s *server) byTask(meta map[string]any, has func(*call) bool) *call {
	rt, ok := meta[metaKeyRelatedTask].(map[string]any)
	if !ok {
		return nil
	}
	id, _ := rt["taskId"].(string)
	if id == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.inflight {
		c.mu.Lock()
		mine := c.task == id
		c.mu.Unlock()
		if mine && has(c) {
			return c
		}
	}
	return nil
}

// The taps' part (see the top of this file). Each looks for its key in
// the bytes before decoding anything: most messages pass untouched, and
// unparsed. (A flat CreateTaskResult's "resultType":"task" holds "task".)

var (
	keyExecution   = []byte(`"execution"`)
	keyTaskSupport = []byte(`"` + MetaKeyTaskSupport + `"`)
	keyTask        = []byte(`"task"`)
	keyMetaTask    = []byte(`"` + metaKeyTask + `"`)
	keyMetaTaskExt = []byte(`"` + metaKeyTaskExtension + `"`)
)

// taskOutgoing is msg, a message the host sends, or a copy of it: a
// tools/call with metaKeyTask in its _meta has it moved to params.task,
// and a request with metaKeyTaskExtension in its _meta has it replaced by
// the tasks extension in its _meta client capabilities.
func taskOutgoing(msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return msg
	}
	v1 := req.Method == "tools/call" && bytes.Contains(req.Params, keyMetaTask)
	v2 := bytes.Contains(req.Params, keyMetaTaskExt)
	if !v1 && !v2 {
		return msg
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil {
		return msg
	}
	changed := false
	if v1 {
		if meta, task, ok := cutMeta(p["_meta"], metaKeyTask); ok {
			setRaw(p, "_meta", meta)
			p["task"] = task
			changed = true
		}
	}
	if v2 {
		if meta, _, ok := cutMeta(p["_meta"], metaKeyTaskExtension); ok {
			if meta, ok = declareTasks(meta); ok {
				setRaw(p, "_meta", meta)
				changed = true
			}
		}
	}
	if !changed {
		return msg
	}
	b, err := marshalRaw(p)
	if err != nil {
		return msg
	}
	cp := *req
	cp.Params = b
	return &cp
}

// declareTasks is _meta object raw with the tasks extension in its client
// capabilities (made if absent); false when raw is not an object.
func declareTasks(raw json.RawMessage) (json.RawMessage, bool) {
	m := map[string]json.RawMessage{}
	if len(raw) > 0 && json.Unmarshal(raw, &m) != nil {
		return raw, false
	}
	caps := map[string]json.RawMessage{}
	if c := m[mcp.MetaKeyClientCapabilities]; len(c) > 0 && json.Unmarshal(c, &caps) != nil {
		return raw, false
	}
	exts := map[string]json.RawMessage{}
	if e := caps["extensions"]; len(e) > 0 && json.Unmarshal(e, &exts) != nil {
		return raw, false
	}
	exts[TasksExtension] = json.RawMessage(`{}`)
	var err error
	if caps["extensions"], err = marshalRaw(exts); err != nil {
		return raw, false
	}
	if m[mcp.MetaKeyClientCapabilities], err = marshalRaw(caps); err != nil {
		return raw, false
	}
	out, err := marshalRaw(m)
	if err != nil {
		return raw, false
	}
	return out, true
}

// taskIncoming is msg, a message the host reads, or a copy of it: a
// tools/list result's execution.taskSupport copied to each tool's _meta,
// a CreateTaskResult made a CallToolResult, and a server's own values
// under the host's keys dropped.
func taskIncoming(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 {
		return msg
	}
	r := resp.Result
	tools := bytes.Contains(r, keyExecution) || bytes.Contains(r, keyTaskSupport)
	task := bytes.Contains(r, keyTask) || bytes.Contains(r, keyMetaTask)
	if !tools && !task {
		return msg
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(r, &res) != nil {
		return msg
	}
	changed := false
	if tools {
		changed = toolsTaskSupport(res)
	}
	if task {
		changed = createTaskResult(res) || changed
	}
	if !changed {
		return msg
	}
	b, err := marshalRaw(res)
	if err != nil {
		return msg
	}
	cp := *resp
	cp.Result = b
	return &cp
}

// taskIncomingBytes is taskIncoming of one encoded message, for the
// Streamable HTTP tap: the message re-encoded, and true, when it changed.
func taskIncomingBytes(data []byte) ([]byte, bool) {
	if !mayHoldTask(data) {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, false
	}
	out := taskIncoming(msg)
	if out == msg {
		return nil, false
	}
	b, err := jsonrpc.EncodeMessage(out)
	return b, err == nil
}

// taskOutgoingBytes is taskOutgoing of one encoded message, for the
// Streamable HTTP tap: the message re-encoded, and true, when it changed.
func taskOutgoingBytes(data []byte) ([]byte, bool) {
	if !bytes.Contains(data, keyMetaTask) && !bytes.Contains(data, keyMetaTaskExt) {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, false
	}
	out := taskOutgoing(msg)
	if out == msg {
		return nil, false
	}
	b, err := jsonrpc.EncodeMessage(out)
	return b, err == nil
}

// mayHoldTask reports whether b holds any key the taps look for.
func mayHoldTask(b []byte) bool {
	return bytes.Contains(b, keyExecution) || bytes.Contains(b, keyTaskSupport) || bytes.Contains(b, keyTask) || bytes.Contains(b, keyMetaTask)
}

// toolsTaskSupport copies each listed tool's execution.taskSupport into
// its _meta (res is a tools/list result; anything else has no tools
// array), and reports whether it changed anything.
func toolsTaskSupport(res map[string]json.RawMessage) bool {
	var tools []map[string]json.RawMessage
	if raw, ok := res["tools"]; !ok || json.Unmarshal(raw, &tools) != nil {
		return false
	}
	changed := false
	for _, t := range tools {
		if t == nil {
			continue
		}
		meta, _, had := cutMeta(t["_meta"], MetaKeyTaskSupport)
		var exec struct {
			TaskSupport string `json:"taskSupport"`
		}
		if raw, ok := t["execution"]; ok && json.Unmarshal(raw, &exec) == nil && knownTaskSupport(exec.TaskSupport) {
			m := map[string]json.RawMessage{}
			if len(meta) > 0 {
				if json.Unmarshal(meta, &m) != nil {
					continue
				}
			}
			m[MetaKeyTaskSupport], _ = json.Marshal(exec.TaskSupport)
			meta, _ = marshalRaw(m)
		} else if !had {
			continue
		}
		setRaw(t, "_meta", meta)
		changed = true
	}
	if !changed {
		return false
	}
	b, err := marshalRaw(tools)
	if err != nil {
		return false
	}
	res["tools"] = b
	return true
}

func knownTaskSupport(s string) bool {
	return s == TaskRequired || s == TaskOptional || s == TaskForbidden
}

// createTaskResult makes res, a CreateTaskResult ({"task": {"taskId": …}}
// and no content, or 2026-07-28's flat {"resultType": "task", "taskId":
// …}), a CallToolResult without content that has the task in its _meta;
// it drops a server's own metaKeyTask from any other result. It reports
// whether it changed anything.
func createTaskResult(res map[string]json.RawMessage) bool {
	meta, _, had := cutMeta(res["_meta"], metaKeyTask)
	var task struct {
		TaskID string `json:"taskId"`
	}
	_, content := res["content"]
	raw, ok := res["task"]
	flat := flatTask(res)
	if flat != nil {
		raw, ok, content = flat, true, false
	}
	if !ok || content || json.Unmarshal(raw, &task) != nil || task.TaskID == "" {
		if had {
			setRaw(res, "_meta", meta)
		}
		return had
	}
	m := map[string]json.RawMessage{}
	if len(meta) > 0 && json.Unmarshal(meta, &m) != nil {
		return false
	}
	m[metaKeyTask] = raw
	b, err := marshalRaw(m)
	if err != nil {
		return false
	}
	if flat != nil {
		clear(res)
	}
	delete(res, "task")
	res["_meta"] = b
	res["content"] = json.RawMessage(`[]`)
	return true
}

// flatTask is the task of res, a 2026-07-28 CreateTaskResult (resultType
// "task"): its members but _meta and resultType; nil for another result.
func flatTask(res map[string]json.RawMessage) json.RawMessage {
	var rt string
	if raw, ok := res["resultType"]; !ok || json.Unmarshal(raw, &rt) != nil || rt != "task" {
		return nil
	}
	t := make(map[string]json.RawMessage, len(res))
	for k, v := range res {
		if k != "_meta" && k != "resultType" {
			t[k] = v
		}
	}
	b, err := marshalRaw(t)
	if err != nil {
		return nil
	}
	return b
}

// cutMeta returns the _meta object raw without key, and key's value.
// ok is false when raw holds no key (or is not an object); then meta is
// raw. An object left empty is returned as nil.
func cutMeta(raw json.RawMessage, key string) (meta, value json.RawMessage, ok bool) {
	if len(raw) == 0 || !bytes.Contains(raw, []byte(`"`+key+`"`)) {
		return raw, nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw, nil, false
	}
	value, ok = m[key]
	if !ok {
		return raw, nil, false
	}
	delete(m, key)
	if len(m) == 0 {
		return nil, value, true
	}
	meta, err := marshalRaw(m)
	if err != nil {
		return raw, nil, false
	}
	return meta, value, true
}

// setRaw sets m[key] to v, or deletes it when v is empty.
func setRaw(m map[string]json.RawMessage, key string, v json.RawMessage) {
	if len(v) == 0 {
		delete(m, key)
		return
	}
	m[key] = v
}

// marshalRaw encodes v without escaping HTML characters: the bytes
// re-encoded stay those the server sent.
func marshalRaw(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
