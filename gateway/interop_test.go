package gateway_test

// Real third-party clients through the gateway: the MCP inspector's CLI over
// Streamable HTTP and over `switchboard serve --stdio`, and the TypeScript
// SDK's WebSocketClientTransport over /ws. Each peer is pinned and installed
// by internal/testkit/interop.

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// peerTimeout bounds one run of a third-party client, so that a hang fails
// with its output instead of eating the test binary's budget.
const peerTimeout = 2 * time.Minute

// serveInterop starts a gateway over the fixture server "fx" and serves it
// on a loopback httptest server; it returns the base URL.
func serveInterop(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		ts.Close()
	})
	return ts.URL
}

// runPeer runs a third-party client with the interop environment and
// returns its stdout; a failure shows stdout and stderr.
func runPeer(t *testing.T, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = interop.Env(t)
	cmd.Dir = t.TempDir()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q: %v\nstdout:\n%s\nstderr:\n%s", argv, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// inspectorJSON decodes the inspector's output: one JSON value on stdout.
func inspectorJSON(t *testing.T, out string, v any) {
	t.Helper()
	if i := strings.IndexByte(out, '{'); i > 0 {
		out = out[i:] // a deprecation banner may come first
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("inspector output is not JSON: %v\n%s", err, out)
	}
}

type inspectorTools struct {
	Tools []struct{ Name string }
}

type inspectorResult struct {
	Content []struct{ Type, Text string }
	IsError bool
}

// checkInspector runs the inspector's CLI with tools/list, then tools/call
// of mcp_fx_echo, against the server that before and after name (before the
// method options, and after them).
func checkInspector(t *testing.T, before, after []string) {
	t.Helper()
	run := func(method ...string) string {
		argv := append(interop.InspectorCLI(t), "--cli")
		argv = append(append(append(argv, before...), method...), after...)
		return runPeer(t, argv...)
	}
	var tl inspectorTools
	inspectorJSON(t, run("--method", "tools/list"), &tl)
	var names []string
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(" "+strings.Join(names, " ")+" ", " mcp_fx_echo ") {
		t.Errorf("inspector tools/list = %v, want mcp_fx_echo among them", names)
	}
	var res inspectorResult
	// --tool-arg takes every value up to the next option: --method ends it.
	inspectorJSON(t, run("--tool-name", "mcp_fx_echo", "--tool-arg", "text=hi", "--method", "tools/call"), &res)
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "hi" {
		t.Errorf("inspector tools/call mcp_fx_echo text=hi = %+v, want the text hi", res)
	}
}

// TestInspectorStreamableHTTP: the inspector's CLI lists and calls tools
// through the gateway over Streamable HTTP.
func TestInspectorStreamableHTTP(t *testing.T) {
	base := serveInterop(t)
	checkInspector(t, []string{base + "/mcp", "--transport", "http"}, nil)
}

// TestInspectorServeStdio: the inspector's CLI starts `switchboard --config
// FILE serve --stdio` as its server, as Claude Desktop would, and lists and
// calls tools through it.
func TestInspectorServeStdio(t *testing.T) {
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "switchboard.toml")
	// A state database of its own: not the user's, which another
	// version of Switchboard may have migrated beyond this one.
	body := "[state]\ndatabase = " + quoteTOML(filepath.Join(dir, "state.db")) + "\n\n" +
		"[[mcp_servers]]\nid = \"fx\"\ncommand = " + quoteTOML(interop.Build(t, fixturePkg)) + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// After "--": the inspector has a --config option of its own.
	checkInspector(t, nil, []string{"--", bin, "--config", cfg, "serve", "--stdio"})
}

