package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	gobuild "go/build"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var builds memo

// Build compiles the main package pkg, a path of this module
// ("./internal/testkit/testserver", "github.com/switchboardmcp/switchboard/…") or of
// a module it requires ("github.com/modelcontextprotocol/go-sdk/conformance/everything-server"),
// once per test process, and returns the binary's absolute path. The go
// command's build cache makes the later builds of other test processes
// cheap.
//
// Binaries live in CacheDir()/bin/<hash of module root, pkg and Go version>/, outlive the
// test process and are replaced atomically, so that test processes building
// the same package at once never see a half-written file.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin, err := builds.do(pkg, func() (string, error) { return build(pkg, t.Logf) })
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return bin
}

// goCaches pins the go command's build and module caches to where they were
// when the test process started: tests that move HOME to a temp folder must
// not make a build start from an empty cache (minutes instead of seconds).
var goCaches = func() []string {
	var env []string
	if v := os.Getenv("GOCACHE"); v != "" {
		env = append(env, "GOCACHE="+v)
	} else if d, err := os.UserCacheDir(); err == nil {
		env = append(env, "GOCACHE="+filepath.Join(d, "go-build"))
	}
	if v := os.Getenv("GOMODCACHE"); v != "" {
		env = append(env, "GOMODCACHE="+v)
	} else if gp := gobuild.Default.GOPATH; gp != "" {
		env = append(env, "GOMODCACHE="+filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod"))
	}
	if v := os.Getenv("GOPATH"); v != "" {
		env = append(env, "GOPATH="+v)
	} else if gp := gobuild.Default.GOPATH; gp != "" {
		env = append(env, "GOPATH="+gp)
	}
	return env
}()

func build(pkg string, logf Logf) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	goBin, err := goCommand()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	// The module root is in the key: two checkouts (git worktrees) sharing
	// one cache build different sources under the same package path.
	sum := sha256.Sum256([]byte(root + "\x00" + pkg + "\x00" + runtime.Version() + "\x00" + runtime.GOOS + "/" + runtime.GOARCH))
	dir := filepath.Join(CacheDir(), "bin", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	name := path.Base(strings.TrimSuffix(pkg, "/"))
	if name == "." || name == "" {
		name = "main"
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // a no-op after the rename
	t0 := time.Now()
	cmd := exec.Command(goBin, "build", "-o", tmp.Name(), pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), goCaches...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	logf("built %s in %s", pkg, time.Since(t0).Round(time.Millisecond))
	return bin, nil
}

// goCommand finds the go command of the toolchain running the tests.
func goCommand() (string, error) {
	exe := "go"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", exe); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is not on PATH: %w", err)
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
