package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/transport"
)

// child returns a Command running the test binary in the given mode.
func child(t *testing.T, mode string) *transport.Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &transport.Command{
		Path: exe,
		// GORACE: a race-enabled binary otherwise sleeps 1s at exit.
		Env: transport.MinimalEnv(map[string]string{childEnv: mode, "GORACE": "atexit_sleep_ms=0"}),
	}
}

// readReady reads the child's "ready" notification and decodes its params.
func readReady(t *testing.T, conn mcp.Connection, params any) {
	t.Helper()
	msg, err := conn.Read(t.Context())
	if err != nil {
		t.Fatalf("reading ready: %v", err)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "ready" {
		t.Fatalf("first message = %#v, want notification ready", msg)
	}
	if params != nil {
		if err := json.Unmarshal(req.Params, params); err != nil {
			t.Fatal(err)
		}
	}
}

func connectClient(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%q): %v", tool, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("CallTool(%q) = %+v", tool, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestCommandClientServer(t *testing.T) {
	checkLeaks(t)
	const sentinel = "SWITCHBOARD_TEST_SECRET"
	t.Setenv(sentinel, "do-not-leak")

	cmd := child(t, "server")
	cmd.Env = transport.MinimalEnv(map[string]string{childEnv: "server", "GORACE": "atexit_sleep_ms=0", "EXTRA": "given"})
	cs := connectClient(t, cmd)

	if got, want := callText(t, cs, "greet", map[string]any{"name": "user"}), "Hi user"; got != want {
		t.Errorf("greet = %q, want %q", got, want)
	}
	env := strings.Split(callText(t, cs, "env", map[string]any{}), "\n")
	// Exactly what was given, nothing from the host added.
	if diff := cmp.Diff(cmd.Env, env); diff != "" {
		t.Errorf("child environment differs from Env (-want +got):\n%s", diff)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, sentinel+"=") {
			t.Errorf("child sees host variable %s", kv)
		}
	}

	if err := cs.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case <-cmd.Exited():
	default:
		t.Fatal("Exited not closed after Close")
	}
	if err := cmd.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want nil", err)
	}
	// Exit status 0, not a signal: the server exited on stdin close, no
	// escalation was needed.
	if st := cmd.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Errorf("ProcessState = %v, want exit 0", st)
	}
	wait.Gone(t, cmd.Pid(), "child")
}

func TestCommandContextIsNotLifetime(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "server")
	ctx, cancel := context.WithCancel(t.Context())
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(ctx, cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel()
	if got := callText(t, cs, "greet", map[string]any{"name": "again"}); got != "Hi again" {
		t.Errorf("greet after the connect ctx ended = %q", got)
	}
	select {
	case <-cmd.Exited():
		t.Fatal("child exited when the connect context ended")
	default:
	}
}

func TestCommandDoneContextDoesNotStart(t *testing.T) {
	cmd := child(t, "server")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := cmd.Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect(done ctx) = %v, want context.Canceled", err)
	}
	if pid := cmd.Pid(); pid != 0 {
		t.Errorf("Pid = %d after refused start", pid)
	}
}

func TestCommandStartErrors(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cmd  *transport.Command
	}{
		{"missing binary", &transport.Command{Path: "switchboard-no-such-binary", Env: transport.MinimalEnv(nil)}},
		{"missing path", &transport.Command{Path: "/no/such/switchboard-binary"}},
		{"bad dir", &transport.Command{Path: exe, Dir: "/no/such/dir"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			_, err := tc.cmd.Connect(t.Context())
			if err == nil {
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.cmd.Path) {
				t.Errorf("Connect error %q does not name the command %q", err, tc.cmd.Path)
			}
			if err := tc.cmd.Close(); err != nil {
				t.Errorf("Close after failed start: %v", err)
			}
		})
	}
}

