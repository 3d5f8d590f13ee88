package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/store"
)

const fixturePkg = "github.com/switchboardmcp/switchboard/internal/testkit/testserver"

// fixture returns a stdio server config running the hostile-fixture server
// with the given flags.
func fixture(t testing.TB, id string, flags ...string) config.Server {
	t.Helper()
	return config.Server{
		ID:        id,
		Transport: config.TransportStdio,
		Command:   interop.Build(t, fixturePkg),
		Args:      flags,
	}
}

// everything returns a stdio config for the real server-everything.
func everything(t testing.TB, id string) config.Server {
	t.Helper()
	cmd := interop.Everything(t)
	return config.Server{
		ID:        id,
		Transport: config.TransportStdio,
		Command:   cmd[0],
		Args:      append(cmd[1:], "stdio"),
	}
}

// start starts a host over servers, closed (and checked for leaks) when
// the test ends. A states given is watching before the start.
func start(t *testing.T, servers []config.Server, opts *host.Options, watch ...*states) (*host.Host, *interop.LogBuffer) {
	t.Helper()
	before := runtime.NumGoroutine()
	kidsBefore := children(t)
	logs := &interop.LogBuffer{}
	if opts == nil {
		opts = &host.Options{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := host.New(servers, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, st := range watch {
		st.w = h.Watch(0)
	}
	if err := h.Start(ctx); err != nil {
		t.Fatalf("Start: %v\nlogs:\n%s", err, logs)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkNoLeaks(t, before, kidsBefore)
	})
	return h, logs
}

// checkNoLeaks waits (bounded) for goroutines to return to the baseline and
// checks that the test process has no child left.
func checkNoLeaks(t *testing.T, before int, kidsBefore []string) {
	t.Helper()
	wait.Goroutines(t, before)
	// Peers a test started itself (an HTTP server) are not the host's.
	var left []string
	for _, k := range children(t) {
		if !slices.Contains(kidsBefore, k) {
			left = append(left, k)
		}
	}
	if len(left) > 0 {
		t.Errorf("child processes left after Close: %v", left)
	}
}

// children lists the live child processes of this process.
func children(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, d := range interop.Children(os.Getpid()) {
		out = append(out, d)
	}
	return out
}

// openStore opens a state store (the tool-list cache) in a temp folder.
func openStore(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callText(t *testing.T, h *host.Host, name, args string, opts *host.CallOptions) string {
	t.Helper()
	res, err := h.CallTool(context.Background(), name, json.RawMessage(args), opts)
	if err != nil {
		t.Fatalf("CallTool(%q, %s): %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("CallTool(%q, %s): isError: %s", name, args, text(res))
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(h *host.Host) []string {
	var names []string
	for _, t := range h.Tools() {
		names = append(names, t.Name)
	}
	return names
}

func hasTool(h *host.Host, name string) bool {
	_, ok := h.Tool(name)
	return ok
}

func TestEverythingStdio(t *testing.T) {
	h, _ := start(t, []config.Server{everything(t, "everything")}, nil)

	for _, want := range []string{"mcp_everything_echo", "mcp_everything_get-sum", "mcp_everything_get-tiny-image"} {
		if !hasTool(h, want) {
			t.Errorf("tool %q not offered; have %v", want, toolNames(h))
		}
	}
	if got := callText(t, h, "mcp_everything_get-sum", `{"a":2,"b":3}`, nil); !strings.Contains(got, "5") {
		t.Errorf("get-sum(2,3) = %q, want it to contain 5", got)
	}
	if got := callText(t, h, "mcp_everything_echo", `{"message":"hello"}`, nil); !strings.Contains(got, "hello") {
		t.Errorf("echo = %q, want hello", got)
	}

	// Every content kind server-everything offers keeps full fidelity.
	ctx := context.Background()
	kinds := []struct {
		tool, args string
		check      func(*mcp.CallToolResult) bool
		want       string
	}{
		{"get-tiny-image", `{}`, func(r *mcp.CallToolResult) bool {
			for _, c := range r.Content {
				if im, ok := c.(*mcp.ImageContent); ok && len(im.Data) > 0 && im.MIMEType == "image/png" {
					return true
				}
			}
			return false
		}, "an image/png ImageContent with data"},
		{"get-resource-reference", `{"resourceId":2}`, func(r *mcp.CallToolResult) bool {
			for _, c := range r.Content {
				if er, ok := c.(*mcp.EmbeddedResource); ok && er.Resource != nil && er.Resource.URI != "" {
					return true
				}
			}
			return false
		}, "an EmbeddedResource"},
		{"get-resource-links", `{"count":2}`, func(r *mcp.CallToolResult) bool {
			n := 0
			for _, c := range r.Content {
				if rl, ok := c.(*mcp.ResourceLink); ok && rl.URI != "" {
					n++
				}
			}
			return n == 2
		}, "two ResourceLinks"},
		{"get-structured-content", `{"location":"Chicago"}`, func(r *mcp.CallToolResult) bool {
			m, ok := r.StructuredContent.(map[string]any)
			return ok && m["conditions"] != nil
		}, "structuredContent with conditions"},
		{"get-annotated-message", `{"messageType":"error","includeImage":true}`, func(r *mcp.CallToolResult) bool {
			for _, c := range r.Content {
				if tc, ok := c.(*mcp.TextContent); ok && tc.Annotations != nil {
					return true
				}
			}
			return false
		}, "annotated text"},
	}
	for _, k := range kinds {
		res, err := h.CallTool(ctx, "mcp_everything_"+k.tool, json.RawMessage(k.args), nil)
		if err != nil {
			t.Errorf("CallTool(%s): %v", k.tool, err)
			continue
		}
		if !k.check(res) {
			raw, _ := json.Marshal(res)
			t.Errorf("CallTool(%s) = %s, want %s", k.tool, raw, k.want)
		}
	}

	// Invalid arguments never reach the server, and the error names the pointer.
	_, err := h.CallTool(ctx, "mcp_everything_get-sum", json.RawMessage(`{"a":"two","b":3}`), nil)
	if !errors.Is(err, host.ErrInvalidArguments) || !strings.Contains(err.Error(), "/a") {
		t.Errorf("get-sum with a string: err = %v, want ErrInvalidArguments naming /a", err)
	}
	_, err = h.CallTool(ctx, "mcp_everything_get-sum", json.RawMessage(`{"a":1}`), nil)
	if !errors.Is(err, host.ErrInvalidArguments) || !strings.Contains(err.Error(), "b") {
		t.Errorf("get-sum without b: err = %v, want ErrInvalidArguments naming b", err)
	}

	// Resources, templates and prompts, attributed to their server.
	rs, err := h.Resources(ctx)
	if err != nil || len(rs) == 0 {
		t.Fatalf("Resources = %d, %v; want some", len(rs), err)
	}
	if rs[0].Server != "everything" {
		t.Errorf("Resources()[0].Server = %q, want everything", rs[0].Server)
	}
	rr, err := h.ReadResource(ctx, "everything", rs[0].Resource.URI, nil)
	if err != nil || len(rr.Contents) == 0 {
		t.Errorf("ReadResource(%s) = %v, %v", rs[0].Resource.URI, rr, err)
	}
	ts, err := h.ResourceTemplates(ctx)
	if err != nil || len(ts) == 0 {
		t.Errorf("ResourceTemplates = %d, %v; want some", len(ts), err)
	}
	ps, err := h.Prompts(ctx)
	if err != nil || len(ps) == 0 {
		t.Fatalf("Prompts = %d, %v; want some", len(ps), err)
	}
	var simple string
	for _, p := range ps {
		if len(p.Prompt.Arguments) == 0 {
			simple = p.Prompt.Name
			break
		}
	}
	if simple == "" {
		t.Fatalf("no prompt without arguments among %d", len(ps))
	}
	gp, err := h.GetPrompt(ctx, "", simple, nil, nil)
	if err != nil || len(gp.Messages) == 0 {
		t.Errorf("GetPrompt(%s) = %v, %v", simple, gp, err)
	}
}

func TestEverythingStreamableHTTP(t *testing.T) {
	url := interop.StartEverythingHTTP(t, "streamableHttp")
	h, _ := start(t, []config.Server{{ID: "ev", Transport: config.TransportHTTP, URL: url, AllowLocalEndpoint: true}}, nil)
	if got := callText(t, h, "mcp_ev_get-sum", `{"a":20,"b":22}`, nil); !strings.Contains(got, "42") {
		t.Errorf("get-sum = %q, want 42", got)
	}
	if st := h.Servers()[0]; st.Transport != config.TransportHTTP || st.State != host.StateReady || st.Tools < 13 {
		t.Errorf("status = %+v, want ready http with >= 13 tools", st)
	}
}

func TestEverythingLegacySSE(t *testing.T) {
	url := interop.StartEverythingHTTP(t, "sse")
	t.Run("sse", func(t *testing.T) {
		h, _ := start(t, []config.Server{{ID: "ev", Transport: config.TransportSSE, URL: url, AllowLocalEndpoint: true}}, nil)
		if got := callText(t, h, "mcp_ev_get-sum", `{"a":1,"b":2}`, nil); !strings.Contains(got, "3") {
			t.Errorf("get-sum = %q, want 3", got)
		}
	})
	t.Run("http falls back to sse on 4xx", func(t *testing.T) {
		h, logs := start(t, []config.Server{{ID: "ev", Transport: config.TransportHTTP, URL: url, AllowLocalEndpoint: true}}, nil)
		if got := callText(t, h, "mcp_ev_get-sum", `{"a":1,"b":2}`, nil); !strings.Contains(got, "3") {
			t.Errorf("get-sum = %q, want 3", got)
		}
		if !strings.Contains(logs.String(), "legacy SSE") {
			t.Errorf("no fallback in logs:\n%s", logs)
		}
	})
}

func TestFilesystemStdio(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := interop.Filesystem(t)
	h, _ := start(t, []config.Server{{ID: "fs", Command: cmd[0], Args: append(cmd[1:], dir)}}, nil)
	got := callText(t, h, "mcp_fs_read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "hello.txt")), nil)
	if !strings.Contains(got, "hello from disk") {
		t.Errorf("read_text_file = %q", got)
	}
	_, err := h.CallTool(context.Background(), "mcp_fs_read_text_file", json.RawMessage(`{}`), nil)
	if !errors.Is(err, host.ErrInvalidArguments) {
		t.Errorf("read_text_file without path: err = %v, want ErrInvalidArguments", err)
	}
}

// TestCallTimeoutOption: CallOptions.Timeout replaces the server's timeout
// for one call, shorter or longer, and the error names the one that
// applied.
func TestCallTimeoutOption(t *testing.T) {
	s := fixture(t, "fx")
	s.Timeout = 300 * time.Millisecond
	h, _ := start(t, []config.Server{s}, nil)
	// Longer: a call of 600ms outlives the server's 300ms but not its own 30s.
	if got := callText(t, h, "mcp_fx_slow", `{"ms":600}`, &host.CallOptions{Timeout: 30 * time.Second}); got != "slept 600 ms" {
		t.Errorf("slow 600ms with Timeout 30s = %q", got)
	}
	// Shorter: cut at its own 100ms, not the server's default 60s.
	s2 := fixture(t, "fy")
	h2, _ := start(t, []config.Server{s2}, nil) // the default, 60s
	_, err := h2.CallTool(context.Background(), "mcp_fy_slow", json.RawMessage(`{"ms":60000}`), &host.CallOptions{Timeout: 100 * time.Millisecond})
	if !errors.Is(err, host.ErrTimeout) || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Errorf("slow 60s with Timeout 100ms: err = %v, want ErrTimeout naming 100ms", err)
	}
}

func TestTimeoutCancelsUpstream(t *testing.T) {
	s := fixture(t, "fx")
	s.Timeout = 300 * time.Millisecond
	h, logs := start(t, []config.Server{s}, nil)
	start := time.Now()
	_, err := h.CallTool(context.Background(), "mcp_fx_slow", json.RawMessage(`{"ms":60000}`), nil)
	elapsed := time.Since(start)
	if !errors.Is(err, host.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	for _, want := range []string{`server "fx"`, `tool "slow"`, "300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if elapsed > 10*time.Second {
		t.Errorf("timeout took %v", elapsed)
	}
	// The server saw the cancellation (notifications/cancelled) and says so
	// on stderr; the host is still usable.
	if got := callText(t, h, "mcp_fx_echo", `{"text":"still here"}`, nil); got != "still here" {
		t.Errorf("echo after timeout = %q", got)
	}
	waitFor(t, func() bool { return strings.Contains(logs.String(), "cancelled") }, "the server to log the cancellation:\n"+logs.String())
}

// waitFor waits for cond, for something that happens in another process.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	wait.For(t, what, func() (bool, bool) { ok := cond(); return ok, ok })
}

func TestServerThatNeverAnswers(t *testing.T) {
	s := fixture(t, "hang", "-hang")
	s.Timeout = 200 * time.Millisecond
	h, _ := start(t, []config.Server{s}, nil)
	_, err := h.CallTool(context.Background(), "mcp_hang_echo", json.RawMessage(`{"text":"x"}`), nil)
	if !errors.Is(err, host.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}

	// A server that never answers initialize fails the start within its
	// connect timeout.
	s2 := fixture(t, "mute", "-hang-init")
	s2.ConnectTimeout = 300 * time.Millisecond
	_, err = host.Start(context.Background(), []config.Server{s2}, nil)
	if err == nil || !strings.Contains(err.Error(), `"mute"`) || !strings.Contains(err.Error(), "connect_timeout") {
		t.Errorf("Start with a mute server: err = %v, want a connect_timeout error naming it", err)
	}
}

func TestServerCrashesMidCall(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "crashy", "-crash-on-call"), fixture(t, "ok")}, nil)
	_, err := h.CallTool(context.Background(), "mcp_crashy_echo", json.RawMessage(`{"text":"x"}`), nil)
	if !errors.Is(err, host.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), `"crashy"`) || !strings.Contains(err.Error(), "connection lost") {
		t.Errorf("error %q does not name the server and say the connection was lost", err)
	}
	// The other server is unaffected.
	if got := callText(t, h, "mcp_ok_echo", `{"text":"fine"}`, nil); got != "fine" {
		t.Errorf("other server's echo = %q", got)
	}
}

func TestHostileOutput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		ok    bool // the call succeeds
	}{
		// Lines that are not messages are skipped (issue 11 §3), the one
		// that starts like a message but ends early too.
		{"garbage", []string{"-garbage"}, true},
		{"huge line", []string{"-huge-line", strconv.Itoa(64 << 20)}, false},
		{"endless stream", []string{"-stream-forever"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fixture(t, "bad", tc.flags...)
			s.Timeout = 5 * time.Second
			h, _ := start(t, []config.Server{s}, &host.Options{MaxMessageBytes: 1 << 20})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := h.CallTool(context.Background(), "mcp_bad_echo", json.RawMessage(`{"text":"x"}`), nil)
			switch {
			case tc.ok && err != nil:
				t.Fatalf("CallTool: %v", err)
			case tc.ok && text(res) != "x":
				t.Errorf("echo = %q, want x", text(res))
			case !tc.ok && err == nil:
				t.Fatalf("CallTool succeeded; want an error")
			}
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 32<<20 {
				t.Errorf("heap grew by %d MiB reading a hostile stream", grown>>20)
			}
		})
	}
}

func TestNameCollisionsAndLongNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	h, _ := start(t, []config.Server{
		fixture(t, "a", "-tool-name", "dup.tool", "-tool-name", "dup_tool", "-tool-name", long, "-tool-name", long+"y"),
		fixture(t, "b"),
	}, &host.Options{ToolNameFormat: "{tool}"})

	// "dup.tool" and "dup_tool" both become dup_tool: the first wins.
	tool, ok := h.Tool("dup_tool")
	if !ok || tool.Tool.Name != "dup.tool" {
		t.Errorf("dup_tool = %+v, %v; want the first declared, dup.tool", tool, ok)
	}
	// echo of b collides with echo of a: a wins, b's is skipped and reported.
	if tool, _ := h.Tool("echo"); tool.Server != "a" {
		t.Errorf("echo belongs to %q, want a", tool.Server)
	}
	var skippedB, skippedA []host.Skipped
	for _, st := range h.Servers() {
		switch st.ID {
		case "a":
			skippedA = st.Skipped
		case "b":
			skippedB = st.Skipped
		}
	}
	if !containsSkip(skippedA, "dup_tool", "collides") {
		t.Errorf("a skipped = %+v, want dup_tool reported as colliding", skippedA)
	}
	if !containsSkip(skippedB, "echo", "collides") {
		t.Errorf("b skipped = %+v, want echo reported as colliding", skippedB)
	}
	// Long names are cut to 64 with a hash, stay distinct and routable.
	var longs []string
	for _, tl := range h.Tools() {
		if len(tl.Name) > host.MaxToolNameLength {
			t.Errorf("tool name %q is %d characters", tl.Name, len(tl.Name))
		}
		if strings.HasPrefix(tl.Tool.Name, "xxxx") {
			longs = append(longs, tl.Name)
		}
	}
	if len(longs) != 2 || longs[0] == longs[1] {
		t.Fatalf("long tools = %v, want two distinct names", longs)
	}
	res, err := h.CallTool(context.Background(), longs[1], nil, nil)
	if err != nil || res.IsError {
		t.Errorf("calling %s: %v %v", longs[1], res, err)
	}
}

