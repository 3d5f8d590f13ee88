package gateway

// Tasks: the MCP tasks extension (io.modelcontextprotocol/tasks, SEP-2663)
// over protocol 2026-07-28, with the gateway as the tasks server. A task
// is the gateway's own: the gateway makes the upstream call, as for any
// client, and the upstream needs no task support.
//
// Who gets one: only a 2026-07-28 request whose own _meta client
// capabilities declare the extension, to a tool whose server's task mode
// (config.Server.TaskMode, host.TaskMode) is not "never"; every other
// request is served exactly as without tasks. With "auto" (the default)
// and "required" the call runs up to Options.TaskWait: one that ends
// sooner is answered with its result (no task, nothing written), one that
// asks its client for input first is answered with an input-required
// result as without tasks (its retry is again a call that may become a
// task), and one still running becomes a task. With "always" it is a task
// at once. "required" also refuses a 2026-07-28 client that does not
// declare the extension (-32021, data.requiredCapabilities).
//
// The call is bridged as input.go bridges a 2026-07-28 client's call to
// an older upstream (a pendingCall on the gateway's context), on the
// replica that made the task; from then on the questions its upstream asks
// are the task's inputRequests (status input_required), under keys the
// gateway mints, answered by tasks/update, and its outcome is the task's:
// any tool result (isError too) completed, a JSON-RPC error failed.
//
// Durability: the task is a row of Options.Tasks (the daemon's state
// database: switchboard_tasks), written as working before the
// CreateTaskResult is sent and at every change of status, so that
// tasks/get answers from the row on any replica and after a restart. A
// call interrupted in flight follows the at-most-once rule of workflows'
// steps. The call of a tool that declares readOnlyHint or idempotentHint
// is also recorded, before the task is answered, by Options.TaskJournal
// (`serve`: a DBOS workflow of its workflow engine; tasks_durable.go):
// interrupted by a crash (kill -9, or a replica that stopped
// heartbeating), it is called again by recovery — once, by the restarted
// process or a surviving replica — and its outcome is the task's; until
// then tasks/get reads it working. Any other call is never repeated: a
// row still working (or input_required) whose owner replica is gone
// (this process restarted, or a replica stopped heartbeating:
// Options.Peers) is reported failed, -32603, with data
// {"switchboard/interrupted": true}: it may or may not have run. So is
// every call a shutdown's grace ends.
//
// A task's call is a host call, and the host follows the upstream's own
// task when the upstream makes one (host/task.go: both task generations;
// for the 2026-07-28 extension the host declares it on the call, and a
// 2025-11-25 connection under upstream_task "always" sends the call on
// the server's 2026-07-28 one): the gateway's task wraps the upstream's,
// whose id is recorded in the task's row (TaskRecord.UpstreamTask; shown
// by `switchboard tasks show` and GET /api/v1/tasks/{id} as
// upstream_task). The upstream's questions reach the gateway's task as
// any question of its call does. An upstream task id is only ever used
// with the upstream connection that made it, the host's on the replica
// that runs the call: tasks/get, tasks/update and tasks/cancel of the
// gateway's task go to that replica (below), never to the upstream from
// another; a replica that is gone leaves the upstream's task to its TTL.
//
// Task ids are unguessable and signed like requestStates (replicas.go):
//
//	sbt1.BASE64URL({"r":REPLICA,"t":RANDOM}).BASE64URL(HMAC-SHA256(key, "sbt1." + payload))
//
// so a forged one is refused (-32602) without a read, and the replica
// running a task is known from its id: tasks/update and tasks/cancel over
// Streamable HTTP are forwarded there (http.go). A task is visible only to
// the caller (callerOf) that made it, on the endpoint it was made on; an
// anonymous caller's task (a 2026-07-28 client on loopback without
// credentials) is visible to whoever holds its id.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/secret"
)

