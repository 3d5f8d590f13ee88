package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardmcp/switchboard/internal/flock"
)

// npmTimeout bounds one npm install, so that a registry connection that
// hangs fails the tests with a message instead of eating CI's whole budget.
const npmTimeout = 15 * time.Minute

// stampFile marks a finished install; it holds the package specs installed.
const stampFile = ".installed"

// Logf receives progress messages; testing.TB.Logf and log.Printf fit.
type Logf func(format string, args ...any)

// InstallAll installs every pinned peer into [CacheDir] (Node, the reference
// servers with inspector-cli, the TypeScript SDK, every conformance version,
// the Go servers of [GoPeers]), reporting progress to logf. It is what `go run ./internal/testkit/interop/cmd/install` runs, and
// needs no testing.TB.
func InstallAll(logf Logf) error {
	node, err := nodePath(logf)
	if err != nil {
		return err
	}
	version, _ := nodeVersion(node)
	logf("node %s: %s", version, node)
	dir, err := referenceDir(logf)
	if err != nil {
		return err
	}
	logf("reference servers and inspector-cli: %s", filepath.Join(dir, "node_modules"))
	sdk, err := tsSDKDir(logf)
	if err != nil {
		return err
	}
	logf("TypeScript SDK %s: %s", TSSDKVersion, filepath.Join(sdk, "node_modules"))
	tok, err := jsTiktokenDir(logf)
	if err != nil {
		return err
	}
	logf("js-tiktoken %s: %s", JSTiktokenVersion, filepath.Join(tok, "node_modules"))
	for _, v := range ConformanceVersions {
		dir, err := conformanceDir(v, logf)
		if err != nil {
			return err
		}
		logf("conformance %s: %s", v, filepath.Join(dir, "node_modules"))
	}
	for _, p := range GoPeers {
		bin, err := goInstall(p, logf)
		if err != nil {
			return err
		}
		logf("%s: %s", p, bin)
	}
	return nil
}

// memo runs each keyed computation once per process. Unlike sync.Once it is
// never left half-done by a t.Fatal: results are computed, then reported.
type memo struct {
	mu sync.Mutex
	m  map[string]*memoEntry
}

type memoEntry struct {
	once sync.Once
	val  string
	err  error
}

func (m *memo) do(key string, f func() (string, error)) (string, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = make(map[string]*memoEntry)
	}
	e, ok := m.m[key]
	if !ok {
		e = new(memoEntry)
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.val, e.err = f() })
	return e.val, e.err
}

var installs memo