func containsSkip(sk []host.Skipped, tool, reason string) bool {
	for _, s := range sk {
		if s.Tool == tool && strings.Contains(s.Reason, reason) {
			return true
		}
	}
	return false
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		format, server, tool, want string
	}{
		{"mcp_{server}_{tool}", "gh", "create_issue", "mcp_gh_create_issue"},
		{"{server}__{tool}", "gh", "create-issue", "gh__create-issue"},
		{"{tool}", "gh", "a.b/c d", "a_b_c_d"},
		{"mcp_{server}_{tool}", "fs", "résumé", "mcp_fs_r__sum__"},
		{"mcp_{server}_{tool}", "s", long, "mcp_s_" + strings.Repeat("a", 49) + "_" + "HASH"},
	} {
		got := host.ToolName(tc.format, tc.server, tc.tool)
		want := tc.want
		if strings.HasSuffix(want, "HASH") {
			if len(got) != 64 || !strings.HasPrefix(got, strings.TrimSuffix(want, "HASH")) {
				t.Errorf("ToolName(%q, %q, %q) = %q (%d), want 64 chars starting %q", tc.format, tc.server, tc.tool, got, len(got), strings.TrimSuffix(want, "HASH"))
			}
			if again := host.ToolName(tc.format, tc.server, tc.tool); again != got {
				t.Errorf("ToolName is not deterministic: %q then %q", got, again)
			}
			if other := host.ToolName(tc.format, tc.server, tc.tool+"b"); other == got {
				t.Errorf("two long names map to one: %q", got)
			}
			continue
		}
		if got != want {
			t.Errorf("ToolName(%q, %q, %q) = %q, want %q", tc.format, tc.server, tc.tool, got, want)
		}
	}
}

