package host_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// The tests below run the real npx (the machine's npm) against the npm
// registry, with an npm cache of their own: the server's HOME is a fresh
// temporary folder, so npm's cache (~/.npm, with npx's installs in
// ~/.npm/_npx) starts cold, as on a new machine. The package is the
// pinned server-memory, a few megabytes with its dependencies.

// npxPackage is what the tests install with npx.
var npxPackage = "@modelcontextprotocol/server-memory@" + interop.ReferenceServersVersion

// npxServer is a config running npxPackage through npx with home as its
// home folder (and so its npm cache). npx runs on the node installed with
// it, as a user's does: npm reads its global configuration (a cafile, a
// proxy) beside that node.
func npxServer(t *testing.T, id, home string) config.Server {
	t.Helper()
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatalf("these tests run the real npx: %v (install Node.js with npm)", err)
	}
	path := filepath.Dir(npx) + string(os.PathListSeparator) + "/usr/bin:/bin"
	return config.Server{
		ID:        id,
		Transport: config.TransportStdio,
		Command:   npx,
		Args:      []string{"-y", npxPackage},
		Env: map[string]string{
			"HOME":             home,
			"PATH":             path,
			"MEMORY_FILE_PATH": filepath.Join(home, "memory.jsonl"),
		},
		// Far less than a cold install takes: only the install allowance
		// lets the first start succeed.
		ConnectTimeout: 2 * time.Second,
	}
}

// npxEntries returns the folders of npx's cache under home.
func npxEntries(t *testing.T, home string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(home, ".npm", "_npx", "*"))
	return dirs
}

// npxTestLogger is a logger into a buffer, at info level.
func npxTestLogger() (*slog.Logger, *interop.LogBuffer) {
	logs := &interop.LogBuffer{}
	return slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})), logs
}