// isolations are the ways a child may be contained, for tests that run in
// each: the PID namespace where the kernel gives one, and the process group
// every unix has (NoPIDNamespace).
var isolations = []struct {
	name  string
	noNS  bool
	want  transport.Isolation
	label string
}{
	{"namespace", false, transport.IsolationPIDNamespace, "PID namespace"},
	{"group", true, transport.IsolationProcessGroup, "process group"},
}

// requireIsolation fails t unless cmd got want (a PID namespace with a
// /proc of its own or without, for IsolationPIDNamespace); a PID namespace
// the kernel refused skips it instead, saying why.
func requireIsolation(t *testing.T, cmd *transport.Command, want transport.Isolation) {
	t.Helper()
	got, refused := cmd.Isolation()
	if got == want || want == transport.IsolationPIDNamespace && got == transport.IsolationPrivateProc {
		return
	}
	if want >= transport.IsolationPIDNamespace && refused != nil {
		t.Skipf("no PID namespace on this machine: %v", refused)
	}
	t.Fatalf("Isolation() = %v, %v; want %v", got, refused, want)
}

func TestCommandKillsGrandchild(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			checkLeaks(t)
			cmd := child(t, "group")
			cmd.NoPIDNamespace = iso.noNS
			cmd.TerminateGrace = 100 * time.Millisecond
			conn, err := cmd.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			requireIsolation(t, cmd, iso.want)
			var pids struct{ Pid, Grandchild int }
			readReady(t, conn, &pids)
			pids.Pid, pids.Grandchild = hostPID(t, cmd, pids.Pid), hostPID(t, cmd, pids.Grandchild)
			if pids.Pid != cmd.Pid() {
				t.Errorf("child is pid %d, Pid() = %d", pids.Pid, cmd.Pid())
			}
			if err := conn.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			wait.Gone(t, pids.Pid, "child")
			wait.Gone(t, pids.Grandchild, "grandchild")
		})
	}
}

// A grandchild that calls setsid leaves the child's process group (issue
// 11 §5): stopping the child must stop it too, in a PID namespace (the
// kernel kills it with the namespace's init) and without one (it was found
// among the child's descendants when the stop began). The child exits on
// stdin close, so the stop takes no grace period.
func TestCommandKillsSetsidGrandchild(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			checkLeaks(t)
			cmd := child(t, "setsid")
			cmd.NoPIDNamespace = iso.noNS
			cmd.TerminateGrace = time.Minute // the normal path waits for none
			conn, err := cmd.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			requireIsolation(t, cmd, iso.want)
			var pids struct{ Pid, Grandchild, Setsid int }
			readReady(t, conn, &pids)
			pids.Pid, pids.Grandchild, pids.Setsid = hostPID(t, cmd, pids.Pid), hostPID(t, cmd, pids.Grandchild), hostPID(t, cmd, pids.Setsid)
			for _, pid := range []int{pids.Grandchild, pids.Setsid} {
				if gone(pid) {
					t.Fatalf("grandchild %d not running before Close", pid)
				}
			}
			start := time.Now()
			if err := conn.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Close took %v for a child that exits on stdin close", d)
			}
			if err := cmd.ExitErr(); err != nil {
				t.Errorf("ExitErr = %v, want nil (exited on stdin close)", err)
			}
			wait.Gone(t, pids.Pid, "child")
			wait.Gone(t, pids.Grandchild, "grandchild in the child's group")
			wait.Gone(t, pids.Setsid, "grandchild in a session of its own")
		})
	}
}