// The statuses of a task.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskTerminal reports whether status is final.
func TaskTerminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// A TaskRecord is a task as [TaskStore] keeps it.
type TaskRecord struct {
	ID string
	// Caller is who made it (callerOf), Endpoint the endpoint's name
	// ("" the default one): only they see it.
	Caller, Endpoint string
	// Server and Tool are the server's id and its own name of the tool.
	Server, Tool  string
	Status        string
	StatusMessage string
	// InputRequests are the questions outstanding (input_required): a
	// JSON object of keys to {method, params}; nil otherwise.
	InputRequests json.RawMessage
	// Result is the tool's result (completed), Error the JSON-RPC error
	// (failed), as JSON.
	Result, Error    json.RawMessage
	Created, Updated time.Time
	// TTL is how long the task is kept from Created.
	TTL time.Duration
	// Owner is the replica (Options.Replica) that runs the call.
	Owner string
	// UpstreamTask is the id of the upstream's own task that the call
	// follows (the host as a tasks client), "" when none.
	UpstreamTask string
}

// TaskStore keeps tasks durably: the daemon's state database
// (switchboard_tasks). Its methods are safe for concurrent use.
type TaskStore interface {
	// CreateTask stores a new task; when it returns, Task finds it.
	CreateTask(ctx context.Context, t TaskRecord) error
	// Task returns task id; an error wrapping ErrTaskNotFound if there is
	// none.
	Task(ctx context.Context, id string) (TaskRecord, error)
	// UpdateTask writes t's Status, StatusMessage, InputRequests, Result,
	// Error, UpstreamTask, Updated and Owner (unless "") to task t.ID,
	// unless the stored task's status is terminal already; it reports
	// whether it wrote.
	UpdateTask(ctx context.Context, t TaskRecord) (bool, error)
	// PruneTasks removes the tasks whose Created+TTL is before now, and
	// returns how many.
	PruneTasks(ctx context.Context, now time.Time) (int, error)
}

// ErrTaskNotFound: no such task.
var ErrTaskNotFound = errors.New("task not found")

// DefaultMaxTasksPerCaller bounds the tasks one caller has in flight on a
// replica (Options.MaxTasksPerCaller).
const DefaultMaxTasksPerCaller = 64

// MaxTaskResultBytes bounds a task's result as stored (JSON): the host's
// default bound on one message from a server. A bigger result makes the
// task failed (-32603) naming the bound.
const MaxTaskResultBytes = 4 << 20

// taskPruneInterval is how often the gateway removes expired tasks.
const taskPruneInterval = time.Minute

// taskWriteTimeout bounds one write of a task's row.
const taskWriteTimeout = 10 * time.Second

// taskIDPrefix begins every task id the gateway issues.
const taskIDPrefix = "sbt1."

// MetaKeyInterrupted is the key, in a failed task's error data, that says
// the task was interrupted in flight and not repeated.
const MetaKeyInterrupted = "switchboard/interrupted"

type taskIDBody struct {
	Replica string `json:"r"`
	Task    string `json:"t"`
}

// issueTaskID is a new task id naming this replica.
func (g *Gateway) issueTaskID() string {
	var b [16]byte
	rand.Read(b[:])
	return g.seal(taskIDPrefix, taskIDBody{Replica: g.opts.Replica, Task: hex.EncodeToString(b[:])})
}

// openTaskID returns what a task id a gateway with this key issued says.
func (g *Gateway) openTaskID(id string) (taskIDBody, bool) {
	var b taskIDBody
	if !g.open(taskIDPrefix, id, &b) || b.Task == "" {
		return taskIDBody{}, false
	}
	return b, true
}

// seal is prefix, v as base64url JSON, and the signature of both.
func (g *Gateway) seal(prefix string, v any) string {
	body, _ := json.Marshal(v)
	p := prefix + base64.RawURLEncoding.EncodeToString(body)
	return p + "." + base64.RawURLEncoding.EncodeToString(g.stateSigner.Sign(p))
}