func TestSchemasAtDiscovery(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "sc", "-ref-cycle", "-bad-schema")}, nil)
	st := h.Servers()[0]
	if st.State != host.StateReady {
		t.Fatalf("state = %s (%v), want ready: a bad schema must not take the server down", st.State, st.Err)
	}
	var reasons []string
	for _, sk := range st.Skipped {
		reasons = append(reasons, sk.Tool+": "+sk.Reason)
	}
	if len(st.Skipped) != 2 {
		t.Errorf("skipped = %v, want the ref-cycle and bad-schema tools", reasons)
	}
	for _, sk := range st.Skipped {
		if !strings.Contains(sk.Reason, "schema") {
			t.Errorf("skip reason %q does not mention the schema", sk.Reason)
		}
	}
	// The well-behaved tools are still there.
	if !hasTool(h, "mcp_sc_echo") {
		t.Errorf("echo missing: %v", toolNames(h))
	}
}

// TestECMAPatternTool: a tool whose schema pattern uses what Go's RE2
// lacks (lookahead, as 3 of the 198 tools of a popular Linear server do)
// is offered, and its arguments are checked against the pattern before the
// call goes out: a valid id reaches the server, an invalid one is refused
// naming the pattern. A pattern that backtracks catastrophically on an
// argument fails that call after its time bound, with an error naming the
// tool, the argument and the pattern, instead of hanging it.
func TestECMAPatternTool(t *testing.T) {
	const lookahead = `^(?=.*[A-Z])[A-Z0-9]{1,7}-\d+$`
	h, _ := start(t, []config.Server{fixture(t, "lin", "-pattern-tool", lookahead, "-pattern-tool", `^(a+)+$`)}, nil)
	for _, name := range []string{"mcp_lin_pattern_1", "mcp_lin_pattern_2"} {
		if !hasTool(h, name) {
			t.Fatalf("%s not offered (skipped: %+v)", name, h.Servers()[0].Skipped)
		}
	}
	ctx := context.Background()
	res, err := h.CallTool(ctx, "mcp_lin_pattern_1", json.RawMessage(`{"id":"ENG-123"}`), nil)
	if err != nil || text(res) != "called pattern_1 id=ENG-123" {
		t.Errorf("valid id: %v, %v; want the server's answer", res, err)
	}
	var verr *schema.ValidationError
	_, err = h.CallTool(ctx, "mcp_lin_pattern_1", json.RawMessage(`{"id":"123-456"}`), nil)
	if !errors.As(err, &verr) || !strings.Contains(err.Error(), "/id: does not match pattern "+strconv.Quote(lookahead)) {
		t.Errorf("invalid id: %v; want it refused for the pattern", err)
	}
	start := time.Now()
	_, err = h.CallTool(ctx, "mcp_lin_pattern_2", json.RawMessage(`{"id":"`+strings.Repeat("a", 40)+`!"}`), nil)
	if !errors.As(err, &verr) || !strings.Contains(err.Error(), "pattern_2") ||
		!strings.Contains(err.Error(), `/id: pattern "^(a+)+$" took longer than`) {
		t.Errorf("catastrophic pattern: %v; want an error naming the tool, /id and the pattern", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the catastrophic call took %s, want about the pattern's bound", d)
	}
}

func TestManyTools(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "many", "-tools", "2000")}, nil)
	if n := h.Servers()[0].Tools; n < 2000 {
		t.Fatalf("tools = %d, want >= 2000 (pagination)", n)
	}
	if !hasTool(h, "mcp_many_t2000") && !hasTool(h, "mcp_many_t1999") {
		t.Errorf("last tools missing; have %d", len(h.Tools()))
	}
}

