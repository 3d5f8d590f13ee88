package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/flock"
)

// GoPeer is a main package of a third-party Go module at a pinned version,
// built from the Go module proxy by [GoInstall]; or (Dir set) a small
// program of ours written against a third-party module, in a module of its
// own whose go.mod pins that module and whose go.sum the build checks.
type GoPeer struct {
	Pkg     string // the package path (with Dir: the program's name)
	Version string // its module's version (with Dir: that of the module go.mod pins)
	// Dir, when set, is the program's module folder, relative to the
	// module root: it is built there with `go build`, outside our module,
	// with the requirements of its own go.mod.
	Dir string
}

func (p GoPeer) String() string { return p.Pkg + "@" + p.Version }

// The pinned third-party Go servers. Each is a package of its SDK's own
// module at that version (no nested go.mod, no replace directive), which
// is what `go install pkg@version` needs.
var (
	// GoSDKLegacySSE is the go-sdk's legacy HTTP+SSE example server
	// (flags -host, -port; servers at /greeter1 and /greeter2, one tool
	// each). Like every go-sdk up to v1.6.1 it answers a POST it cannot
	// decode, such as the 2026-07-28 server/discover probe, with 400.
	GoSDKLegacySSE = GoPeer{Pkg: "github.com/modelcontextprotocol/go-sdk/examples/server/sse", Version: "v1.1.0"}
	// GoSDKEverything is the go-sdk's "everything" example server: stdio
	// (logging every message to stderr, in lines of many KiB), or
	// Streamable HTTP with -http ADDR. It speaks up to 2026-07-28.
	GoSDKEverything = GoPeer{Pkg: "github.com/modelcontextprotocol/go-sdk/examples/server/everything", Version: "v1.8.0"}
	// MCPGoEverything is mcp-go's "everything" example server (stdio;
	// its HTTP mode listens on the fixed port 8080, which tests do not
	// use). It logs every request and result to stderr.
	MCPGoEverything = GoPeer{Pkg: "github.com/mark3labs/mcp-go/examples/everything", Version: "v1.2.1"}
	// MCPGoClient is a client in the wild: internal/testkit/interop/testdata/mcpgo-client,
	// written against mcp-go's client package at the version its go.mod
	// pins (mcp-go has no example client for every transport). It probes
	// with server/discover first, as mcp-go v1.6.0 does, and aborts when
	// a successful answer lists no version it can speak. Flags -sse URL or
	// -http URL, -version V, -call TOOL -args JSON; it prints one JSON
	// object (protocolVersion, server, tools, result).
	MCPGoClient = GoPeer{Pkg: "mcpgo-client", Version: "v1.6.0", Dir: "internal/testkit/interop/testdata/mcpgo-client"}
)

// GoPeers lists the pinned Go peers [InstallAll] installs.
var GoPeers = []GoPeer{GoSDKLegacySSE, GoSDKEverything, MCPGoEverything, MCPGoClient}

// goInstallTimeout bounds one `go install`, downloads included, so that a
// proxy that hangs fails the tests with a message.
const goInstallTimeout = 10 * time.Minute

// GoInstall returns the absolute path of p's binary, built once with
// `go install p.Pkg@p.Version` into
// CacheDir()/gobin/<name>@<version>-<hash>/ (the hash covers the package,
// version, Go version and platform), under an exclusive lock, into a
// temporary folder renamed into place, so that concurrent test processes
// build it once and never see half of it. It fails the test when it cannot.
func GoInstall(t testing.TB, p GoPeer) string {
	t.Helper()
	bin, err := goInstall(p, t.Logf)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return bin
}