// nodePackage names the npm package that ships a Node binary for this
// platform (the packages the official `node` npm package installs from).
func nodePackage() (string, error) {
	osName := map[string]string{"linux": "linux", "darwin": "darwin"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		return "", fmt.Errorf("no node-<os>-<arch> npm package is known for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return "node-" + osName + "-" + arch, nil
}

func nodePath(logf Logf) (string, error) {
	return installs.do("node", func() (string, error) {
		node, instErr := installNode(logf)
		if instErr == nil {
			if _, err := nodeVersion(node); err != nil {
				return "", err
			}
			return node, nil
		}
		// npm has no Node 22 package for some platforms (darwin stops at 18):
		// a new enough node on PATH will do there.
		if sys, err := exec.LookPath("node"); err == nil {
			if v, err := nodeVersion(sys); err == nil {
				logf("using %s (%s): %v", sys, v, instErr)
				return sys, nil
			}
		}
		return "", fmt.Errorf("need Node.js >= 22 for the MCP test peers: %w; install Node >= 22 on PATH or fix the npm install", instErr)
	})
}

func installNode(logf Logf) (string, error) {
	pkg, err := nodePackage()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(CacheDir(), "node", pkg+"-"+NodeVersion)
	node := filepath.Join(dir, "node_modules", pkg, "bin", "node")
	if err := npmInstall(logf, dir, []string{pkg + "@" + NodeVersion}, node, nil); err != nil {
		return "", err
	}
	return node, nil
}

var nodeVersions memo

// nodeVersion runs node once to check that it works and is at least 22 (the
// conformance suite fails at load on Node 20).
func nodeVersion(node string) (string, error) {
	return nodeVersions.do(node, func() (string, error) {
		out, err := exec.Command(node, "--version").Output()
		if err != nil {
			return "", fmt.Errorf("running %s --version: %w", node, err)
		}
		v := strings.TrimSpace(string(out))
		major, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
		if n, err := strconv.Atoi(major); err != nil || n < 22 {
			return "", fmt.Errorf("%s is Node %s; need >= 22", node, v)
		}
		return v, nil
	})
}

func referenceDir(logf Logf) (string, error) {
	return installs.do("reference", func() (string, error) {
		dir := filepath.Join(CacheDir(), "reference-"+ReferenceServersVersion+"-inspector-cli-"+InspectorCLIVersion)
		specs := []string{
			"@modelcontextprotocol/server-everything@" + ReferenceServersVersion,
			"@modelcontextprotocol/server-filesystem@" + ReferenceServersVersion,
			"@modelcontextprotocol/server-memory@" + ReferenceServersVersion,
			"@modelcontextprotocol/inspector-cli@" + InspectorCLIVersion,
		}
		scope := filepath.Join(dir, "node_modules", "@modelcontextprotocol")
		check := filepath.Join(scope, "server-everything", "dist", "index.js")
		// inspector-cli 1.0.3 tests fs.existsSync("../package.json") against
		// the working directory but import()s it relative to its own module,
		// falling back to node_modules/@modelcontextprotocol/package.json:
		// provide that file so that it runs from any directory.
		fixup := func(tmp string) error {
			s := filepath.Join(tmp, "node_modules", "@modelcontextprotocol")
			data, err := os.ReadFile(filepath.Join(s, "inspector-cli", "package.json"))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(s, "package.json"), data, 0o644)
		}
		if err := npmInstall(logf, dir, specs, check, fixup); err != nil {
			return "", err
		}
		return dir, nil
	})
}

func conformanceDir(version string, logf Logf) (string, error) {
	return installs.do("conformance@"+version, func() (string, error) {
		dir := filepath.Join(CacheDir(), "conformance-"+version)
		check := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
		if err := npmInstall(logf, dir, []string{"@modelcontextprotocol/conformance@" + version}, check, nil); err != nil {
			return "", err
		}
		return dir, nil
	})
}

func tsSDKDir(logf Logf) (string, error) {
	return installs.do("tssdk", func() (string, error) {
		dir := filepath.Join(CacheDir(), "tssdk-"+TSSDKVersion)
		check := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client", "websocket.js")
		if err := npmInstall(logf, dir, []string{"@modelcontextprotocol/sdk@" + TSSDKVersion}, check, nil); err != nil {
			return "", err
		}
		return dir, nil
	})
}

func jsTiktokenDir(logf Logf) (string, error) {
	return installs.do("js-tiktoken", func() (string, error) {
		dir := filepath.Join(CacheDir(), "js-tiktoken-"+JSTiktokenVersion)
		check := filepath.Join(dir, "node_modules", "js-tiktoken", "package.json")
		if err := npmInstall(logf, dir, []string{"js-tiktoken@" + JSTiktokenVersion}, check, nil); err != nil {
			return "", err
		}
		return dir, nil
	})
}

// npmInstall makes dir/node_modules hold exactly specs, unless a stamp says
// it already does and the file check exists. The install happens in a
// temporary sibling folder renamed into place, under an exclusive lock on
// dir+".lock", so that concurrent test processes install once and nobody
// sees half an install. fixup, if set, patches the temporary folder before
// the rename.
func npmInstall(logf Logf, dir string, specs []string, check string, fixup func(tmp string) error) error {
	want := strings.Join(specs, "\n") + "\n"
	done := func() bool {
		got, err := os.ReadFile(filepath.Join(dir, stampFile))
		if err != nil || string(got) != want {
			return false
		}
		_, err = os.Stat(check)
		return err == nil
	}
	what := strings.Join(specs, " ")
	if done() {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("installing %s: %w", what, err)
	}
	t0 := time.Now()
	unlock, err := flock.Lock(context.Background(), dir+".lock", func() {
		logf("waiting for another process installing %s", what)
	})
	if err != nil {
		return fmt.Errorf("installing %s: %w", what, err)
	}
	defer unlock()
	if done() { // another process installed it while we waited
		logf("%s installed by another process (waited %s)", what, time.Since(t0).Round(time.Millisecond))
		return nil
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("installing %s: npm is needed to install the pinned MCP test peers and is not on PATH: %w", what, err)
	}
	// Leftovers of a process killed mid-install; only a lock holder makes them.
	stale, _ := filepath.Glob(dir + ".tmp-*")
	for _, s := range stale {
		os.RemoveAll(s)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("installing %s: %w", what, err)
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	pkgJSON := `{"name":"switchboard-interop-cache","version":"0.0.0","private":true}` + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(pkgJSON), 0o644); err != nil {
		return fmt.Errorf("installing %s: %w", what, err)
	}
	logf("installing %s into %s", what, dir)
	ctx, cancel := context.WithTimeout(context.Background(), npmTimeout)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-update-notifier",
		"--loglevel=error", "--prefer-offline", "--save-exact"}, specs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t1 := time.Now()
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timed out after %s)", err, npmTimeout)
		}
		return fmt.Errorf("npm install %s (in %s) failed: %w\n%s", what, tmp, err, tail(out.String(), 4000))
	}
	if _, err := os.Stat(filepath.Join(tmp, rel(dir, check))); err != nil {
		return fmt.Errorf("npm install %s succeeded but %s is missing: %w", what, check, err)
	}
	if fixup != nil {
		if err := fixup(tmp); err != nil {
			return fmt.Errorf("installing %s: %w", what, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, stampFile), []byte(want), 0o644); err != nil {
		return fmt.Errorf("installing %s: %w", what, err)
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("installing %s: removing the old install: %w", what, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("installing %s: %w", what, err)
	}
	logf("installed %s in %s", what, time.Since(t1).Round(time.Millisecond))
	return nil
}

func rel(base, target string) string {
	r, err := filepath.Rel(base, target)
	if err != nil {
		return target
	}
	return r
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