func TestAllowlist(t *testing.T) {
	s := fixture(t, "al")
	s.ToolsAllowlist = []string{"echo", "nonexistent"}
	h, _ := start(t, []config.Server{s}, nil)
	if got := toolNames(h); len(got) != 1 || got[0] != "mcp_al_echo" {
		t.Errorf("tools = %v, want only mcp_al_echo", got)
	}
	st := h.Servers()[0]
	if !containsSkip(st.Skipped, "add", "tools_allowlist") {
		t.Errorf("skipped = %+v, want add skipped for the allowlist", st.Skipped)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "nonexistent") {
		t.Errorf("warnings = %v, want one naming nonexistent", st.Warnings)
	}
	_, err := h.CallTool(context.Background(), "mcp_al_add", json.RawMessage(`{"a":1,"b":2}`), nil)
	if !errors.Is(err, host.ErrUnknownTool) {
		t.Errorf("calling a tool outside the allowlist: err = %v, want ErrUnknownTool", err)
	}
	// As CallTool's doc says: it names the tool, and no server is involved.
	var ce *host.CallError
	if errors.As(err, &ce) || !strings.Contains(fmt.Sprint(err), `"mcp_al_add"`) {
		t.Errorf("unknown tool: err = %#v, want an ErrUnknownTool naming the tool, not a *CallError", err)
	}
}

// TestAllowlistWarnedOnceListed: a tools_allowlist is checked against the
// server's tools once it has listed them, not while it is still starting
// (issue 24): another server joining meanwhile rebuilt the catalog, and
// every name of a starting server's allowlist, "echo" too, was warned as
// one the server does not have. A name it really lacks is warned once.
// The same for tool_tasks' names, in the server's status too.
func TestAllowlistWarnedOnceListed(t *testing.T) {
	slow := fixture(t, "slow", "-slow-start", "500")
	slow.ToolsAllowlist = []string{"echo", "nope"}
	slow.ToolTasks = map[string]string{"echo": config.TaskNever, "nope_task": config.TaskAlways}
	h, logs := start(t, []config.Server{fixture(t, "fast"), slow}, nil)
	if !hasTool(h, "mcp_slow_echo") {
		t.Fatalf("tools = %v, want mcp_slow_echo", toolNames(h))
	}
	if strings.Contains(logs.String(), `tools_allowlist names \"echo\"`) {
		t.Errorf("warned about an allowlisted tool the server has, before it listed its tools:\n%s", logs)
	}
	if n := strings.Count(logs.String(), `tools_allowlist names \"nope\"`); n != 1 {
		t.Errorf("the missing name was warned %d times, want once:\n%s", n, logs)
	}
	if strings.Contains(logs.String(), `tool_tasks names \"echo\"`) {
		t.Errorf("warned about a tool_tasks tool the server has:\n%s", logs)
	}
	if n := strings.Count(logs.String(), `tool_tasks names \"nope_task\"`); n != 1 {
		t.Errorf("the missing tool_tasks name was warned %d times, want once:\n%s", n, logs)
	}
	for _, st := range h.Servers() {
		if st.ID == "slow" && !slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.HasPrefix(w, `tool_tasks names "nope_task"`) }) {
			t.Errorf("slow's warnings = %q, want tool_tasks' missing name", st.Warnings)
		}
	}
}