// open decodes into v what seal made of prefix; false for anything else.
func (g *Gateway) open(prefix, s string, v any) bool {
	if !strings.HasPrefix(s, prefix) {
		return false
	}
	i := strings.LastIndexByte(s, '.')
	if i < len(prefix) {
		return false
	}
	// Strict: a lenient decoder ignores the unused bits of the last
	// character, so that several spellings of one id would verify.
	sig, err := base64.RawURLEncoding.Strict().DecodeString(s[i+1:])
	if err != nil || !g.stateSigner.Verify(s[:i], sig) {
		return false
	}
	body, err := base64.RawURLEncoding.Strict().DecodeString(s[len(prefix):i])
	return err == nil && json.Unmarshal(body, v) == nil
}

// taskRun is a task whose call this replica runs.
type taskRun struct {
	p       *pendingCall
	caller  string
	expire  *time.Timer   // cancels the call at the task's TTL
	expired atomic.Bool   // it did
	ended   chan struct{} // closed once its outcome is written (not when the gateway closes first)

	mu          sync.Mutex
	rec         TaskRecord      // as last written
	outstanding map[string]*ask // asked, not yet answered
	terminal    bool            // written as completed, failed or cancelled
}

// taskCall marks the context of a tools/call that may become a task; the
// call sets created when it does.
type taskCall struct {
	mode   string
	ep     *endpoint
	req    *mcp.CallToolRequest
	server string
	tool   string
	// run: the tool's call is a durable run of its own (Options.Runs),
	// and its task is that run's (runtasks.go).
	run bool
	// hostName is the host's name of the tool, idempotent whether it
	// declares readOnlyHint or idempotentHint (the workflows' rule).
	hostName   string
	idempotent bool
	created    *createTaskResult
}

type taskCallKey struct{}

func taskCallOf(ctx context.Context) *taskCall {
	tc, _ := ctx.Value(taskCallKey{}).(*taskCall)
	return tc
}

// errBecameTask ends the handler of a call that became a task; the task
// middleware answers with the task instead.
var errBecameTask = errors.New("the call became a task")

// createTaskResult is the answer to a tools/call that became a task: the
// task, flat, with resultType "task".
type createTaskResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	taskFields
}

