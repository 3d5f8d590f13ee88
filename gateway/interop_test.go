package gateway_test

// Real third-party clients through the gateway: the MCP inspector's CLI over
// Streamable HTTP and over `switchboard serve --stdio`, and the TypeScript
// SDK's WebSocketClientTransport over /ws. Each peer is pinned and installed
// by internal/interop.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/internal/interop"
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
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Loopback: true}))
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
	cfg := filepath.Join(t.TempDir(), "switchboard.toml")
	body := "[[mcp_servers]]\nid = \"fx\"\ncommand = " + quoteTOML(interop.Build(t, fixturePkg)) + "\n"
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