// TestProtocolErrorText: a server's JSON-RPC error reads as the server's
// message after server and tool, once: not with the go-sdk's `calling
// "tools/call": ` in between (which a model got as "Error: error: server
// ... calling ..."); its code stays in the chain.
func TestProtocolErrorText(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "pe", "-without", "tools/call")}, nil)
	_, err := h.CallTool(context.Background(), "mcp_pe_echo", json.RawMessage(`{"text":"x"}`), nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("err = %v: the server's code is not in the chain", err)
	}
	if want := `server "pe": tool "echo": ` + je.Message; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestStartFailures(t *testing.T) {
	bad1 := config.Server{ID: "nope", Command: "/nonexistent/server"}
	bad2 := fixture(t, "dies", "-hang-init")
	bad2.ConnectTimeout = 200 * time.Millisecond
	_, err := host.Start(context.Background(), []config.Server{fixture(t, "good"), bad1, bad2}, nil)
	var se *host.StartError
	if !errors.As(err, &se) || len(se.Failed) != 2 {
		t.Fatalf("err = %v, want a StartError naming two servers", err)
	}
	for _, want := range []string{`"nope"`, "/nonexistent/server", `"dies"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("children left after a failed start: %v", kids)
	}

	// An optional server that fails is reported; the others go on.
	bad1.Optional = true
	h, _ := start(t, []config.Server{fixture(t, "good"), bad1}, nil)
	sts := h.Servers()
	if sts[0].State != host.StateReady || sts[1].State != host.StateFailed || sts[1].Err == nil {
		t.Errorf("statuses = %+v, want good ready and nope failed with an error", sts)
	}
}

func TestChildEnvironment(t *testing.T) {
	t.Setenv("SWITCHBOARD_TEST_HOST_SECRET", "host-only-value")
	t.Setenv("SWITCHBOARD_SECRET_FX_TOKEN", "s3cr3t-token-value")
	s := fixture(t, "env")
	s.Env = map[string]string{"DECLARED": "yes", "TOKEN": "{{secrets.fx_token}}"}
	h, logs := start(t, []config.Server{s}, nil)
	if got := callText(t, h, "mcp_env_env", `{"name":"SWITCHBOARD_TEST_HOST_SECRET"}`, nil); got != "" {
		t.Errorf("child sees the host's environment: %q", got)
	}
	if got := callText(t, h, "mcp_env_env", `{"name":"DECLARED"}`, nil); got != "yes" {
		t.Errorf("DECLARED = %q, want yes", got)
	}
	// The child got the resolved secret, which the host redacts from its
	// answer: what comes back is exactly the marker.
	if got := callText(t, h, "mcp_env_env", `{"name":"TOKEN"}`, nil); got != "[REDACTED]" {
		t.Errorf("TOKEN = %q, want the resolved secret, redacted", got)
	}
	if got := callText(t, h, "mcp_env_env", `{"name":"PATH"}`, nil); got == "" {
		t.Errorf("PATH is not passed")
	}
	if strings.Contains(logs.String(), "s3cr3t-token-value") {
		t.Errorf("the secret reached the log")
	}
	if got := h.Redactor().Redact("x s3cr3t-token-value y"); strings.Contains(got, "s3cr3t") {
		t.Errorf("the redactor does not know the secret: %q", got)
	}

	// An unresolved secret fails the start, naming server and placeholder.
	s2 := fixture(t, "env2")
	s2.Env = map[string]string{"X": "{{secrets.missing_one}}"}
	_, err := host.Start(context.Background(), []config.Server{s2}, nil)
	if err == nil || !strings.Contains(err.Error(), "env2") || !strings.Contains(err.Error(), "missing_one") {
		t.Errorf("unresolved secret: err = %v", err)
	}
}

func TestProgress(t *testing.T) {
	s := fixture(t, "p")
	h, _ := start(t, []config.Server{s}, nil)
	var mu sync.Mutex
	var got []float64
	callText(t, h, "mcp_p_progress", `{"steps":3,"interval_ms":1}`, &host.CallOptions{Progress: func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		got = append(got, p.Progress)
		mu.Unlock()
	}})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Errorf("progress notifications = %v, want 3", got)
	}
}

func TestProgressResetsTimeout(t *testing.T) {
	// 8 steps 100ms apart take 800ms, more than the 400ms timeout; each
	// progress notification restarts the timeout only when the server says so.
	args := `{"steps":8,"interval_ms":100}`
	s := fixture(t, "reset")
	s.Timeout = 400 * time.Millisecond
	s.ProgressResetsTimeout = true
	plain := fixture(t, "plain")
	plain.Timeout = 400 * time.Millisecond
	h, _ := start(t, []config.Server{s, plain}, nil)
	callText(t, h, "mcp_reset_progress", args, nil)
	if _, err := h.CallTool(context.Background(), "mcp_plain_progress", json.RawMessage(args), nil); !errors.Is(err, host.ErrTimeout) {
		t.Errorf("without progress_resets_timeout: err = %v, want ErrTimeout", err)
	}
}

func TestElicitationAndSampling(t *testing.T) {
	t.Run("declined without a handler", func(t *testing.T) {
		h, _ := start(t, []config.Server{fixture(t, "el")}, nil)
		if got := callText(t, h, "mcp_el_elicit", `{}`, nil); !strings.Contains(got, "decline") {
			t.Errorf("elicit = %q, want decline", got)
		}
	})
	t.Run("call handler with schema defaults", func(t *testing.T) {
		h, _ := start(t, []config.Server{fixture(t, "el")}, nil)
		var asked string
		got := callText(t, h, "mcp_el_elicit", `{}`, &host.CallOptions{
			Elicitation: func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				asked = server + ": " + req.Message
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			},
		})
		if !strings.HasPrefix(asked, "el: ") {
			t.Errorf("handler asked %q, want the server id first", asked)
		}
		if !strings.Contains(got, "accept") {
			t.Errorf("elicit = %q, want accept", got)
		}
	})
	t.Run("sampling refused without a handler", func(t *testing.T) {
		h, _ := start(t, []config.Server{fixture(t, "sa")}, nil)
		// The refusal is a clear error: as a Go error when the SDK fails
		// the input request itself, or as the tool's error result.
		res, err := h.CallTool(context.Background(), "mcp_sa_sample", json.RawMessage(`{}`), nil)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), "CreateMessage") && !strings.Contains(err.Error(), "sampling") {
				t.Errorf("sample without a handler: err = %v, want it to say sampling is not supported", err)
			}
		case !res.IsError:
			t.Errorf("sample without a handler = %q, want an error", text(res))
		}
	})
	t.Run("sampling handler", func(t *testing.T) {
		h, _ := start(t, []config.Server{fixture(t, "sa")}, &host.Options{
			Sampling: func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "sampled by " + server}}, nil
			},
		})
		if got := callText(t, h, "mcp_sa_sample", `{}`, nil); !strings.Contains(got, "sampled by sa") {
			t.Errorf("sample = %q", got)
		}
	})
	t.Run("roots from config", func(t *testing.T) {
		s := fixture(t, "ro")
		s.Roots = []string{"file:///tmp/project"}
		h, _ := start(t, []config.Server{s}, nil)
		if got := callText(t, h, "mcp_ro_roots", `{}`, nil); !strings.Contains(got, "file:///tmp/project") {
			t.Errorf("roots = %q", got)
		}
	})
}

func TestFixtureContentFidelity(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "c")}, nil)
	res, err := h.CallTool(context.Background(), "mcp_c_content", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, c := range res.Content {
		kinds[fmt.Sprintf("%T", c)] = true
	}
	for _, want := range []string{"*mcp.TextContent", "*mcp.ImageContent", "*mcp.AudioContent", "*mcp.EmbeddedResource", "*mcp.ResourceLink"} {
		if !kinds[want] {
			t.Errorf("content kinds %v lack %s", kinds, want)
		}
	}
	if res.StructuredContent == nil || len(res.Meta) == 0 {
		raw, _ := json.Marshal(res)
		t.Errorf("structuredContent or _meta lost: %s", raw)
	}
}

func TestGrandchildStopped(t *testing.T) {
	logs := &interop.LogBuffer{}
	h, err := host.Start(context.Background(), []config.Server{fixture(t, "gc", "-spawn-grandchild", "-ignore-sigterm")},
		&host.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`grandchild=(\d+)`)
	var pid int
	waitFor(t, func() bool {
		m := re.FindStringSubmatch(logs.String())
		if m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		return m != nil
	}, "the grandchild's pid in the logs")
	pid = serverHostPID(t, h, "gc", pid)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("grandchild %d not running before Close: %v", pid, err)
	}
	h.Close()
	// SIGKILL is delivered asynchronously and the grandchild is not ours to
	// wait for: poll, bounded, until it is gone or a zombie.
	wait.Gone(t, pid, "the grandchild, after Close")
	if kids := children(t); len(kids) > 0 {
		t.Errorf("children left: %v", kids)
	}
}

// serverHostPID returns the host's ID of the process that server id's
// stdio child, in a PID namespace of its own or not, calls pid.
func serverHostPID(t *testing.T, h *host.Host, id string, pid int) int {
	t.Helper()
	for _, st := range h.Servers() {
		if st.ID == id {
			hp, err := interop.HostPIDIn(st.PID, pid)
			if err != nil {
				t.Fatalf("server %s (pid %d): %v", id, st.PID, err)
			}
			return hp
		}
	}
	t.Fatalf("no server %s", id)
	return 0
}

// TestServersShareNoSecret: a stdio server cannot read the environment of
// another, where the host put its secrets (issue 23 §4). Two real servers
// started by the host, one with a secret in its env; the other reads the
// first's /proc/PID/environ, scans every /proc/*/environ, and tries again
// with /proc unmounted and mounted anew in namespaces of its own
// (interop.SnoopEnviron). Each has a /proc of its own, and the status says
// so.
func TestServersShareNoSecret(t *testing.T) {
	canary := interop.NewCanary(t)
	holder := fixture(t, "holder")
	holder.Env = map[string]string{"API_TOKEN": canary}
	h, _ := start(t, []config.Server{holder, fixture(t, "snoop", "-snoop")}, nil)
	var pid int
	for _, st := range h.Servers() {
		if st.ID == "holder" {
			pid = st.PID
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err != nil || !strings.Contains(string(b), canary) {
		t.Fatalf("the holder's environment, as the host sees it, lacks the secret: %v", err)
	}
	args, _ := json.Marshal(map[string]any{"needle": canary, "pid": pid})
	report := callText(t, h, "mcp_snoop_snoop", string(args), nil)
	t.Logf("the snooping server's report:\n%s", report)
	if strings.Contains(report, "FOUND") {
		t.Errorf("a server found another's secret in its environment")
	}
	if strings.Contains(report, "scanned /proc: 0 environments") {
		t.Errorf("the snooper read no environment at all, not even its own: the probe proves nothing")
	}
	for _, st := range h.Servers() {
		if st.Isolation != "PID namespace, private /proc" {
			t.Errorf("server %s: Isolation = %q, want a private /proc", st.ID, st.Isolation)
		}
	}
}

// A server's helper that calls setsid leaves the server's process group
// (issue 11 §5); it is stopped with the server all the same. The server
// exits on stdin close, so the stop waits for no grace period.
func TestSetsidGrandchildStopped(t *testing.T) {
	h, logs := start(t, []config.Server{fixture(t, "gc", "-spawn-grandchild", "-spawn-setsid-grandchild")}, nil)
	pids := map[string]int{}
	re := regexp.MustCompile(`\b(grandchild|setsid-grandchild)=(\d+)`)
	waitFor(t, func() bool {
		for _, m := range re.FindAllStringSubmatch(logs.String(), -1) {
			pids[m[1]], _ = strconv.Atoi(m[2])
		}
		return len(pids) == 2
	}, "the grandchildren's pids in the logs")
	for what, pid := range pids {
		pids[what] = serverHostPID(t, h, "gc", pid)
	}
	for what, pid := range pids {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("%s %d not running before Close: %v", what, pid, err)
		}
	}
	start := time.Now()
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d >= 2*time.Second {
		t.Errorf("Close took %v for a server that exits on stdin close (the grace period is 2s)", d)
	}
	for what, pid := range pids {
		wait.Gone(t, pid, what+", after Close")
	}
	t.Logf("%s", regexp.MustCompile(`.*isolation=.*`).FindString(logs.String()))
}

// BenchmarkStart20 shows that 20 stdio servers start in about the time of the
// slowest one, not the sum: each fixture takes 300ms to start, so a
// sequential start would take 6s. ratio = time(20) / time(1).
func BenchmarkStart20(b *testing.B) {
	one := []config.Server{fixture(b, "s0", "-slow-start", "300")}
	var twenty []config.Server
	for i := range 20 {
		twenty = append(twenty, fixture(b, fmt.Sprintf("s%d", i), "-slow-start", "300"))
	}
	measure := func(servers []config.Server) time.Duration {
		start := time.Now()
		h, err := host.Start(context.Background(), servers, nil)
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		h.Close()
		return d
	}
	var d1, d20 time.Duration
	for b.Loop() {
		d1 += measure(one)
		d20 += measure(twenty)
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((d1 / n).Milliseconds()), "ms/start-1")
	b.ReportMetric(float64((d20 / n).Milliseconds()), "ms/start-20")
	b.ReportMetric(float64(d20)/float64(d1), "ratio-20/1")
}

// A server's stderr line longer than the logged bound, with no secret
// registered, crashed the process (issue 11 §0).
func TestLongStderrLine(t *testing.T) {
	h, logs := start(t, []config.Server{fixture(t, "loud", "-stderr-line", "10000")}, nil)
	if got := callText(t, h, "mcp_loud_echo", `{"text":"still here"}`, nil); got != "still here" {
		t.Errorf("echo = %q", got)
	}
	if !strings.Contains(logs.String(), "[cut]") {
		t.Errorf("the long stderr line is not logged as cut:\n%.2000s", logs)
	}
}

// TestRootsByClient: a server's roots/list during several calls (protocol
// 2025-11-25 does not say which call asks) is answered once per
// CallOptions.Client: calls of one client, or of clients that agree, get
// the answer; clients that disagree get the server an error, where the
// host answered with the configured roots (none) before.
func TestRootsByClient(t *testing.T) {
	h, logs := start(t, []config.Server{fixture(t, "fx")}, &host.Options{AdvertiseRoots: true, ProtocolVersion: "2025-11-25"})
	rootsOf := func(uri string) func(context.Context, string) (*mcp.ListRootsResult, error) {
		return func(context.Context, string) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: uri}}}, nil
		}
	}
	for _, tc := range []struct {
		name         string
		busy, asking *host.CallOptions
		want         string // "" for an error
	}{
		{"one client", &host.CallOptions{Client: "c1", Roots: rootsOf("file:///one")}, &host.CallOptions{Client: "c1", Roots: rootsOf("file:///one")}, "file:///one"},
		{"clients that agree", &host.CallOptions{Client: "c1", Roots: rootsOf("file:///same")}, &host.CallOptions{Client: "c2", Roots: rootsOf("file:///same")}, "file:///same"},
		{"clients that differ", &host.CallOptions{Client: "c1", Roots: rootsOf("file:///mine")}, &host.CallOptions{Client: "c2", Roots: rootsOf("file:///theirs")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			busy := make(chan struct{})
			go func() {
				defer close(busy)
				h.CallTool(ctx, "mcp_fx_slow", json.RawMessage(`{"ms":60000}`), tc.busy)
			}()
			defer func() { cancel(); <-busy }()
			wait.For(t, "the busy call to reach the server", func() (string, bool) {
				return logs.String(), h.Servers()[0].InFlight > 0
			})
			res, err := h.CallTool(context.Background(), "mcp_fx_roots", nil, tc.asking)
			switch {
			case tc.want == "" && err == nil:
				t.Errorf("roots = %q, want an error: the clients' roots differ", text(res))
			case tc.want == "" && !strings.Contains(err.Error(), "roots differ"):
				t.Errorf("roots: %v, want an error saying the roots differ", err)
			case tc.want != "" && (err != nil || text(res) != tc.want):
				t.Errorf("roots = %v, %v; want %q", res, err, tc.want)
			}
		})
	}
}
