package gateway_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// The host as a client of the tasks extension (host/task.go): its
// upstream is a gateway keeping tasks over the tasks fixture
// (tasksGateway), over Streamable HTTP on loopback.

// taskUpstream serves a tasks gateway, keeping its tasks in the returned
// store, and returns its /mcp URL.
func taskUpstream(t *testing.T) (string, *memTasks) {
	t.Helper()
	mem := newMemTasks()
	_, base := tasksGateway(t, &gateway.Options{Tasks: mem}, nil)
	return base + "/mcp", mem
}

// taskClientHost starts a host whose server "up" is the gateway at url,
// as edit leaves it; the host offers 2026-07-28 unless opts says
// otherwise.
func taskClientHost(t *testing.T, url string, opts *host.Options, edit func(*config.Server)) *host.Host {
	t.Helper()
	s := config.Server{ID: "up", Transport: config.TransportHTTP, URL: url, AllowLocalEndpoint: true, Timeout: 30 * time.Second}
	if edit != nil {
		edit(&s)
	}
	h, err := host.New([]config.Server{s}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// hostTool is the host's name of the upstream's tool name.
func hostTool(t *testing.T, h *host.Host, name string) string {
	t.Helper()
	for _, tool := range h.Tools() {
		if tool.Tool.Name == name {
			return tool.Name
		}
	}
	t.Fatalf("no tool %q in %v", name, h.Tools())
	return ""
}

// taskWatch records what a call tells of its task.
type taskWatch struct {
	mu       sync.Mutex
	tasks    []host.UpstreamTask
	progress []string
	made     chan string // the task's id, once
}

func newTaskWatch() *taskWatch { return &taskWatch{made: make(chan string, 1)} }

func (w *taskWatch) options(o *host.CallOptions) *host.CallOptions {
	if o == nil {
		o = &host.CallOptions{}
	}
	o.OnTask = func(server string, t host.UpstreamTask) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.tasks) == 0 {
			w.made <- t.TaskID
		}
		w.tasks = append(w.tasks, t)
	}
	o.Progress = func(p *mcp.ProgressNotificationParams) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.progress = append(w.progress, p.Message)
	}
	return o
}

func (w *taskWatch) statuses() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, t := range w.tasks {
		out = append(out, t.Status)
	}
	return out
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("result %+v: no content", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result content %T, want text", res.Content[0])
	}
	return tc.Text
}

// upstreamCancelled waits until the upstream has the task id cancelled.
func upstreamCancelled(t *testing.T, mem *memTasks, id string) {
	t.Helper()
	wait.Within(t, 20*time.Second, "the upstream's task "+id+" cancelled", func() (string, bool) {
		rec, err := mem.Task(context.Background(), id)
		return rec.Status, err == nil && rec.Status == gateway.TaskCancelled
	})
}

