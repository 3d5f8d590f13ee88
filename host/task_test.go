package host_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// researchTool is server-everything's tool that requires a task
// (execution.taskSupport "required", protocol 2025-11-25's tasks): four
// stages of a second each, and, when ambiguous, a question in the third.
const researchTool = "mcp_everything_simulate-research-query"

// TestTaskSupportListed: the host keeps a tool's execution.taskSupport,
// which the go-sdk drops, in the tool's _meta.
func TestTaskSupportListed(t *testing.T) {
	h, _ := start(t, []config.Server{everything(t, "everything")}, nil)
	tool, ok := h.Tool(researchTool)
	if !ok {
		t.Fatalf("%s not offered", researchTool)
	}
	if got := host.TaskSupport(tool.Tool); got != host.TaskRequired {
		t.Errorf("TaskSupport(%s) = %q, want %q (meta %v)", researchTool, got, host.TaskRequired, tool.Tool.Meta)
	}
	echo, _ := h.Tool("mcp_everything_echo")
	if got := host.TaskSupport(echo.Tool); got != "" && got != host.TaskForbidden {
		t.Errorf("TaskSupport(echo) = %q, want none or forbidden", got)
	}
}

// TestTaskCall: a tool that requires a task is called as one, over stdio
// and Streamable HTTP (where the bytes are rewritten in other taps), and
// its caller gets the report as from a plain call, with each stage as
// progress; the call is bounded by the task timeout, not by the server's
// timeout, which is shorter than the task.
func TestTaskCall(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			s := everything(t, "everything")
			if transport == "http" {
				s = config.Server{ID: "everything", Transport: config.TransportHTTP, URL: interop.StartEverythingHTTP(t, "streamableHttp"), AllowLocalEndpoint: true}
			}
			s.Timeout = 2 * time.Second // the task takes four
			h, _ := start(t, []config.Server{s}, nil)
			tool, _ := h.Tool(researchTool)
			if got := host.TaskSupport(tool.Tool); got != host.TaskRequired {
				t.Errorf("TaskSupport(%s) = %q, want %q", researchTool, got, host.TaskRequired)
			}
			var mu sync.Mutex
			var progress []string
			var tasks []host.UpstreamTask
			res, err := h.CallTool(context.Background(), researchTool, []byte(`{"topic":"quantum sloths"}`), &host.CallOptions{
				Progress: func(p *mcp.ProgressNotificationParams) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, p.Message)
				},
				OnTask: func(server string, t host.UpstreamTask) {
					mu.Lock()
					defer mu.Unlock()
					tasks = append(tasks, t)
				},
			})
			if err != nil {
				t.Fatalf("CallTool(%s): %v", researchTool, err)
			}
			if res.IsError {
				t.Fatalf("CallTool(%s) = error result %q", researchTool, text(res))
			}
			if got := text(res); !strings.Contains(got, "# Research Report: quantum sloths") {
				t.Errorf("result = %q, want the research report", got)
			}
			if _, ok := res.Meta["io.modelcontextprotocol/related-task"]; ok {
				t.Errorf("result _meta = %v, want no related-task (a plain result)", res.Meta)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(tasks) == 0 || tasks[0].TaskID == "" || tasks[0].Status != host.TaskWorking {
				t.Fatalf("OnTask = %+v, want the task made, working", tasks)
			}
			// The stages last a second each and are polled about as
			// often: a poll may fall on either side of one, so any one
			// of them will do (one run saw all but "Analyzing content").
			stages := 0
			for _, stage := range []string{"Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report"} {
				if strings.Contains(strings.Join(progress, "\n"), stage) {
					stages++
				}
			}
			if stages == 0 {
				t.Errorf("progress = %q, want the stages' status messages", progress)
			}
		})
	}
}