func TestCommandKillsGrandchildOfExitedChild(t *testing.T) {
	for _, tc := range []struct {
		mode string
		noNS bool
		want transport.Isolation
	}{
		{"orphan", false, transport.IsolationPIDNamespace},
		{"orphan", true, transport.IsolationProcessGroup},
		// Only a PID namespace can find a grandchild that left the group
		// of a child that is gone.
		{"setsid-orphan", false, transport.IsolationPIDNamespace},
	} {
		t.Run(tc.mode+"/"+tc.want.String(), func(t *testing.T) {
			checkLeaks(t)
			cmd := child(t, tc.mode)
			cmd.NoPIDNamespace = tc.noNS
			conn, err := cmd.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			requireIsolation(t, cmd, tc.want)
			var pids struct{ Pid, Grandchild int }
			readReady(t, conn, &pids)
			pids.Grandchild = hostPID(t, cmd, pids.Grandchild)
			// Its sign to exit.
			if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "exit"}); err != nil {
				t.Fatal(err)
			}
			<-cmd.Exited() // by itself, without Close
			if err := cmd.ExitErr(); err != nil {
				t.Errorf("ExitErr = %v, want nil", err)
			}
			wait.Gone(t, pids.Grandchild, "grandchild")
			// The connection sees the end of stdout.
			if _, err := conn.Read(t.Context()); err == nil {
				t.Error("Read after the child exited succeeded")
			}
		})
	}
}

func TestCommandEscalation(t *testing.T) {
	for _, tc := range []struct {
		name string
		noNS bool
		mode string // of the test binary; "" runs sleep(1)
		want string // how the child died
		min  int    // grace periods Close must have waited at least
		max  int    // and at most (0: no bound)
		iso  transport.Isolation
	}{
		{"group/ignore-stdin", true, "ignore-stdin", "signal: terminated", 1, 0, transport.IsolationProcessGroup},
		{"group/ignore-term", true, "ignore-term", "signal: killed", 2, 0, transport.IsolationProcessGroup},
		// As its PID namespace's init the child receives only the signals
		// it handles. The Go runtime handles SIGTERM, and exits 2 when
		// re-raising it does not kill it.
		{"namespace/ignore-stdin", false, "ignore-stdin", "exit status 2", 1, 2, transport.IsolationPIDNamespace},
		{"namespace/ignore-term", false, "ignore-term", "signal: killed", 2, 0, transport.IsolationPIDNamespace},
		// sleep has no handler: SIGTERM would be dropped, so it gets
		// SIGKILL at the SIGTERM step, and Close does not wait a second
		// grace period.
		{"namespace/no-handler", false, "", "signal: killed", 1, 2, transport.IsolationPIDNamespace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			const grace = 500 * time.Millisecond
			cmd := child(t, tc.mode)
			if tc.mode == "" {
				cmd = &transport.Command{Path: "sleep", Args: []string{"1000"}, Env: transport.MinimalEnv(nil)}
			}
			cmd.NoPIDNamespace = tc.noNS
			cmd.TerminateGrace = grace
			conn, err := cmd.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			requireIsolation(t, cmd, tc.iso)
			if tc.mode != "" {
				readReady(t, conn, nil)
			} // sleep has run since Connect returned: exec had succeeded
			start := time.Now()
			if err := conn.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			d := time.Since(start)
			var ee *exec.ExitError
			if err := cmd.ExitErr(); !errors.As(err, &ee) {
				t.Fatalf("ExitErr = %v, want *exec.ExitError", err)
			}
			if got := ee.Error(); got != tc.want {
				t.Errorf("child died of %q, want %q", got, tc.want)
			}
			if min := time.Duration(tc.min) * grace; d < min {
				t.Errorf("Close took %v, want >= %v", d, min)
			}
			if max := time.Duration(tc.max) * grace; tc.max > 0 && d >= max {
				t.Errorf("Close took %v, want < %v", d, max)
			}
			wait.Gone(t, cmd.Pid(), "child")
		})
	}
}