// taskFields are a task as the extension sends it.
type taskFields struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"` // nil: unlimited (null)
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// detailedTask is the answer to tasks/get.
type detailedTask struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	taskFields
	InputRequests json.RawMessage `json:"inputRequests,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Error         json.RawMessage `json:"error,omitempty"`
}

// taskAck is the empty answer to tasks/update and tasks/cancel.
type taskAck struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
// inputResponses are read raw: the go-sdk's decoder refuses an answer it
// cannot type, and an answer to a key the task does not have must be
// acknowledged and ignored.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

var taskMethods = []string{"tasks/get", "tasks/update", "tasks/cancel"}

func (g *Gateway) fields(rec TaskRecord) taskFields {
	ttl := rec.TTL.Milliseconds()
	return taskFields{
		TaskID: rec.ID, Status: rec.Status, StatusMessage: rec.StatusMessage,
		CreatedAt: rec.Created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: rec.Updated.UTC().Format(time.RFC3339Nano),
		TTLMs: &ttl, PollIntervalMs: g.opts.TaskPollInterval.Milliseconds(),
	}
}

// addTaskMethods registers the tasks methods on ep's server, when the
// gateway keeps tasks. They are answered by taskMiddleware; the handlers
// registered are never reached.
func (ep *endpoint) addTaskMethods() {
	if ep.g.opts.Tasks == nil {
		return
	}
	for _, m := range taskMethods {
		mcp.AddReceivingCustomMethod(ep.srv, m, func(context.Context, *mcp.ServerSession, *taskParams) (*taskAck, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: m + ": not served on this endpoint"}
		})
	}
}

// callDeclaresTasks is declaresTasks(r.ClientCapabilities()) for a
// tools/call, without the SDK's decoding of a 2026-07-28 request's
// capabilities (a round trip through JSON that costs a 32 KiB buffer each
// time): the extension is looked up in the _meta as it came, when that is
// a JSON object as decoded; anything else is the SDK's to read.
func callDeclaresTasks(r *mcp.CallToolRequest) bool {
	if caps, ok := r.Params.GetMeta()[mcp.MetaKeyClientCapabilities].(map[string]any); ok {
		switch ext := caps["extensions"].(type) {
		case nil:
			if _, ok := caps["extensions"]; !ok {
				return false
			}
		case map[string]any:
			_, ok := ext[TasksExtension]
			return ok
		}
	}
	return declaresTasks(r.ClientCapabilities())
}

// declaresTasks reports whether a request's own client capabilities
// declare the tasks extension.
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

// errTasksRequired is the error of a request that needs the tasks
// extension from a client that did not declare it.
func errTasksRequired(what string) error {
	data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{
		Extensions: map[string]any{TasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
		Message: "Missing required client capability: " + what + " needs the " + TasksExtension + " extension, declared in the request's _meta client capabilities",
		Data:    data}
}

// taskMiddleware serves tasks/get, tasks/update and tasks/cancel, and
// lets a tools/call that may become a task do so (see above).
func (ep *endpoint) taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	g := ep.g
	if g.opts.Tasks == nil {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tasks/get", "tasks/update", "tasks/cancel":
			r, ok := req.(*mcp.ServerRequest[*taskParams])
			if !ok || r.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": params required"}
			}
			return ep.taskMethod(ctx, method, r)
		case "tools/call":
		default:
			return next(ctx, method, req)
		}
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || r.Params == nil || !newGeneration(r.ProtocolVersion()) {
			return next(ctx, method, req)
		}
		t, ok := g.h.Tool(ep.hostName(r.Params.Name))
		if !ok {
			return next(ctx, method, req)
		}
		mode := g.h.TaskMode(t.Server, t.Tool.Name)
		if mode == config.TaskNever {
			return next(ctx, method, req)
		}
		if !callDeclaresTasks(r) {
			if mode == config.TaskRequired {
				return nil, errTasksRequired(fmt.Sprintf("tool %q", r.Params.Name))
			}
			return next(ctx, method, req)
		}
		if s := r.Params.RequestState; s != "" {
			if _, ours := g.openState(s); !ours {
				// An upstream's own input-required round: as without tasks.
				return next(ctx, method, req)
			}
		}
		tc := &taskCall{mode: mode, ep: ep, req: r, server: t.Server, tool: t.Tool.Name, hostName: t.Name,
			idempotent: t.Tool.Annotations != nil && (t.Tool.Annotations.ReadOnlyHint || t.Tool.Annotations.IdempotentHint)}
		tc.run = g.opts.Runs != nil && t.Server == g.opts.Runs.Server()
		res, err := next(context.WithValue(ctx, taskCallKey{}, tc), method, req)
		if tc.created != nil {
			return tc.created, nil
		}
		return res, err
	}
}

// becomeTask makes the bridged call p a task, and reports whether it did:
// not beyond the bounds (the call then goes on as a call), nor when the
// task cannot be stored.
func (g *Gateway) becomeTask(ctx context.Context, p *pendingCall, tc *taskCall) bool {
	caller := callerOf(ctx, tc.req)
	now := time.Now()
	rec := TaskRecord{ID: g.issueTaskID(), Caller: caller, Endpoint: tc.ep.Name, Server: tc.server, Tool: tc.tool,
		Status: TaskWorking, Created: now, Updated: now, TTL: g.opts.TaskTTL, Owner: g.opts.Replica}
	tr := &taskRun{p: p, caller: caller, rec: rec, outstanding: map[string]*ask{}, ended: make(chan struct{})}
	p.mu.Lock()
	rec.UpstreamTask, tr.rec.UpstreamTask = p.upstreamTask, p.upstreamTask
	p.mu.Unlock()
	g.mu.Lock()
	switch {
	case g.taskCallers[caller] >= g.opts.MaxTasksPerCaller:
		g.mu.Unlock()
		g.log.Info("a call goes on without a task: its caller has the most tasks in flight", "caller", caller, "max", g.opts.MaxTasksPerCaller)
		return false
	case len(g.tasks) >= g.opts.MaxRequests:
		g.mu.Unlock()
		g.log.Info("a call goes on without a task: the most tasks are in flight", "max", g.opts.MaxRequests)
		return false
	}
	g.tasks[rec.ID] = tr
	g.taskCallers[caller]++
	g.mu.Unlock()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskWriteTimeout)
	err := g.opts.Tasks.CreateTask(wctx, rec)
	cancel()
	if err != nil {
		g.log.Warn("a call goes on without a task: storing the task failed", "err", err)
		g.forgetTask(tr)
		return false
	}
	if g.opts.TaskJournal != nil && tc.idempotent {
		// Durable: called again by recovery if interrupted; recorded
		// before the task is answered (recorded after it, on another
		// goroutine, it cost more: its write meets the task's on the
		// database). A task that cannot be recorded is one as any
		// other, reported interrupted.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskWriteTimeout)
		err := g.opts.TaskJournal.TrackTask(wctx, rec, tc.hostName, tc.req.Params.Arguments)
		cancel()
		if err != nil {
			g.log.Info("a task's call is not durable: it will not be called again if interrupted", "task", rec.ID, "tool", tc.hostName, "err", g.red.Redact(err.Error()))
		}
	}
	// The call is the task's now: no client round waits for it, and it
	// ends with the task's TTL rather than InputTimeout.
	g.drop(p)
	p.mu.Lock()
	p.task = tr
	upstream := p.upstreamTask
	p.mu.Unlock()
	if upstream != rec.UpstreamTask {
		// The upstream made its task meanwhile.
		g.upstreamTask(tr, upstream)
	}
	tr.expire = time.AfterFunc(rec.TTL, func() {
		tr.expired.Store(true)
		p.cancel()
	})
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.superviseTask(tr)
	}()
	tc.created = &createTaskResult{ResultType: "task", taskFields: g.fields(rec)}
	return true
}

// noteUpstreamTask records that p's call follows the upstream's task id
// (host.CallOptions.OnTask): in its task's row, once it has one.
func (g *Gateway) noteUpstreamTask(p *pendingCall, id string) {
	p.mu.Lock()
	if p.upstreamTask == id {
		p.mu.Unlock()
		return
	}
	p.upstreamTask = id
	tr := p.task
	p.mu.Unlock()
	if tr != nil {
		g.upstreamTask(tr, id)
	}
}

// upstreamTask writes the upstream's task id in tr's row.
func (g *Gateway) upstreamTask(tr *taskRun, id string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.terminal || tr.rec.UpstreamTask == id {
		return
	}
	rec := tr.rec
	rec.UpstreamTask = id
	g.storeTask(tr, rec)
}

func (g *Gateway) forgetTask(tr *taskRun) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.tasks[tr.rec.ID]; !ok {
		return
	}
	delete(g.tasks, tr.rec.ID)
	if g.taskCallers[tr.caller]--; g.taskCallers[tr.caller] <= 0 {
		delete(g.taskCallers, tr.caller)
	}
}

// superviseTask follows a task's call to its end: its questions become the
// task's inputRequests, its outcome the task's.
func (g *Gateway) superviseTask(tr *taskRun) {
	p := tr.p
	defer tr.expire.Stop()
	for {
		select {
		case <-p.done:
			g.finishTask(tr, p.res, p.err)
			g.forgetTask(tr)
			close(tr.ended)
			return
		case a := <-p.asks:
			tr.mu.Lock()
			tr.outstanding[a.key] = a
			g.writeTask(tr)
			tr.mu.Unlock()
		case <-g.ctx.Done():
			// Closing: the row says working, and the next to read it
			// reports the task interrupted.
			g.forgetTask(tr)
			return
		}
	}
}

// writeTask writes tr's status as its questions make it: input_required
// while one is outstanding, else working. tr.mu is held.
func (g *Gateway) writeTask(tr *taskRun) {
	if tr.terminal {
		return
	}
	rec := tr.rec
	rec.Status, rec.StatusMessage, rec.InputRequests = TaskWorking, "", nil
	if len(tr.outstanding) > 0 {
		reqs := mcp.InputRequestMap{}
		for k, a := range tr.outstanding {
			reqs[k] = a.req
		}
		b, err := json.Marshal(secret.RedactValue(g.red, reqs))
		if err != nil {
			g.log.Warn("a task's input requests do not encode", "task", rec.ID, "err", err)
			return
		}
		rec.Status, rec.StatusMessage, rec.InputRequests = TaskInputRequired, fmt.Sprintf("waiting for the client's answer to %d question(s)", len(tr.outstanding)), b
	}
	g.storeTask(tr, rec)
}

// storeTask writes rec as tr's row. tr.mu is held.
func (g *Gateway) storeTask(tr *taskRun, rec TaskRecord) {
	rec.Updated = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), taskWriteTimeout)
	defer cancel()
	if _, err := g.opts.Tasks.UpdateTask(ctx, rec); err != nil {
		g.log.Warn("writing a task failed", "task", rec.ID, "status", rec.Status, "err", err)
		return
	}
	tr.rec = rec
	if TaskTerminal(rec.Status) {
		tr.terminal = true
	}
}

// finishTask writes the call's outcome as the task's.
func (g *Gateway) finishTask(tr *taskRun, res *mcp.CallToolResult, err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.terminal {
		return
	}
	rec := tr.rec
	rec.InputRequests, rec.StatusMessage = nil, ""
	var b []byte
	if err == nil {
		b, err = json.Marshal(secret.RedactValue(g.red, res))
		if err == nil && len(b) > MaxTaskResultBytes {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
				"the tool's result is %d bytes, more than a task keeps (%d bytes)", len(b), MaxTaskResultBytes)}
		}
	}
	switch {
	case err == nil:
		rec.Status, rec.Result = TaskCompleted, b
	case tr.expired.Load():
		je := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
			"the task's time to live (%s, [gateway] task_ttl) ended before its call did; the call was cancelled", rec.TTL)}
		rec.Status, rec.StatusMessage = TaskFailed, je.Message
		rec.Error, _ = json.Marshal(je)
	case g.requests.Err() != nil:
		// The shutdown's grace ended the call.
		rec = interrupted(rec, "its gateway replica shut down")
	default:
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		je = secret.RedactValue(g.red, je)
		rec.Status, rec.StatusMessage = TaskFailed, je.Message
		rec.Error, _ = json.Marshal(je)
	}
	g.storeTask(tr, rec)
}

// interrupted is rec failed because its call was interrupted in flight,
// and not repeated.
func interrupted(rec TaskRecord, why string) TaskRecord {
	je := &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("the task was interrupted while in flight (%s) and was not repeated: the call to %s's tool %s may or may not have run", why, rec.Server, rec.Tool),
		Data:    json.RawMessage(`{"` + MetaKeyInterrupted + `":true}`)}
	rec.Status, rec.StatusMessage, rec.InputRequests, rec.Result = TaskFailed, je.Message, nil, nil
	rec.Error, _ = json.Marshal(je)
	return rec
}

// errNoTask is the error for a task id that is not the caller's to see.
func errNoTask(why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: " + why}
}

// taskMethod serves tasks/get, tasks/update and tasks/cancel.
func (ep *endpoint) taskMethod(ctx context.Context, method string, r *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	g := ep.g
	if !newGeneration(r.ProtocolVersion()) || !declaresTasks(r.ClientCapabilities()) {
		return nil, errTasksRequired(method)
	}
	id := r.Params.TaskID
	if strings.HasPrefix(id, runTaskPrefix) {
		return ep.runTaskMethod(ctx, method, r)
	}
	if _, ok := g.openTaskID(id); !ok {
		return nil, errNoTask("Task not found")
	}
	rec, err := g.opts.Tasks.Task(ctx, id)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return nil, errNoTask("Task not found")
	case err != nil:
		g.log.Warn("reading a task failed", "err", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reading the task failed"}
	}
	if rec.Caller != callerOf(ctx, r) || rec.Endpoint != ep.Name {
		return nil, errNoTask("Task not found")
	}
	if time.Now().After(rec.Created.Add(rec.TTL)) {
		return nil, errNoTask("Task has expired")
	}
	tr := g.localTask(id)
	switch method {
	case "tasks/get":
		if tr == nil && !TaskTerminal(rec.Status) {
			rec = g.settle(ctx, rec)
		}
		return &detailedTask{ResultType: "complete", taskFields: g.fields(rec),
			InputRequests: rec.InputRequests, Result: rec.Result, Error: rec.Error}, nil
	case "tasks/update":
		if tr != nil {
			g.answerTask(tr, r.Params.InputResponses)
		}
	case "tasks/cancel":
		switch {
		case tr != nil:
			g.cancelTask(tr, "cancelled by the client")
		case !TaskTerminal(rec.Status):
			g.settle(ctx, rec)
		}
	}
	return &taskAck{ResultType: "complete"}, nil
}

// localTask is the task id this replica runs, or nil: one it made
// (its id names this replica), or one it recovered
// (RecoverTask).
func (g *Gateway) localTask(id string) *taskRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tasks[id]
}

// settle is rec, not terminal and not run here, as it stands: interrupted
// (and so written) when its owner replica is gone, unless its call is
// durable and recovery will end it (Options.TaskJournal).
func (g *Gateway) settle(ctx context.Context, rec TaskRecord) TaskRecord {
	why := ""
	switch {
	case rec.Owner == g.opts.Replica:
		// Not running here, yet not ended: this process stopped while
		// it ran, or never got to write its end.
		why = "the gateway that ran it stopped"
	case g.opts.Peers == nil:
		why = fmt.Sprintf("its gateway replica %q is gone", rec.Owner)
	default:
		if _, err := g.opts.Peers(ctx, rec.Owner); err != nil {
			why = fmt.Sprintf("its gateway replica %q is gone: %v", rec.Owner, err)
		}
	}
	if why == "" {
		return rec
	}
	if g.opts.TaskJournal != nil && g.opts.TaskJournal.TaskPending(ctx, rec.ID) {
		// A durable call: recovery ends it, and writes its row.
		return rec
	}
	out := interrupted(rec, why)
	out.Updated = time.Now()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskWriteTimeout)
	defer cancel()
	wrote, err := g.opts.Tasks.UpdateTask(wctx, out)
	if err != nil || !wrote {
		// Another reader wrote it first, or it ended meanwhile: as stored.
		if cur, err := g.opts.Tasks.Task(wctx, rec.ID); err == nil {
			return cur
		}
	}
	return out
}

// answerTask gives the call the client's answers to its outstanding
// questions; an answer to another key is ignored. The task's row says
// which questions remain before tasks/update is acknowledged.
func (g *Gateway) answerTask(tr *taskRun, responses map[string]json.RawMessage) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var answered []answer
	var asks []*ask
	for key, raw := range responses {
		a := tr.outstanding[key]
		if a == nil {
			continue
		}
		resp, err := decodeInputResponse(a.req, raw)
		if err != nil {
			// Not an answer to this question: it stays outstanding.
			g.log.Info("a task's answer does not fit its question", "task", tr.rec.ID, "key", key, "err", err)
			continue
		}
		delete(tr.outstanding, key)
		asks, answered = append(asks, a), append(answered, answer{resp: resp})
	}
	if len(asks) == 0 {
		return
	}
	g.writeTask(tr)
	for i, a := range asks {
		a.reply <- answered[i]
	}
}

// decodeInputResponse reads a client's answer to question req.
func decodeInputResponse(req mcp.InputRequest, raw json.RawMessage) (mcp.InputResponse, error) {
	var v mcp.InputResponse
	switch req.(type) {
	case *mcp.ElicitParams:
		v = new(mcp.ElicitResult)
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		v = new(mcp.CreateMessageWithToolsResult)
	case *mcp.ListRootsParams:
		v = new(mcp.ListRootsResult)
	default:
		return nil, fmt.Errorf("a question of type %T", req)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	return v, nil
}

// cancelTask ends a task this replica runs as cancelled (why is its
// status message), and cancels its call upstream; a task already ended is
// left as it is.
func (g *Gateway) cancelTask(tr *taskRun, why string) {
	tr.mu.Lock()
	if !tr.terminal {
		rec := tr.rec
		rec.Status, rec.StatusMessage, rec.InputRequests = TaskCancelled, why, nil
		g.storeTask(tr, rec)
	}
	tr.mu.Unlock()
	tr.p.cancel()
}

// pruneTasks removes expired tasks every taskPruneInterval until the
// gateway closes.
func (g *Gateway) pruneTasks() {
	t := time.NewTicker(taskPruneInterval)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case now := <-t.C:
			ctx, cancel := context.WithTimeout(g.ctx, taskWriteTimeout)
			if n, err := g.opts.Tasks.PruneTasks(ctx, now); err != nil {
				g.log.Warn("removing expired tasks failed", "err", err)
			} else if n > 0 {
				g.log.Debug("removed expired tasks", "count", n)
			}
			cancel()
		}
	}
}

// extensions are the extensions the gateway's endpoints advertise: tasks,
// when it keeps them.
func (g *Gateway) extensions() map[string]any {
	if g.opts.Tasks == nil {
		return nil
	}
	return map[string]any{TasksExtension: map[string]any{}}
}

// routeTask serves what the HTTP layer must of a 2026-07-28 tasks/get,
// tasks/update or tasks/cancel, before the SDK: an Mcp-Name header that
// does not name params.taskId is refused (HTTP 400, -32020; a missing one
// is accepted), and an update or cancel of a task another live replica
// runs is forwarded there, as a retry is (replicas.go). It reports whether
// it answered the request; when it did not, r.Body is as it was.
func (g *Gateway) routeTask(w http.ResponseWriter, r *http.Request, maxBody int64) bool {
	body, ok := readBody(w, r, maxBody)
	if !ok {
		return true
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return false // the SDK answers what is malformed
	}
	var params struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(req.Params, &params)
	if name, ok := headerName(r); ok && name != params.TaskID {
		writeJSONRPCError(w, http.StatusBadRequest, req.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
			Message: "Header mismatch: the Mcp-Name header does not match params.taskId of " + req.Method})
		return true
	}
	if req.Method == "tasks/get" || g.opts.Peers == nil || r.Header.Get(forwardedHeader) != "" {
		return false
	}
	id, ok := g.openTaskID(params.TaskID)
	if !ok || id.Replica == g.opts.Replica {
		return false
	}
	addr, err := g.opts.Peers(r.Context(), id.Replica)
	if err != nil {
		return false // gone: answered here, from the task's row
	}
	g.proxy(w, r, id.Replica, addr, peerTaskTimeout, func() {
		writeJSONRPCError(w, http.StatusOK, req.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("the task runs on gateway replica %q, which does not answer at %s; try again", id.Replica, addr)})
	})
	return true
}

// peerTaskTimeout bounds a tasks/update or tasks/cancel forwarded to the
// replica running the task: both are acknowledged at once.
const peerTaskTimeout = 30 * time.Second

// headerName is a request's Mcp-Name header, OWS-trimmed and decoded from
// the =?base64?…?= form; false when there is none.
func headerName(r *http.Request) (string, bool) {
	vs := r.Header.Values("Mcp-Name")
	if len(vs) == 0 {
		return "", false
	}
	v := strings.Trim(vs[0], " \t")
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return v, true
		}
		return string(b), true
	}
	return v, true
}
