package interop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// testTimeout bounds each test's MCP traffic; installs happen before it.
const testTimeout = 60 * time.Second

func newClient() *mcp.Client {
	// No roots capability: server-everything then exits when stdin closes
	// instead of waiting for SIGTERM.
	return mcp.NewClient(&mcp.Implementation{Name: "interop-test", Version: "0"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
}

// toolNames lists every tool of the session, page by page.
func toolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func checkEverything(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	names := toolNames(t, ctx, cs)
	for _, want := range []string{"echo", "get-sum"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools = %q, want one named %q", names, want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatalf("CallTool(echo): %v", err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("CallTool(echo) = no content, want the echo")
	}
	if text, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(text.Text, "hi") {
		t.Errorf("CallTool(echo).Content[0] = %#v, want text containing %q", res.Content[0], "hi")
	}
}

func TestEverythingStdio(t *testing.T) {
	argv := interop.Everything(t)
	if !filepath.IsAbs(argv[0]) || !filepath.IsAbs(argv[1]) {
		t.Fatalf("Everything() = %q, want absolute paths", argv)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	cmd := exec.Command(argv[0], append(argv[1:], "stdio")...)
	cmd.Env = interop.Env(t)
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("Connect(server-everything stdio): %v", err)
	}
	defer cs.Close()
	checkEverything(t, ctx, cs)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	url := interop.StartEverythingHTTP(t, "streamableHttp")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("StartEverythingHTTP(streamableHttp) = %q, want http://127.0.0.1:PORT/mcp", url)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("Connect(%s): %v", url, err)
	}
	defer cs.Close()
	checkEverything(t, ctx, cs)
}

func TestEverythingSSE(t *testing.T) {
	url := interop.StartEverythingHTTP(t, "sse")
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.SSEClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("Connect(%s): %v", url, err)
	}
	defer cs.Close()
	checkEverything(t, ctx, cs)
}

// TestInspectorCLI runs the inspector's CLI, an independent client, against
// server-everything over Streamable HTTP.
func TestInspectorCLI(t *testing.T) {
	url := interop.StartEverythingHTTP(t, "streamableHttp")
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	argv := append(interop.InspectorCLI(t), "--cli", url, "--transport", "http", "--method", "tools/list")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = interop.Env(t)
	cmd.Dir = t.TempDir() // it must not depend on the working directory
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
	if !strings.Contains(string(out), `"get-sum"`) {
		t.Errorf("inspector tools/list output lacks get-sum:\n%s", out)
	}
}

func TestConformanceVersions(t *testing.T) {
	for _, v := range interop.ConformanceVersions {
		argv := interop.Conformance(t, v)
		out, err := exec.Command(argv[0], append(argv[1:], "--version")...).CombinedOutput()
		if err != nil {
			t.Fatalf("conformance %s --version: %v\n%s", v, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != v {
			t.Errorf("conformance --version = %q, want %q", got, v)
		}
	}
}

func TestCacheDirEnv(t *testing.T) {
	abs := t.TempDir()
	t.Setenv(interop.CacheEnv, abs)
	if got := interop.CacheDir(); got != abs {
		t.Errorf("CacheDir() with %s=%q = %q, want it unchanged", interop.CacheEnv, abs, got)
	}
	root, err := interop.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(interop.CacheEnv, "rel/cache")
	if got, want := interop.CacheDir(), filepath.Join(root, "rel", "cache"); got != want {
		t.Errorf("CacheDir() with %s=%q = %q, want %q", interop.CacheEnv, "rel/cache", got, want)
	}
}

func TestBuild(t *testing.T) {
	bin := interop.Build(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if again := interop.Build(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"); again != bin {
		t.Errorf("second Build = %q, want the first %q", again, bin)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		t.Fatalf("Connect(everything-server): %v", err)
	}
	defer cs.Close()
	if names := toolNames(t, ctx, cs); !slices.Contains(names, "test_simple_text") {
		t.Errorf("everything-server tools = %q, want test_simple_text", names)
	}
}

// TestGoPeers: every pinned Go server is built once into the cache, and
// the HTTP ones start on a free port and answer.
func TestGoPeers(t *testing.T) {
	for _, p := range interop.GoPeers {
		bin := interop.GoInstall(t, p)
		if !filepath.IsAbs(bin) || !strings.Contains(bin, p.Version) {
			t.Errorf("GoInstall(%s) = %q, want an absolute path naming the version", p, bin)
		}
		if again := interop.GoInstall(t, p); again != bin {
			t.Errorf("second GoInstall(%s) = %q, want the first %q", p, again, bin)
		}
	}
	// The program of ours is built against the version it claims.
	root, err := interop.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(interop.MCPGoClient.Dir), "go.mod"))
	if want := "github.com/mark3labs/mcp-go " + interop.MCPGoClient.Version + "\n"; err != nil || !strings.Contains(string(gomod), want) {
		t.Errorf("%s/go.mod = %q, %v; want it to require %q", interop.MCPGoClient.Dir, gomod, err, want)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	// The legacy SSE server answers a client that starts with initialize.
	url := interop.StartGoSDKLegacySSE(t)
	cs, err := newClient().Connect(ctx, &mcp.SSEClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect(%s): %v", url, err)
	}
	defer cs.Close()
	if names := toolNames(t, ctx, cs); !slices.Equal(names, []string{"greet1"}) {
		t.Errorf("legacy SSE tools = %q, want [greet1]", names)
	}
	url = interop.StartGoSDKEverythingHTTP(t)
	cs2, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("Connect(%s): %v", url, err)
	}
	defer cs2.Close()
	if names := toolNames(t, ctx, cs2); !slices.Contains(names, "greet") {
		t.Errorf("go-sdk everything tools = %q, want greet", names)
	}
}