// TestTypeScriptWebSocket: the TypeScript SDK's WebSocketClientTransport
// (subprotocol "mcp") lists and calls tools through the gateway's /ws.
func TestTypeScriptWebSocket(t *testing.T) {
	base := serveInterop(t)
	ws := "ws" + strings.TrimPrefix(base, "http") + "/ws"
	script, err := filepath.Abs(filepath.Join("testdata", "ws-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	out := runPeer(t, interop.Node(t), script, ws, interop.TSSDK(t))
	var got struct {
		Server struct{ Name string }
		Tools  []string
		Echo   inspectorResult
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("ws-client.mjs output is not JSON: %v\n%s", err, out)
	}
	if got.Server.Name != "switchboard" {
		t.Errorf("serverInfo.name = %q, want switchboard", got.Server.Name)
	}
	if !strings.Contains(" "+strings.Join(got.Tools, " ")+" ", " mcp_fx_echo ") {
		t.Errorf("tools = %v, want mcp_fx_echo among them", got.Tools)
	}
	if got.Echo.IsError || len(got.Echo.Content) != 1 || got.Echo.Content[0].Text != "hi over ws" {
		t.Errorf("echo = %+v, want the text hi over ws", got.Echo)
	}
}

// quoteTOML quotes s as a TOML basic string.
func quoteTOML(s string) string {
	b, _ := json.Marshal(s) // JSON string escapes are valid TOML ones
	return string(b)
}

// TestClientsOverEveryHTTPTransport: clients of both generations, each as
// it comes, list and call tools through the gateway's legacy HTTP+SSE
// endpoint (/sse) and its Streamable HTTP endpoint (/mcp): the go-sdk's
// client (v1.8.0: 2026-07-28 by default, and 2025-11-25), mcp-go's
// (v1.6.0, likewise) and the inspector's CLI (the TypeScript SDK) over
// /sse. A 2026-07-28 client probes with server/discover first; on /sse,
// a transport of the older generation, the gateway answers as a server of
// that generation does (-32601, method not found), which every one of
// them takes as its cue to initialize. A result listing only older
// versions, as the go-sdk's server gives, made mcp-go v1.6.0 abort
// ("server/discover result lists no modern version this client
// supports").
func TestClientsOverEveryHTTPTransport(t *testing.T) {
	base := serveInterop(t)
	mcpgo := interop.GoInstall(t, interop.MCPGoClient)
	for _, path := range []string{"/sse", "/mcp"} {
		for _, v := range []string{"", "2025-11-25"} {
			name := path + " " + cmp.Or(v, "default")
			t.Run("mcp-go "+name, func(t *testing.T) {
				flag := "-sse"
				if path == "/mcp" {
					flag = "-http"
				}
				out := runPeer(t, mcpgo, flag, base+path, "-version", v, "-call", "mcp_fx_echo", "-args", `{"text":"hi"}`)
				var got struct {
					ProtocolVersion, Server, Result string
					Tools                           []string
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("mcpgo-client output is not JSON: %v\n%s", err, out)
				}
				want := cmp.Or(v, "2026-07-28")
				if path == "/sse" {
					want = "2025-11-25" // the newest the transport speaks
				}
				if got.ProtocolVersion != want || got.Server != "switchboard" || !slices.Contains(got.Tools, "mcp_fx_echo") || got.Result != "hi" {
					t.Errorf("mcp-go client over %s = %+v, want version %s, switchboard, mcp_fx_echo among the tools, echo hi", path, got, want)
				}
			})
			t.Run("go-sdk "+name, func(t *testing.T) {
				var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: base + path}
				if path == "/sse" {
					tr = &mcp.SSEClientTransport{Endpoint: base + path}
				}
				ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
				defer cancel()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatalf("connect over %s: %v", path, err)
				}
				defer cs.Close()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "hi"}})
				if err != nil || res.IsError || textOf(res) != "hi" {
					t.Errorf("echo over %s = %+v, %v; want hi", path, res, err)
				}
			})
		}
	}
	t.Run("inspector /sse", func(t *testing.T) {
		checkInspector(t, []string{base + "/sse", "--transport", "sse"}, nil)
	})
}
