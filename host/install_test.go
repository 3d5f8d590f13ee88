package host_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

func TestPackageRunner(t *testing.T) {
	for _, tc := range []struct {
		command   string
		args      []string
		name, pkg string
		ok        bool
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, "npx", "@modelcontextprotocol/server-memory", true},
		{"/usr/local/bin/npx", []string{"--yes", "--registry", "https://r.example", "mcp-server@1.2.3", "--port", "1"}, "npx", "mcp-server@1.2.3", true},
		{"npx", []string{"-y", "--package=@scope/pkg", "pkg-bin"}, "npx", "@scope/pkg", true},
		{"npx", []string{"-p", "@scope/pkg", "-c", "pkg-bin"}, "npx", "@scope/pkg", true},
		{"npm", []string{"exec", "--", "@scope/server", "--flag"}, "npm exec", "@scope/server", true},
		{"pnpm", []string{"dlx", "server"}, "pnpm dlx", "server", true},
		{"bunx", []string{"server"}, "bunx", "server", true},
		{"uvx", []string{"mcp-server-fetch"}, "uvx", "mcp-server-fetch", true},
		{"uvx", []string{"--python", "3.12", "--from", "git+https://example.com/x", "x-server"}, "uvx", "git+https://example.com/x", true},
		{"uv", []string{"tool", "run", "mcp-server-git"}, "uvx", "mcp-server-git", true},
		{"pipx", []string{"run", "--spec", "pkg==1.0", "srv"}, "pipx run", "pkg==1.0", true},
		{"npx", nil, "npx", "", true},
		{"npm", []string{"install"}, "", "", false},
		{"uv", []string{"run", "server.py"}, "", "", false},
		{"node", []string{"server.js"}, "", "", false},
		{"docker", []string{"run", "-i", "image"}, "", "", false},
	} {
		name, pkg, ok := host.PackageRunnerForTest(tc.command, tc.args)
		if name != tc.name || pkg != tc.pkg || ok != tc.ok {
			t.Errorf("packageRunner(%q, %q) = %q, %q, %v; want %q, %q, %v", tc.command, tc.args, name, pkg, ok, tc.name, tc.pkg, tc.ok)
		}
	}
}