// startNPX starts a host over s within 5 minutes, watching it from before
// the start, and closes it when the test ends.
func startNPX(t *testing.T, s config.Server) (*host.Host, *states, *interop.LogBuffer, error) {
	t.Helper()
	log, logs := npxTestLogger()
	h, err := host.New([]config.Server{s}, &host.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	watch := &states{w: h.Watch(0)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err = h.Start(ctx)
	t.Cleanup(func() { h.Close() })
	return h, watch, logs, err
}

func TestNPX(t *testing.T) {
	if testing.Short() {
		t.Skip("installs a package from the npm registry")
	}
	if runtime.GOOS != "linux" {
		t.Skip("a child's unread input is told only on Linux")
	}

	// A cold npm cache: the install takes far longer than connect_timeout,
	// and the server comes up, shown installing meanwhile.
	base := t.TempDir()
	homeFor := func(t *testing.T) string {
		home := filepath.Join(base, strings.ReplaceAll(t.Name(), "/", "-"))
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		return home
	}
	var warm string // a HOME whose npm cache holds the package's tarballs
	t.Run("first start", func(t *testing.T) {
		home := homeFor(t)
		h, watch, logs, err := startNPX(t, npxServer(t, "memory", home))
		if err != nil {
			t.Fatalf("Start: %v\nlogs:\n%s", err, logs)
		}
		st := watch.await(t, "memory", host.StateInstalling)
		if want := "npx is installing " + npxPackage; st.Detail != want {
			t.Errorf("installing: Detail = %q, want %q", st.Detail, want)
		}
		watch.await(t, "memory", host.StateReady)
		if _, ok := toolNamed(h, "mcp_memory_read_graph"); !ok {
			t.Errorf("no mcp_memory_read_graph among the tools")
		}
		warm = home
	})

	// Stopped in the middle of the install (npm is extracting packages into
	// its npx cache), npx gets SIGTERM and time to finish or roll back: the
	// cache entry is whole or gone, never half-written, and the next start
	// needs no repair. (Killed two seconds after SIGTERM, as before, npm left
	// node_modules without the package.json that ends an install, and every
	// later start failed at once.)
	t.Run("stopped mid-install", func(t *testing.T) {
		home := homeFor(t)
		s := npxServer(t, "memory", home)
		log, logs := npxTestLogger()
		h, err := host.New([]config.Server{s}, &host.Options{Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		started := make(chan error, 1)
		go func() { started <- h.Start(ctx) }()
		// Nothing announces npm's extraction: watch its folder appear.
		wait.Within(t, 3*time.Minute, "npm to begin to extract", func() (string, bool) {
			if m, _ := filepath.Glob(filepath.Join(home, ".npm", "_npx", "*", "node_modules")); len(m) > 0 {
				return "", true
			}
			select {
			case err := <-started:
				t.Fatalf("Start returned before npm began to extract: %v\n%s", err, logs)
			default:
			}
			return logs.String(), false
		})
		cancel()
		if err := <-started; err == nil {
			t.Fatal("Start succeeded after its context ended")
		}
		if !strings.Contains(logs.String(), "stopping the server while npx installs it") {
			t.Errorf("no warning that the stop waits for the install:\n%s", logs)
		}
		for _, dir := range npxEntries(t, home) {
			_, modErr := os.Stat(filepath.Join(dir, "node_modules"))
			_, pkgErr := os.Stat(filepath.Join(dir, "package.json"))
			if modErr == nil && pkgErr != nil {
				t.Errorf("npx's cache entry %s is half-installed: node_modules without package.json", dir)
			}
		}
		h2, _, logs2, err := startNPX(t, npxServer(t, "memory", home))
		if err != nil {
			t.Fatalf("the start after the interrupted one: %v\nlogs:\n%s", err, logs2)
		}
		if strings.Contains(logs2.String(), "half-installed") {
			t.Errorf("the start after the interrupted one had to repair the cache:\n%s", logs2)
		}
		if st := h2.Servers()[0]; st.State != host.StateReady {
			t.Errorf("after the interrupted start: %s, want ready", st.State)
		}
	})

	// An npx killed mid-install by anything else (Switchboard itself killed,
	// a machine that lost power) leaves the classic broken entry; the next
	// start removes it, says so, and starts.
	t.Run("broken cache repaired", func(t *testing.T) {
		home := homeFor(t)
		if warm != "" {
			// The tarballs from the first start: a faster install, and
			// still a cold npx cache.
			if err := os.CopyFS(filepath.Join(home, ".npm", "_cacache"), os.DirFS(filepath.Join(warm, ".npm", "_cacache"))); err != nil {
				t.Fatal(err)
			}
		}
		s := npxServer(t, "memory", home)
		// The real npx, killed as Switchboard's death would kill it.
		cmd := exec.Command(s.Command, s.Args...)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdin, err := cmd.StdinPipe() // open: npx must not see EOF
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Killed once the package itself is extracted and before npm writes
		// the entry's package.json: the next npx finds the package
		// installed and fails on what is missing.
		deadline := time.Now().Add(3 * time.Minute)
		for {
			if m, _ := filepath.Glob(filepath.Join(home, ".npm", "_npx", "*", "node_modules", "@modelcontextprotocol", "server-memory", "package.json")); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				cmd.Wait()
				t.Fatal("npm did not extract the package within 3 minutes")
			}
			time.Sleep(2 * time.Millisecond) // polling the file system: no event to wait on
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		entries := npxEntries(t, home)
		if len(entries) != 1 {
			t.Fatalf("npx cache entries: %v, want one", entries)
		}
		if _, err := os.Stat(filepath.Join(entries[0], "package.json")); err == nil {
			t.Skip("npm finished writing its install before it was killed; nothing to repair")
		}
		// Started again soon after, as a serve restarted after it was
		// killed is: the killed npx left its entry's concurrency.lock,
		// which the next npx waited for until it was a minute old (70 s
		// measured, issue 24). Removed once untouched for 10 s
		// (npxLockFresh), and said. Aged 9 s, as if the kill were that
		// long ago: the test waits a second for it, not ten.
		lock := filepath.Join(entries[0], "concurrency.lock")
		if _, err := os.Stat(lock); err != nil {
			t.Fatalf("the killed npx left no lock (%v): nothing to take over", err)
		}
		old := time.Now().Add(-9 * time.Second)
		os.Chtimes(lock, old, old)
		began := time.Now()
		h, _, logs, err := startNPX(t, s)
		if err != nil {
			t.Fatalf("Start over a broken npx cache: %v\nlogs:\n%s", err, logs)
		}
		if took := time.Since(began); took > 45*time.Second {
			t.Errorf("the start took %s: npm waited for the killed npx's lock (a minute)\nlogs:\n%s", took.Round(time.Second), logs)
		}
		if !strings.Contains(logs.String(), "removed npm's install lock left by an npx stopped mid-install") || !strings.Contains(logs.String(), lock) {
			t.Errorf("the stale lock's removal is not logged, naming it:\n%s", logs)
		}
		if !strings.Contains(logs.String(), "npx's cache entry was left half-installed") || !strings.Contains(logs.String(), entries[0]) {
			t.Errorf("the repair is not logged, naming the entry:\n%s", logs)
		}
		if st := h.Servers()[0]; st.State != host.StateReady {
			t.Errorf("after the repair: %s, want ready", st.State)
		}
		if testing.Verbose() {
			t.Logf("logs:\n%s", logs)
		}
	})
}

// toolNamed returns the offered tool of that name.
func toolNamed(h *host.Host, name string) (host.Tool, bool) {
	for _, tool := range h.Tools() {
		if tool.Name == name {
			return tool, true
		}
	}
	return host.Tool{}, false
}