func goInstall(p GoPeer, logf Logf) (string, error) {
	return installs.do("go:"+p.String(), func() (string, error) {
		if p.Pkg == "" || p.Version == "" {
			return "", fmt.Errorf("go install %s: want a package and a version", p)
		}
		key := p.String() + "\x00" + runtime.Version() + "\x00" + runtime.GOOS + "/" + runtime.GOARCH
		var src string // with Dir: the module's folder
		if p.Dir != "" {
			root, err := ModuleRoot()
			if err != nil {
				return "", fmt.Errorf("building %s: %w", p, err)
			}
			src = filepath.Join(root, filepath.FromSlash(p.Dir))
			// Its sources are in the key: an edit builds afresh.
			sum, err := hashFiles(src)
			if err != nil {
				return "", fmt.Errorf("building %s: %w", p, err)
			}
			key += "\x00" + sum
		}
		sum := sha256.Sum256([]byte(key))
		name := path.Base(p.Pkg)
		dir := filepath.Join(CacheDir(), "gobin", name+"@"+p.Version+"-"+hex.EncodeToString(sum[:6]))
		exe := name
		if runtime.GOOS == "windows" {
			exe += ".exe"
		}
		bin := filepath.Join(dir, exe)
		want := key + "\n"
		done := func() bool {
			got, err := os.ReadFile(filepath.Join(dir, stampFile))
			return err == nil && string(got) == want && fileExists(bin)
		}
		if done() {
			return bin, nil
		}
		parent := filepath.Dir(dir)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", fmt.Errorf("go install %s: %w", p, err)
		}
		t0 := time.Now()
		unlock, err := flock.Lock(context.Background(), dir+".lock", func() { logf("waiting for another process installing %s", p) })
		if err != nil {
			return "", fmt.Errorf("go install %s: %w", p, err)
		}
		defer unlock()
		if done() {
			logf("%s installed by another process (waited %s)", p, time.Since(t0).Round(time.Millisecond))
			return bin, nil
		}
		goBin, err := goCommand()
		if err != nil {
			return "", fmt.Errorf("go install %s: %w", p, err)
		}
		stale, _ := filepath.Glob(dir + ".tmp-*")
		for _, s := range stale {
			os.RemoveAll(s)
		}
		tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+".tmp-")
		if err != nil {
			return "", fmt.Errorf("go install %s: %w", p, err)
		}
		defer os.RemoveAll(tmp) // a no-op after the rename
		logf("installing %s into %s", p, dir)
		ctx, cancel := context.WithTimeout(context.Background(), goInstallTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, goBin, "install", p.String())
		// Outside any module and workspace: pkg@version is built with its
		// own module's requirements, as its users get it.
		cmd.Dir = tmp
		if src != "" {
			// In its own module, with the requirements its go.sum checks.
			cmd = exec.CommandContext(ctx, goBin, "build", "-mod=readonly", "-o", filepath.Join(tmp, exe), ".")
			cmd.Dir = src
		}
		cmd.Env = append(os.Environ(), goCaches...)
		cmd.Env = append(cmd.Env, "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-buildvcs=false",
			// The toolchain running the tests builds it (the folder's key
			// names its version); a module wanting a newer one fails here
			// rather than fetching a toolchain.
			"GOTOOLCHAIN=local")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("%w (timed out after %s)", err, goInstallTimeout)
			}
			return "", fmt.Errorf("go %s %s failed (it needs the Go module proxy, or the module in GOMODCACHE): %w\n%s", cmd.Args[1], p, err, tail(out.String(), 4000))
		}
		if !fileExists(filepath.Join(tmp, exe)) {
			return "", fmt.Errorf("go install %s succeeded but made no %s", p, exe)
		}
		if err := os.WriteFile(filepath.Join(tmp, stampFile), []byte(want), 0o644); err != nil {
			return "", fmt.Errorf("go install %s: %w", p, err)
		}
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("go install %s: removing the old build: %w", p, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return "", fmt.Errorf("go install %s: %w", p, err)
		}
		logf("installed %s in %s", p, time.Since(t0).Round(time.Millisecond))
		return bin, nil
	})
}

// hashFiles returns a hash of the names and contents of the regular files
// in dir (not its subfolders).
func hashFiles(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}
