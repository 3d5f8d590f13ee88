package host

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

// TestTaskTaps: what the taps rewrite of tasks, and what they leave.
func TestTaskTaps(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want string
		out      bool // a message the host sends
	}{{
		name: "execution kept in _meta",
		in:   `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"b","inputSchema":{"type":"object"},"_meta":{"x":1}}]}}`,
		want: `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"_meta":{"switchboard/task_support":"required"},"execution":{"taskSupport":"required"},"inputSchema":{"type":"object"},"name":"a"},{"name":"b","inputSchema":{"type":"object"},"_meta":{"x":1}}]}}`,
	}, {
		name: "a server's own task_support dropped",
		in:   `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"_meta":{"switchboard/task_support":"required","x":"<b>"}}]}}`,
		want: `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"_meta":{"x":"<b>"},"inputSchema":{"type":"object"},"name":"a"}]}}`,
	}, {
		name: "an unknown taskSupport ignored",
		in:   `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"maybe"}}]}}`,
		want: `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"maybe"}}]}}`,
	}, {
		name: "CreateTaskResult",
		in:   `{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t1","status":"working","ttl":300000,"createdAt":"2026-01-01T00:00:00Z","pollInterval":1000}}}`,
		want: `{"jsonrpc":"2.0","id":2,"result":{"_meta":{"switchboard/task":{"taskId":"t1","status":"working","ttl":300000,"createdAt":"2026-01-01T00:00:00Z","pollInterval":1000}},"content":[]}}`,
	}, {
		name: "a result's own switchboard/task dropped",
		in:   `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"task\""}],"_meta":{"switchboard/task":{"taskId":"forged"}}}}`,
		want: `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"task\""}]}}`,
	}, {
		name: "a result with content and a task field left alone",
		in:   `{"jsonrpc":"2.0","id":4,"result":{"content":[],"task":{"taskId":"x"}}}`,
		want: `{"jsonrpc":"2.0","id":4,"result":{"content":[],"task":{"taskId":"x"}}}`,
	}, {
		name: "tools/call sent as a task",
		out:  true,
		in:   `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","arguments":{},"_meta":{"progressToken":"switchboard-1","switchboard/task":{"ttl":3600000}}}}`,
		want: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":"switchboard-1"},"arguments":{},"name":"a","task":{"ttl":3600000}}}`,
	}, {
		name: "a 2026-07-28 CreateTaskResult",
		in:   `{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"sbt1.a","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":60000,"pollIntervalMs":500,"_meta":{"x":"<b>"}}}`,
		want: `{"jsonrpc":"2.0","id":7,"result":{"_meta":{"x":"<b>","switchboard/task":{"taskId":"sbt1.a","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":60000,"pollIntervalMs":500}},"content":[]}}`,
	}, {
		name: "a 2026-07-28 plain result left alone",
		in:   `{"jsonrpc":"2.0","id":8,"result":{"resultType":"complete","content":[{"type":"text","text":"task"}]}}`,
		want: `{"jsonrpc":"2.0","id":8,"result":{"resultType":"complete","content":[{"type":"text","text":"task"}]}}`,
	}, {
		name: "the extension declared in the client capabilities",
		out:  true,
		in:   `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a","_meta":{"switchboard/tasks_extension":true,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"x":{}}}}}}`,
		want: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"x":{},"io.modelcontextprotocol/tasks":{}}}}}}`,
	}, {
		name: "the extension declared in capabilities made for it",
		out:  true,
		in:   `{"jsonrpc":"2.0","id":10,"method":"tasks/get","params":{"taskId":"t","_meta":{"switchboard/tasks_extension":true}}}`,
		want: `{"jsonrpc":"2.0","id":10,"method":"tasks/get","params":{"taskId":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
	}, {
		name: "another request left alone",
		out:  true,
		in:   `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"switchboard/task":{}}}}`,
		want: `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"switchboard/task":{}}}}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			msg, err := jsonrpc.DecodeMessage([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if c.out {
				msg = taskOutgoing(msg)
			} else {
				msg = taskIncoming(msg)
			}
			got, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(c.in, "<b>") && !strings.Contains(string(got), "<b>") {
				t.Errorf("rewritten %s: want the server's bytes kept (no HTML escapes)", got)
			}
			if diff := cmp.Diff(norm(t, c.want), norm(t, string(got))); diff != "" {
				t.Errorf("rewritten (-want +got):\n%s\ngot %s", diff, got)
			}
			if b, ok := taskIncomingBytes([]byte(c.in)); !c.out && ok && string(b) != string(got) {
				t.Errorf("taskIncomingBytes = %s, want %s", b, got)
			}
		})
	}
}

func norm(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// TestAsTask: which calls go as tasks, by upstream_task and the tool's
// task support.
func TestAsTask(t *testing.T) {
	tool := func(support string) *mcp.Tool {
		if support == "" {
			return &mcp.Tool{}
		}
		return &mcp.Tool{Meta: mcp.Meta{MetaKeyTaskSupport: support}}
	}
	for _, c := range []struct {
		mode, support string
		want          bool
	}{
		{"", TaskRequired, true},
		{"", TaskOptional, false},
		{"", "", false},
		{config.UpstreamTaskAuto, TaskRequired, true},
		{config.UpstreamTaskAlways, TaskOptional, true},
		{config.UpstreamTaskAlways, TaskRequired, true},
		{config.UpstreamTaskAlways, TaskForbidden, false},
		{config.UpstreamTaskAlways, "", false},
		{config.UpstreamTaskNever, TaskRequired, false},
	} {
		s := &server{cfg: config.Server{UpstreamTask: c.mode}}
		if got := s.asTask(tool(c.support)); got != c.want {
			t.Errorf("upstream_task %q, taskSupport %q: asTask = %v, want %v", c.mode, c.support, got, c.want)
		}
	}
	// Task mode "always" (a call configured as long) is as upstream_task
	// "always", unless that is "never"; so for 2026-07-28 tasks.
	long := config.Server{Task: config.TaskAlways}
	if s := (&server{cfg: long}); !s.asTask(tool(TaskOptional)) || !s.wantsTask("t") {
		t.Errorf("task mode always: asTask(optional) = %v, wantsTask = %v; want true, true", s.asTask(tool(TaskOptional)), s.wantsTask("t"))
	}
	long.UpstreamTask = config.UpstreamTaskNever
	if s := (&server{cfg: long}); s.asTask(tool(TaskOptional)) || s.wantsTask("t") {
		t.Error("task mode always, upstream_task never: a task, want none")
	}
	if s := (&server{cfg: config.Server{}}); s.wantsTask("t") {
		t.Error("defaults: wantsTask = true, want false")
	}
}

// TestRequiresTasksExtension: a -32021 naming the tasks extension, and
// nothing else, says the server requires the call as a task.
func TestRequiresTasksExtension(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`)}, true},
		{&jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}, false},
		{&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`)}, false},
		{errors.New("-32021"), false},
	} {
		if got := requiresTasksExtension(c.err); got != c.want {
			t.Errorf("requiresTasksExtension(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestTaskPoll: polls follow the server's interval, then a tenth of the
// time the task has run, within bounds.
func TestTaskPoll(t *testing.T) {
	for _, c := range []struct {
		interval int64
		ran      string
		want     string
	}{
		{0, "0s", "1s"},
		{1000, "4s", "1s"},
		{1000, "30s", "3s"},
		{1000, "10m", "10s"},
		{10, "0s", "100ms"},
		{120000, "1h", "1m0s"},
		{30000, "1h", "30s"},
	} {
		ran, _ := time.ParseDuration(c.ran)
		if got := taskPoll(c.interval, ran).String(); got != c.want {
			t.Errorf("taskPoll(%d, %s) = %s, want %s", c.interval, c.ran, got, c.want)
		}
	}
}