// fakeRunner returns a command named npx, in a folder of its own, that
// runs the fixture with the arguments after npx's own two ("-y PKG"): a
// package runner whose install takes as long as the fixture's -slow-start.
func fakeRunner(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	script := "#!/bin/sh\nshift 2\nexec " + interop.Build(t, fixturePkg) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runnerServer is a server started through the fake npx in dir.
func runnerServer(dir, id string, flags ...string) config.Server {
	return config.Server{
		ID:        id,
		Transport: config.TransportStdio,
		Command:   filepath.Join(dir, "npx"),
		Args:      append([]string{"-y", "@example/server"}, flags...),
	}
}

// A server started through a package runner that takes longer than
// connect_timeout to install is shown installing, says which package, and
// is not failed: connect_timeout counts from when the server reads. A
// server that is no runner gets connect_timeout from the start.
func TestInstallAllowance(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a child's unread input is told only on Linux")
	}
	dir := fakeRunner(t)
	inst := runnerServer(dir, "inst", "-slow-start", "2500")
	inst.ConnectTimeout = time.Second
	watch := newStates()
	h, logs := start(t, []config.Server{inst}, nil, watch)
	st := watch.await(t, "inst", host.StateInstalling)
	if st.Detail != "npx is installing @example/server" {
		t.Errorf("Detail = %q, want %q", st.Detail, "npx is installing @example/server")
	}
	if ev := st.Event(); ev.Detail != st.Detail || ev.State != "installing" {
		t.Errorf("state event = %+v, want installing with the detail", ev)
	}
	if got := h.Servers()[0]; got.State != host.StateReady || got.Detail != "" {
		t.Errorf("after Start: %s %q, want ready and no detail", got.State, got.Detail)
	}
	for _, want := range []string{`level=WARN msg="server still installing; waiting for it" server=inst detail="npx is installing @example/server"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}

	slow := fixture(t, "slow", "-slow-start", "2500")
	slow.ConnectTimeout = time.Second
	_, err := host.Start(context.Background(), []config.Server{slow}, nil)
	if err == nil || !strings.Contains(err.Error(), "no answer within 1s (connect_timeout)") {
		t.Errorf("a slow server that is no package runner: Start = %v, want connect_timeout", err)
	}
}

// install_timeout bounds the install: a runner that never hands over fails,
// saying so.
func TestInstallTimeout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a child's unread input is told only on Linux")
	}
	dir := fakeRunner(t)
	s := runnerServer(dir, "inst", "-slow-start", "600000")
	s.ConnectTimeout, s.InstallTimeout = time.Second, 2*time.Second
	h, err := host.New([]config.Server{s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	err = h.Start(context.Background())
	want := `starting MCP servers: server "inst": npx is installing @example/server: still installing after 2s (install_timeout)`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Start = %v, want %q", err, want)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("Start took %v", d)
	}
}

// A start stopped while the runner installs gives it SIGTERM and the time
// to finish or undo the install, rather than SIGKILL after two seconds
// (which left npm's cache broken).
func TestInstallStopGrace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a child's unread input is told only on Linux")
	}
	dir := fakeRunner(t)
	s := runnerServer(dir, "inst", "-slow-start", "600000", "-term-delay", "5000")
	logs := &interop.LogBuffer{}
	h, err := host.New([]config.Server{s}, &host.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	watch := &states{w: h.Watch(0)}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan error, 1)
	go func() { started <- h.Start(ctx) }()
	watch.await(t, "inst", host.StateInstalling)
	cancel()
	if err := <-started; err == nil {
		t.Fatal("Start succeeded after its context ended")
	}
	for _, want := range []string{
		`msg="stopping the server while npx installs it: it gets up to 1m0s to finish or undo the install`,
		"testserver: SIGTERM: finishing", "testserver: SIGTERM: finished",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}

// A program that is not installed fails the server at once, saying what to
// install and without quoting PATH; an optional one is not retried with
// backoff (its error would repeat every time), only rarely and quietly:
// one warning in half an hour. A call asks again.
func TestMissingProgram(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		empty := t.TempDir()
		logs := &interop.LogBuffer{}
		servers := []config.Server{
			{ID: "nonode", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
				Env: map[string]string{"PATH": empty + ":/switchboard-test/no/such/bin"}, Optional: true},
			{ID: "nothing", Command: "switchboard-no-such-program", Optional: true},
		}
		h, err := host.Start(context.Background(), servers, &host.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		want := map[string]string{
			"nonode":  `"npx" not found in PATH (2 folders searched): install Node.js (https://nodejs.org), which provides node, npm and npx`,
			"nothing": `"switchboard-no-such-program" not found in PATH`,
		}
		for _, st := range h.Servers() {
			if st.State != host.StateFailed || st.Err == nil || !strings.HasPrefix(st.Err.Error(), want[st.ID]) {
				t.Errorf("%s: %s %v, want failed: %s", st.ID, st.State, st.Err, want[st.ID])
			}
			if st.Err != nil && strings.Contains(st.Err.Error(), "/switchboard-test/no/such/bin") {
				t.Errorf("%s: the error quotes PATH: %v", st.ID, st.Err)
			}
		}
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		warned := strings.Count(logs.String(), `level=WARN msg="server failed to start" server=nonode`)
		tried := strings.Count(logs.String(), `msg="server failed to start" server=nonode`)
		if warned != 1 || tried > 1+30/5 {
			t.Errorf("in 30 minutes: %d tries, %d warnings; want at most 7 tries, one warning:\n%s", tried, warned, logs)
		}
		if err := h.Restart("nonode"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if again := strings.Count(logs.String(), `msg="server failed to start" server=nonode`); again != tried+1 {
			t.Errorf("Restart: %d tries, want %d", again, tried+1)
		}
	})
}

// A script whose interpreter is not installed exits 127 with env's
// message: that is a missing program too, and the error says which.
func TestMissingInterpreter(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env switchboard-no-such-interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := host.Start(context.Background(), []config.Server{{ID: "s", Command: script}}, nil)
	var se *host.StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start = %v, want a *StartError", err)
	}
	want := `starting MCP servers: server "s": the server exited before answering (exit status 127): "switchboard-no-such-interpreter" is not installed: install it, or write its full path in command`
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Start = %q, want it to begin %q", err, want)
	}
}

// A failed start is printed once, its lines readable: Start's error (not
// also a warning), the child's last stderr lines each on a line of their
// own under it, the environment it printed left out; the log line is one
// line.
func TestStartErrorText(t *testing.T) {
	logs := &interop.LogBuffer{}
	crash := config.Server{ID: "crash", Command: "sh", Args: []string{"-c", "env >&2; echo 'line one' >&2; echo 'line two' >&2; exit 3"},
		Env: map[string]string{"MY_SETTING": "some-setting-value"}}
	_, err := host.Start(context.Background(), []config.Server{crash, fixture(t, "ok")}, &host.Options{
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	want := "starting MCP servers: server \"crash\": the server exited before answering (exit status 3)\n" +
		"  stderr: line one\n  stderr: line two"
	if err == nil || err.Error() != want {
		t.Errorf("Start = %q\nwant %q", err, want)
	}
	if strings.Contains(logs.String(), `level=WARN msg="server failed to start"`) {
		t.Errorf("the failure is also a warning:\n%s", logs)
	}
	debug := &interop.LogBuffer{}
	host.Start(context.Background(), []config.Server{crash}, &host.Options{
		Logger: slog.New(slog.NewTextHandler(debug, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	line := regexp.MustCompile(`(?m)^.*msg="server failed to start".*$`).FindString(debug.String())
	if !strings.Contains(line, `err="the server exited before answering (exit status 3) | stderr: line one | stderr: line two"`) {
		t.Errorf("log line = %q, want the error on one line", line)
	}
	if strings.Contains(err.Error(), "MY_SETTING") || strings.Contains(err.Error(), "PATH=") {
		t.Errorf("the error quotes the environment the child printed: %q", err)
	}
}
