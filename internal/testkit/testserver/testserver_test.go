package main_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	main "github.com/switchboardmcp/switchboard/internal/testkit/testserver"
)

const pkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// callTimeout bounds each test's MCP traffic.
const callTimeout = 30 * time.Second

func connect(t *testing.T, opts *mcp.ClientOptions, args ...string) *mcp.ClientSession {
	t.Helper()
	return connectCmd(t, opts, exec.Command(interop.Build(t, pkg), args...))
}

func connectCmd(t *testing.T, opts *mcp.ClientOptions, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	args := cmd.Args[1:]
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "testserver-test", Version: "0"}, opts).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("Connect(testserver %q): %v", args, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", name, args, err)
	}
	return res
}

func firstText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func TestEcho(t *testing.T) {
	cs := connect(t, nil)
	if got := firstText(callText(t, cs, "echo", map[string]any{"text": "hello"})); got != "hello" {
		t.Errorf("echo(hello) = %q, want %q", got, "hello")
	}
}

// TestBehaviours exercises the well-behaved tools and a few flags; the
// hostile flags are for the tests of the packages that must survive them.
func TestBehaviours(t *testing.T) {
	t.Run("tools", func(t *testing.T) {
		cs := connect(t, nil, "-tools", "250", "-page-size", "100", "-tool-name", "a.b", "-ref-cycle", "-bad-schema")
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		first, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(first.Tools) != 100 || first.NextCursor == "" {
			t.Errorf("first page: %d tools, cursor %q; want 100 and a cursor", len(first.Tools), first.NextCursor)
		}
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		for _, want := range []string{"echo", "content", "ask_briefly", "ask_detached", "t0001", "t0250", "a.b", "ref_cycle", "bad_schema"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools lack %q", want)
			}
		}
		if got, want := len(names), 12+250+3; got != want {
			t.Errorf("%d tools, want %d", got, want)
		}
	})
	t.Run("tools-calls", func(t *testing.T) {
		t.Setenv("TESTSERVER_PROBE", "probe-value")
		cs := connect(t, nil)
		if got := firstText(callText(t, cs, "add", map[string]any{"a": 2, "b": 3.5})); got != "5.5" {
			t.Errorf("add(2, 3.5) = %q, want 5.5", got)
		}
		if got := firstText(callText(t, cs, "env", map[string]any{"name": "TESTSERVER_PROBE"})); got != "probe-value" {
			t.Errorf("env(TESTSERVER_PROBE) = %q, want probe-value", got)
		}
		if res := callText(t, cs, "fail", nil); !res.IsError {
			t.Errorf("fail: IsError = false, want true")
		}
		res := callText(t, cs, "content", nil)
		var kinds []string
		for _, c := range res.Content {
			kinds = append(kinds, strings.TrimPrefix(fmt.Sprintf("%T", c), "*mcp."))
		}
		if want := []string{"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink"}; !slices.Equal(kinds, want) {
			t.Errorf("content kinds = %q, want %q", kinds, want)
		}
		if res.StructuredContent == nil || res.Meta == nil {
			t.Errorf("content: structuredContent %v, _meta %v; want both", res.StructuredContent, res.Meta)
		}
	})
	t.Run("progress", func(t *testing.T) {
		// The client handles notifications concurrently with the result.
		got := make(chan float64, 10)
		cs := connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			got <- req.Params.Progress
		}})
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3, "interval_ms": 1}}
		params.SetProgressToken("p1")
		if _, err := cs.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		var steps []float64
		for len(steps) < 3 {
			select {
			case p := <-got:
				steps = append(steps, p)
			case <-ctx.Done():
				t.Fatalf("progress notifications %v, want 3 (%v)", steps, ctx.Err())
			}
		}
		slices.Sort(steps)
		if want := []float64{1, 2, 3}; !slices.Equal(steps, want) {
			t.Errorf("progress notifications %v, want %v", steps, want)
		}
	})
	t.Run("client-features", func(t *testing.T) {
		cs := connect(t, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
			},
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "fake", Content: &mcp.TextContent{Text: "hello from the model"}}, nil
			},
		})
		if got := firstText(callText(t, cs, "elicit", nil)); !strings.Contains(got, `"action":"accept"`) || !strings.Contains(got, "Grace") {
			t.Errorf("elicit = %q, want the accepted content", got)
		}
		if got := firstText(callText(t, cs, "sample", nil)); got != "hello from the model" {
			t.Errorf("sample = %q, want the model's text", got)
		}
		if got := firstText(callText(t, cs, "roots", nil)); got != "" {
			t.Errorf("roots = %q, want none", got)
		}
	})
	t.Run("cancellation", func(t *testing.T) {
		cmd := exec.Command(interop.Build(t, pkg))
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 10)
		cs := connectCmd(t, nil, cmd)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}}); err == nil {
			t.Fatalf("slow(60s) with a 100ms deadline succeeded")
		}
		wait, stop := context.WithTimeout(t.Context(), callTimeout)
		defer stop()
		for {
			select {
			case line := <-lines:
				if strings.Contains(line, "slow: cancelled") {
					return
				}
			case <-wait.Done():
				t.Fatalf("the server did not log the cancellation on stderr")
			}
		}
	})
	t.Run("without", func(t *testing.T) {
		cs := connect(t, nil, "-without", "resources/templates/list", "-without", "ping")
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Resources == nil {
			t.Errorf("capabilities = %+v, want resources still declared", caps)
		}
		for name, err := range map[string]error{
			"resources/templates/list": func() error { _, err := cs.ListResourceTemplates(ctx, nil); return err }(),
			"ping":                     cs.Ping(ctx, nil),
		} {
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("%s: err = %v, want JSON-RPC -32601", name, err)
			}
		}
		if _, err := cs.ListResources(ctx, nil); err != nil {
			t.Errorf("resources/list: %v, want it answered", err)
		}
	})
	t.Run("raw-tool", func(t *testing.T) {
		// Two pages, so that the raw tools must go on the last.
		cs := connect(t, nil, "-tools", "150", "-raw-tool", `{"name":"null_schema","inputSchema":null}`, "-raw-tool", `{"name":"no_schema"}`)
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		found := map[string]bool{}
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == "null_schema" || tool.Name == "no_schema" {
				found[tool.Name] = true
				if tool.InputSchema != nil {
					t.Errorf("%s: inputSchema %v, want none", tool.Name, tool.InputSchema)
				}
			}
		}
		if !found["null_schema"] || !found["no_schema"] {
			t.Errorf("raw tools listed: %v, want both", found)
		}
		if got := firstText(callText(t, cs, "echo", map[string]any{"text": "still"})); got != "still" {
			t.Errorf("echo = %q", got)
		}
	})
	t.Run("hostile-text", func(t *testing.T) {
		cs := connect(t, nil, "-hostile-text", "-description-bytes", "5000")
		if got := cs.InitializeResult().Instructions; got != main.HostileText {
			t.Errorf("instructions = %q, want HostileText", got)
		}
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		descs := map[string]string{}
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			descs[tool.Name] = tool.Description
		}
		if descs["hostile"] != main.HostileText || len(descs["long"]) != 5000 {
			t.Errorf("hostile: %q, long: %d bytes; want HostileText and 5000", descs["hostile"], len(descs["long"]))
		}
		if _, ok := descs["hid\u200bden"]; !ok {
			t.Errorf("no tool hid\\u200bden: %v", slices.Collect(maps.Keys(descs)))
		}
	})
	t.Run("crash-on-call", func(t *testing.T) {
		cs := connect(t, nil, "-crash-on-call")
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
			t.Errorf("CallTool on -crash-on-call succeeded, want an error")
		}
	})
}