func TestCommandHugeLine(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "huge-line")
	cmd.MaxMessageBytes = 1 << 20
	cmd.TerminateGrace = 100 * time.Millisecond
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, cmd, nil)
	if err == nil {
		cs.Close()
		t.Fatal("Connect succeeded with a child writing an endless line")
	}
	if ctx.Err() != nil {
		t.Fatalf("Connect hung until the deadline: %v", err)
	}
	t.Logf("Connect error: %v", err)
	cmd.Close()
	<-cmd.Exited()
	wait.Gone(t, cmd.Pid(), "child")

	// Read directly, the connection says why.
	cmd = child(t, "huge-line")
	cmd.MaxMessageBytes = 1 << 20
	cmd.TerminateGrace = 100 * time.Millisecond
	conn, err := cmd.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Close()
	if _, err := conn.Read(ctx); !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Errorf("Read = %v, want ErrMessageTooLarge", err)
	}
}

// A line on stdout that is not a message (a banner, a stray print) is
// skipped and reported, before the first message and between messages; it
// stopped the server from starting (issue 11 §3).
func TestCommandSkipsNonMessages(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "banner")
	var mu sync.Mutex
	var skipped []string
	cmd.SkippedLine = func(line []byte) {
		mu.Lock()
		skipped = append(skipped, string(line))
		mu.Unlock()
	}
	cs := connectClient(t, cmd)
	if got := callText(t, cs, "greet", map[string]any{"name": "banner"}); got != "Hi banner" {
		t.Errorf("greet = %q", got)
	}
	if got := callText(t, cs, "chatty", nil); got != "said so" {
		t.Errorf("chatty = %q", got)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(append(slices.Clone(bannerLines), chattyLine), skipped); diff != "" {
		t.Errorf("skipped lines (-want +got):\n%s", diff)
	}
}

// A line shaped like a message that is not valid JSON is the server's
// corrupted message, not stray output: the connection fails, at once.
func TestCommandCorruptMessage(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "corrupt")
	conn, err := cmd.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	msg, err := conn.Read(ctx)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Read = %v, %v; want a decoding error", msg, err)
	}
	t.Logf("Read error: %v", err)
}

func TestCommandStderrFlood(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "stderr-flood")
	tail := transport.NewTailBuffer(100)
	cmd.Stderr = tail
	cs := connectClient(t, cmd) // would block forever if stderr were not drained
	if got := callText(t, cs, "greet", map[string]any{"name": "flood"}); got != "Hi flood" {
		t.Errorf("greet = %q", got)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if got := tail.String(); !strings.HasSuffix(got, "END OF STDERR\n") || len(got) != 100 {
		t.Errorf("stderr tail = %q (len %d), want 100 bytes ending in END OF STDERR", got, len(got))
	}
}

func TestCommandCloseConcurrent(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "server")
	cs := connectClient(t, cmd)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			var err error
			switch i % 2 {
			case 0:
				err = cs.Close()
			case 1:
				err = cmd.Close()
			}
			if err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	wg.Wait()
	select {
	case <-cmd.Exited():
	default:
		t.Error("child not reaped after Close returned")
	}
	if err := cmd.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestTailBuffer(t *testing.T) {
	for _, tc := range []struct {
		n      int
		writes []string
		want   string
	}{
		{5, nil, ""},
		{5, []string{"abc"}, "abc"},
		{5, []string{"abc", "de"}, "abcde"},
		{5, []string{"abc", "def"}, "bcdef"},
		{5, []string{"abcdefgh"}, "defgh"},
		{5, []string{"ab", "cdefghij", "k"}, "ghijk"},
		{0, []string{"abc"}, ""},
	} {
		b := transport.NewTailBuffer(tc.n)
		for _, w := range tc.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Errorf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if got := b.String(); got != tc.want {
			t.Errorf("NewTailBuffer(%d) after %q: String() = %q, want %q", tc.n, tc.writes, got, tc.want)
		}
	}
}