// TestTaskElicitation: the question a task asks while it waits for input
// (delivered while tasks/result waits, on its event stream over
// Streamable HTTP) reaches the call's handler, and the answer continues
// the task.
func TestTaskElicitation(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			s := everything(t, "everything")
			if transport == "http" {
				s = config.Server{ID: "everything", Transport: config.TransportHTTP, URL: interop.StartEverythingHTTP(t, "streamableHttp"), AllowLocalEndpoint: true}
			}
			h, _ := start(t, []config.Server{s}, nil)
			var asked string
			res, err := h.CallTool(context.Background(), researchTool, []byte(`{"topic":"python","ambiguous":true}`), &host.CallOptions{
				Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked = server + ": " + p.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "snake"}}, nil
				},
			})
			if err != nil {
				t.Fatalf("CallTool(%s): %v", researchTool, err)
			}
			if !strings.HasPrefix(asked, `everything: The research query "python"`) {
				t.Errorf("handler asked %q, want the server's question", asked)
			}
			if got := text(res); !strings.Contains(got, "# Research Report: python (snake)") {
				t.Errorf("result = %q, want the report with the answer", got)
			}
		})
	}
}

// TestTaskCancel: a call whose context ends cancels its task upstream
// (tasks/cancel): the server says the task is cancelled.
func TestTaskCancel(t *testing.T) {
	h, _ := start(t, []config.Server{everything(t, "everything")}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	made := make(chan string, 1)
	_, err := h.CallTool(ctx, researchTool, []byte(`{"topic":"cancelled"}`), &host.CallOptions{
		OnTask: func(server string, t host.UpstreamTask) {
			select {
			case made <- t.TaskID:
				cancel()
			default:
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CallTool with its context cancelled: err = %v, want context.Canceled", err)
	}
	id := <-made
	task, err := h.UpstreamTask(context.Background(), "everything", id)
	if err != nil {
		t.Fatalf("UpstreamTask(%s): %v", id, err)
	}
	if task.Status != host.TaskCancelled {
		t.Errorf("task %s after the call's cancellation: status %q, want %q", id, task.Status, host.TaskCancelled)
	}
}

// TestTaskTimeout: a call made as a task is bounded by the server's
// upstream_task_timeout; when that ends first, the call fails as timed out
// and the task is cancelled upstream.
func TestTaskTimeout(t *testing.T) {
	s := everything(t, "everything")
	s.UpstreamTaskTimeout = 1500 * time.Millisecond // the task takes four seconds
	h, _ := start(t, []config.Server{s}, nil)
	var id string
	_, err := h.CallTool(context.Background(), researchTool, []byte(`{"topic":"slow"}`), &host.CallOptions{
		OnTask: func(server string, t host.UpstreamTask) { id = t.TaskID },
	})
	var ce *host.CallError
	if !errors.Is(err, host.ErrTimeout) || !errors.As(err, &ce) || ce.Timeout != s.UpstreamTaskTimeout {
		t.Fatalf("CallTool beyond upstream_task_timeout: err = %v, want ErrTimeout after %v", err, s.UpstreamTaskTimeout)
	}
	task, err := h.UpstreamTask(context.Background(), "everything", id)
	if err != nil {
		t.Fatalf("UpstreamTask(%s): %v", id, err)
	}
	if task.Status != host.TaskCancelled {
		t.Errorf("task %s after the call's timeout: status %q, want %q", id, task.Status, host.TaskCancelled)
	}
}

// TestTaskNever: with upstream_task = "never" a tool that requires a task
// is called plainly, and fails as its server says.
func TestTaskNever(t *testing.T) {
	s := everything(t, "everything")
	s.UpstreamTask = config.UpstreamTaskNever
	h, _ := start(t, []config.Server{s}, nil)
	res, err := h.CallTool(context.Background(), researchTool, []byte(`{"topic":"never"}`), &host.CallOptions{
		OnTask: func(server string, t host.UpstreamTask) { panic("a task with upstream_task = never") },
	})
	if err == nil && res.IsError && strings.Contains(text(res), "requires task augmentation") {
		return
	}
	t.Errorf("CallTool with upstream_task = never: %v, %v; want the server's error result (requires task augmentation)", res, err)
}