// TestUpstreamTaskV2: a host offering 2026-07-28 declares the tasks
// extension on its calls to an upstream that offers it (upstream_task
// "auto"), and follows the task the upstream makes of a call: to its
// result (completed, its status as progress), through its questions
// (input_required, asked of the call's elicitation handler, answered
// with tasks/update), to its JSON-RPC error (failed); a tool error
// completes it. A call the upstream answers at once is a plain result,
// and no task. A call that ends early (cancelled, or past
// upstream_task_timeout) cancels the upstream's task.
func TestUpstreamTaskV2(t *testing.T) {
	url, mem := taskUpstream(t)
	h := taskClientHost(t, url, nil, nil)
	slow := hostTool(t, h, "mcp_tk_slow_compute")
	ctx := context.Background()

	t.Run("completed", func(t *testing.T) {
		w := newTaskWatch()
		res, err := h.CallTool(ctx, slow, []byte(`{"seconds":1,"label":"one"}`), w.options(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); got != "computed one after 1s" || res.IsError {
			t.Errorf("result = %q (isError %v), want the computation", got, res.IsError)
		}
		st := w.statuses()
		if len(st) < 2 || st[0] != host.TaskWorking || st[len(st)-1] != host.TaskCompleted {
			t.Errorf("task statuses = %v, want working … completed", st)
		}
		if id := w.tasks[0].TaskID; !strings.HasPrefix(id, "sbt1.") {
			t.Errorf("task id = %q, want the upstream's", id)
		}
		if p := strings.Join(w.progress, "|"); !strings.Contains(p, "working") || !strings.Contains(p, "completed") {
			t.Errorf("progress = %q, want the task's statuses", w.progress)
		}
		if _, ok := res.Meta["io.modelcontextprotocol/related-task"]; ok {
			t.Errorf("result _meta = %v, want a plain result's", res.Meta)
		}
	})

	t.Run("plain", func(t *testing.T) {
		w := newTaskWatch()
		res, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_greet"), []byte(`{"name":"World"}`), w.options(nil))
		if err != nil || resultText(t, res) != "Hello, World!" {
			t.Errorf("greet = %v, %v", res, err)
		}
		res, err = h.CallTool(ctx, slow, []byte(`{"seconds":0,"label":"now"}`), w.options(nil))
		if err != nil || resultText(t, res) != "computed now after 0s" {
			t.Errorf("slow_compute{0} = %v, %v", res, err)
		}
		if st := w.statuses(); len(st) != 0 {
			t.Errorf("task statuses = %v, want no task", st)
		}
	})

	t.Run("input_required", func(t *testing.T) {
		w := newTaskWatch()
		var asked []string
		var mu sync.Mutex
		res, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_confirm_delete"), []byte(`{"filename":"a.txt"}`), w.options(&host.CallOptions{
			Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, p.Message)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			},
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); got != "deleted a.txt" {
			t.Errorf("result = %q, want the file deleted", got)
		}
		if len(asked) != 1 || asked[0] != "Delete a.txt?" {
			t.Errorf("asked %q, want the task's one question once", asked)
		}
		if st := strings.Join(w.statuses(), " "); !strings.Contains(st, host.TaskInputRequired) {
			t.Errorf("task statuses = %s, want input_required among them", st)
		}
	})

	t.Run("input before the task", func(t *testing.T) {
		// An input-required result first (the go-sdk's client answers it
		// with the call's handler), then the retry becomes a task.
		w := newTaskWatch()
		res, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_test_tool_with_task"), []byte(`{}`), w.options(&host.CallOptions{
			Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			},
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); got != "Hello, Ada! (accept)" || len(w.statuses()) == 0 {
			t.Errorf("test_tool_with_task = %q, task statuses %v; want the name greeted, by a task", got, w.statuses())
		}
	})

	t.Run("tool error", func(t *testing.T) {
		res, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_failing_job"), []byte(`{}`), nil)
		if err != nil || !res.IsError || resultText(t, res) != "the job failed" {
			t.Errorf("failing_job = %+v, %v; want its error result", res, err)
		}
	})

	t.Run("failed", func(t *testing.T) {
		_, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_protocol_error_job"), []byte(`{}`), nil)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || !strings.Contains(je.Message, "the job broke") {
			t.Errorf("protocol_error_job: %v, want the upstream's protocol error", err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		w := newTaskWatch()
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			<-w.made
			cancel()
		}()
		_, err := h.CallTool(cctx, slow, []byte(`{"seconds":30,"label":"long"}`), w.options(nil))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v, want context.Canceled", err)
		}
		upstreamCancelled(t, mem, w.tasks[0].TaskID)
	})

	t.Run("timeout", func(t *testing.T) {
		h := taskClientHost(t, url, nil, func(s *config.Server) { s.UpstreamTaskTimeout = time.Second })
		w := newTaskWatch()
		_, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_slow_compute"), []byte(`{"seconds":30,"label":"long"}`), w.options(nil))
		if !errors.Is(err, host.ErrTimeout) {
			t.Fatalf("call past upstream_task_timeout: %v, want ErrTimeout", err)
		}
		upstreamCancelled(t, mem, w.tasks[0].TaskID)
	})

	t.Run("never", func(t *testing.T) {
		// Without the extension, a tool the upstream requires as a task
		// is refused (-32021): the host did not declare it.
		h := taskClientHost(t, url, nil, func(s *config.Server) { s.UpstreamTask = config.UpstreamTaskNever })
		_, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_failing_job"), []byte(`{}`), nil)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeMissingRequiredClientCapabilities {
			t.Errorf("failing_job under upstream_task never: %v, want -32021", err)
		}
	})
}

// TestUpstreamTaskV2Older: a host whose own connection offers 2025-11-25
// (as the gateway's and the CLI's do) makes a call under upstream_task
// "always" on the server's 2026-07-28 connection, as a task, and answers
// its questions; under "auto" the same call is a plain call on its own
// connection.
func TestUpstreamTaskV2Older(t *testing.T) {
	url, _ := taskUpstream(t)
	ctx := context.Background()
	elicit := func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "name": "Ada"}}, nil
	}
	for _, mode := range []string{config.UpstreamTaskAlways, config.UpstreamTaskAuto} {
		t.Run(mode, func(t *testing.T) {
			h := taskClientHost(t, url, &host.Options{ProtocolVersion: gateway.UpstreamProtocolVersion}, func(s *config.Server) { s.UpstreamTask = mode })
			w := newTaskWatch()
			res, err := h.CallTool(ctx, hostTool(t, h, "mcp_tk_confirm_delete"), []byte(`{"filename":"b.txt"}`), w.options(&host.CallOptions{Elicitation: elicit}))
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, res); got != "deleted b.txt" {
				t.Errorf("result = %q, want the file deleted", got)
			}
			st := w.statuses()
			if task := len(st) > 0; task != (mode == config.UpstreamTaskAlways) {
				t.Errorf("task statuses = %v; want a task: %v", st, mode == config.UpstreamTaskAlways)
			}
			// A question before the task exists is an input-required
			// result (on the 2026-07-28 connection, answered by the host
			// with the call's handler), and the retry becomes the task.
			w = newTaskWatch()
			res, err = h.CallTool(ctx, hostTool(t, h, "mcp_tk_test_tool_with_task"), []byte(`{}`), w.options(&host.CallOptions{Elicitation: elicit}))
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, res); got != "Hello, Ada! (accept)" {
				t.Errorf("test_tool_with_task = %q, want the name greeted", got)
			}
			if task := len(w.statuses()) > 0; task != (mode == config.UpstreamTaskAlways) {
				t.Errorf("test_tool_with_task: task statuses = %v; want a task: %v", w.statuses(), mode == config.UpstreamTaskAlways)
			}
		})
	}
}