func TestMinimalEnv(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("LC_TIME", "C")
	t.Setenv("SWITCHBOARD_TEST_SECRET", "x")
	t.Setenv("OPENAI_API_KEY", "sk-x")
	env := transport.MinimalEnv(map[string]string{"PATH": "/opt/bin", "TOKEN": "t"})
	seen := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		seen[k] = v
	}
	for k, want := range map[string]string{"PATH": "/opt/bin", "TOKEN": "t", "LC_TIME": "C"} {
		if seen[k] != want {
			t.Errorf("MinimalEnv: %s = %q, want %q", k, seen[k], want)
		}
	}
	for _, k := range []string{"SWITCHBOARD_TEST_SECRET", "OPENAI_API_KEY"} {
		if _, ok := seen[k]; ok {
			t.Errorf("MinimalEnv passes host variable %s", k)
		}
	}
	if !sortedStrings(env) {
		t.Errorf("MinimalEnv not sorted: %q", env)
	}
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}

func TestCommandCloseUnblocksWrite(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "ignore-stdin") // never reads stdin: the pipe fills up
	cmd.TerminateGrace = 100 * time.Millisecond
	conn, err := cmd.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	readReady(t, conn, nil)
	errc := make(chan error, 1)
	go func() {
		msg := &jsonrpc.Request{Method: "notifications/filler", Params: json.RawMessage(`"` + strings.Repeat("x", 4096) + `"`)}
		for {
			if err := conn.Write(context.Background(), msg); err != nil {
				errc <- err
				return
			}
		}
	}()
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("Write after Close succeeded")
	}
}