// TestUpstreamTaskComposed: through a gateway whose upstream is a gateway
// keeping tasks (upstream_task "always": the host's 2025-11-25 connection
// sends such calls on its 2026-07-28 one), a client's task wraps the
// upstream's: the task's row names the upstream's task, the upstream's
// question is the client's task's inputRequests, and the outcome is the
// upstream's. A client that does not declare the extension calling a tool
// the upstream requires as a task still gets its result: the host is
// refused (-32021) and calls again declaring it.
func TestUpstreamTaskComposed(t *testing.T) {
	upURL, upMem := taskUpstream(t)
	// The upstream opens its 2026-07-28 connection to its server now, not
	// within the gateway below, whose leak check would count it.
	if a := rpc(t, upURL, "tools/call", map[string]any{"name": "mcp_tk_greet", "arguments": map[string]any{"name": "x"}}, nil); a.Error != nil {
		t.Fatalf("greet: %+v", a.Error)
	}
	up := config.Server{ID: "up", Transport: config.TransportHTTP, URL: upURL, AllowLocalEndpoint: true,
		Timeout: 30 * time.Second, UpstreamTask: config.UpstreamTaskAlways}
	mem := newMemTasks()
	_, base := serveWith(t, []config.Server{up}, nil, &gateway.Options{Tasks: mem, TaskWait: 200 * time.Millisecond, TaskTTL: time.Hour}, nil)
	url := base + "/mcp"
	names := map[string]string{}
	for _, tool := range rpc(t, url, "tools/list", nil, tasksCaps).Result["tools"].([]any) {
		name := tool.(map[string]any)["name"].(string)
		if i := strings.Index(name, "mcp_tk_"); i >= 0 {
			names[name[i:]] = name
		}
	}

	// wrapped checks that the row of the client's task id names a task of
	// the upstream's, as status.
	wrapped := func(id, status string) {
		t.Helper()
		rec, err := mem.Task(context.Background(), id)
		if err != nil || !strings.HasPrefix(rec.UpstreamTask, "sbt1.") || rec.UpstreamTask == id {
			t.Fatalf("task %s: row %+v, %v; want the upstream's task named", id, rec, err)
		}
		upRec, err := upMem.Task(context.Background(), rec.UpstreamTask)
		if err != nil || upRec.Status != status {
			t.Errorf("the upstream's task %s: %+v, %v; want it %s", rec.UpstreamTask, upRec, err, status)
		}
	}

	id := createTask(t, url, names["mcp_tk_slow_compute"], map[string]any{"seconds": 1, "label": "x"})
	res := awaitTask(t, url, id, "slow_compute to end", tasktest.Terminal)
	if result, _ := res["result"].(map[string]any); res["status"] != "completed" || contentText(t, result) != "computed x after 1s" {
		t.Errorf("slow_compute task = %v", res)
	}
	wrapped(id, gateway.TaskCompleted)

	id = createTask(t, url, names["mcp_tk_confirm_delete"], map[string]any{"filename": "c.txt"})
	res = awaitTask(t, url, id, "confirm_delete to ask", func(res map[string]any) bool {
		return res["status"] == "input_required" || tasktest.Terminal(res)
	})
	var key string
	for k := range res["inputRequests"].(map[string]any) {
		key = k
	}
	a := rpc(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, tasksCaps)
	if a.Error != nil {
		t.Fatalf("tasks/update: %+v", a.Error)
	}
	res = awaitTask(t, url, id, "confirm_delete to end", tasktest.Terminal)
	if result, _ := res["result"].(map[string]any); res["status"] != "completed" || contentText(t, result) != "deleted c.txt" {
		t.Errorf("confirm_delete task = %v", res)
	}
	wrapped(id, gateway.TaskCompleted)

	// No extension declared: the gateway makes no task, the host follows
	// the upstream's.
	a = rpc(t, url, "tools/call", map[string]any{"name": names["mcp_tk_failing_job"], "arguments": map[string]any{}}, map[string]any{})
	if a.Error != nil || a.Result["isError"] != true || contentText(t, a.Result) != "the job failed" {
		t.Errorf("failing_job without the extension = %+v %v, want its error result", a.Error, a.Result)
	}
}