// A program that does not exist is a NotFoundError that says so without
// quoting the PATH searched (long, and of no use to the reader).
func TestCommandNotFound(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	pathDirs := []string{"/usr/local/sbin-switchboard-test", "/opt/switchboard-test/bin", dir}
	for _, tc := range []struct {
		name, path, dir, want string
	}{
		{"in PATH", "switchboard-no-such-binary", "", `"switchboard-no-such-binary" not found in PATH (3 folders searched)`},
		{"absolute", "/no/such/switchboard-binary", "", `/no/such/switchboard-binary: no such file`},
		{"relative to dir", "./bin/server", dir, `./bin/server: no such file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := &transport.Command{Path: tc.path, Dir: tc.dir, Env: []string{"PATH=" + strings.Join(pathDirs, ":")}}
			_, err := cmd.Connect(t.Context())
			var nf *transport.NotFoundError
			if !errors.As(err, &nf) || !errors.Is(err, exec.ErrNotFound) || !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Connect = %v (%T), want a *NotFoundError matching exec.ErrNotFound and os.ErrNotExist", err, err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
			for _, d := range pathDirs[:2] {
				if strings.Contains(err.Error(), d) {
					t.Errorf("error %q quotes the PATH (%s)", err, d)
				}
			}
		})
	}
}

// AwaitingReader tells a child that has not read what was written to it
// (a package runner still installing the server) from one that has.
func TestCommandAwaitingReader(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			checkLeaks(t)
			cmd := child(t, "late-reader")
			cmd.NoPIDNamespace = iso.noNS
			if _, known := cmd.AwaitingReader(); known != (runtime.GOOS == "linux") {
				t.Fatalf("AwaitingReader known = %v on %s", known, runtime.GOOS)
			}
			conn, err := cmd.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			requireIsolation(t, cmd, iso.want)
			readReady(t, conn, nil)
			if awaiting, _ := cmd.AwaitingReader(); awaiting {
				t.Errorf("AwaitingReader = true before anything was written")
			}
			if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "notifications/one"}); err != nil {
				t.Fatal(err)
			}
			if awaiting, known := cmd.AwaitingReader(); !awaiting || !known {
				t.Fatalf("AwaitingReader = %v, %v with a message unread; want true, true", awaiting, known)
			}
			// Let it read; nothing tells us when it has but the pipe.
			syscall.Kill(cmd.Pid(), syscall.SIGUSR1)
			wait.For(t, "AwaitingReader to be false once the child began to read", func() (bool, bool) {
				awaiting, _ := cmd.AwaitingReader()
				return awaiting, !awaiting
			})
			// It stays false: more unread input is not a child that has
			// not started.
			if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "notifications/two"}); err != nil {
				t.Fatal(err)
			}
			if awaiting, _ := cmd.AwaitingReader(); awaiting {
				t.Errorf("AwaitingReader = true again after the child had read")
			}
		})
	}
}

// A child that has not read its input (a package runner installing the
// server) gets SIGTERM at once and InstallGrace to finish or undo its
// work; without InstallGrace it is killed after the usual two graces,
// mid-rollback. One that has read its input is stopped the usual way,
// stdin first, even with InstallGrace.
func TestCommandInstallGrace(t *testing.T) {
	const grace = 200 * time.Millisecond
	for _, iso := range isolations {
		for _, tc := range []struct {
			name         string
			mode         string
			installGrace time.Duration
			write        bool   // write a message the child does not read
			want         string // how it died; "" for exit status 0
			stderr       string // what it said, if anything
		}{
			{"installing", "installer", 10 * time.Second, true, "", "installer: rolled back"},
			{"installing without InstallGrace", "installer", 0, true, "signal: killed", ""},
			{"nothing written", "installer", 10 * time.Second, false, "signal: killed", ""},
			// A grace long enough for a loaded machine: the child exits
			// on EOF, and SIGTERM would make it exit 2.
			{"serving", "server", 10 * time.Second, false, "", ""},
		} {
			t.Run(iso.name+"/"+tc.name, func(t *testing.T) {
				checkLeaks(t)
				var stderr interop.LogBuffer
				cmd := child(t, tc.mode)
				cmd.NoPIDNamespace = iso.noNS
				cmd.TerminateGrace = grace
				if tc.mode == "server" {
					cmd.TerminateGrace = 10 * time.Second
				}
				cmd.InstallGrace = tc.installGrace
				cmd.Stderr = &stderr
				if tc.mode == "server" {
					cs := connectClient(t, cmd)
					requireIsolation(t, cmd, iso.want)
					if err := cs.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				} else {
					conn, err := cmd.Connect(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close()
					requireIsolation(t, cmd, iso.want)
					readReady(t, conn, nil)
					if tc.write {
						if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
							t.Fatal(err)
						}
					}
					if err := conn.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				}
				got := ""
				if err := cmd.ExitErr(); err != nil {
					got = err.Error()
				}
				if got != tc.want {
					t.Errorf("child died of %q, want %q (stderr: %q)", got, tc.want, stderr.String())
				}
				if tc.stderr != "" && !strings.Contains(stderr.String(), tc.stderr) {
					t.Errorf("stderr = %q, want it to hold %q", stderr.String(), tc.stderr)
				}
				wait.Gone(t, cmd.Pid(), "child")
			})
		}
	}
}

// The variables every child gets are those secret.PublicEnv names, whose
// {{env.NAME}} values are not redacted: they hold no credential, and the
// child has them anyway. Any other variable read through {{env.NAME}} is
// redacted, so the two lists must agree.
func TestMinimalEnvIsPublic(t *testing.T) {
	candidates := []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TERM", "LANG", "LANGUAGE", "TZ",
		"LC_ALL", "LC_CTYPE", "PWD", "EDITOR", "SSH_AUTH_SOCK", "DISPLAY", "XDG_RUNTIME_DIR", "GITHUB_TOKEN", "OPENAI_API_KEY"}
	for _, k := range candidates {
		t.Setenv(k, "value-of-"+k)
	}
	got := map[string]bool{}
	for _, kv := range transport.MinimalEnv(nil) {
		k, _, _ := strings.Cut(kv, "=")
		got[k] = true
	}
	for _, k := range candidates {
		if got[k] != secret.PublicEnv(k) {
			t.Errorf("%s: passed to every child %v, secret.PublicEnv %v", k, got[k], secret.PublicEnv(k))
		}
	}
}
