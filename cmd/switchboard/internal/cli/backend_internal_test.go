package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// asJSON is v as JSON, for comparing what a command would print.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServeClient: a command reaching a serve over its local socket
// (/api/v1, and /mcp for calls) gets what the serve's host gives in
// process — servers, tools in the host's order, calls with progress,
// resources, templates, prompts — and the host's errors with the same
// text, matching the same sentinels.
func TestServeClient(t *testing.T) {
	dir, err := os.MkdirTemp("", "sb") // a socket's path is bounded to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "switchboard", "t.sock")
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	fixture := func(id string, args ...string) config.Server {
		return config.Server{ID: id, Transport: config.TransportStdio, Command: bin, Args: args}
	}
	fx := fixture("fx")
	fx.Timeout = 500 * time.Millisecond
	cfg := &config.Config{Servers: []config.Server{fx, fixture("fy", "-tool-name", "zz_first", "-tool-name", "aa_second"),
		fixture("pe", "-without", "tools/call", "-without", "resources/read")}}
	cfg.State.Database = filepath.Join(t.TempDir(), "s.db")
	ln, err := daemon.Listen("127.0.0.1:0", cfg.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{}, 1)
	d, err := daemon.New(t.Context(), ln, &daemon.Options{Config: cfg, Socket: sock, OnReady: func([]host.ServerStatus) { ready <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	mountFaces(d, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the daemon was never ready")
	}
	h := d.Host()
	c, err := dialSocket(ctx, sock)
	if err != nil {
		t.Fatalf("dialSocket: %v", err)
	}
	defer c.Close()

	// What a command lists: the same, in the same order.
	if d := cmp.Diff(asJSON(t, h.Tools()), asJSON(t, c.Tools())); d != "" {
		t.Errorf("tools over the socket differ from the host's (-host +socket):\n%s", d)
	}
	if c.ToolNameFormat() != h.ToolNameFormat() {
		t.Errorf("tool name format %q, want %q", c.ToolNameFormat(), h.ToolNameFormat())
	}
	strip := func(sts []host.ServerStatus) []host.ServerStatus {
		for i := range sts {
			sts[i].LastHealthy = time.Time{} // a ping may move it between the two reads
		}
		return sts
	}
	if d := cmp.Diff(asJSON(t, strip(h.Servers())), asJSON(t, strip(c.Servers()))); d != "" {
		t.Errorf("servers over the socket differ (-host +socket):\n%s", d)
	}
	for name, list := range map[string][2]func(context.Context) (any, error){
		"resources": {func(ctx context.Context) (any, error) { return h.Resources(ctx) }, func(ctx context.Context) (any, error) { return c.Resources(ctx) }},
		"templates": {func(ctx context.Context) (any, error) { return h.ResourceTemplates(ctx) }, func(ctx context.Context) (any, error) { return c.ResourceTemplates(ctx) }},
		"prompts":   {func(ctx context.Context) (any, error) { return h.Prompts(ctx) }, func(ctx context.Context) (any, error) { return c.Prompts(ctx) }},
	} {
		want, _ := list[0](ctx)
		got, err := list[1](ctx)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if d := cmp.Diff(asJSON(t, want), asJSON(t, got)); d != "" {
			t.Errorf("%s over the socket differ (-host +socket):\n%s", name, d)
		}
	}
	read, err := c.ReadResource(ctx, "fx", "test://static/1", nil)
	wantRead, _ := h.ReadResource(ctx, "fx", "test://static/1", nil)
	if err != nil || asJSON(t, read) != asJSON(t, wantRead) {
		t.Errorf("read = %s, %v; want %s", asJSON(t, read), err, asJSON(t, wantRead))
	}
	prompt, err := c.GetPrompt(ctx, "fx", "greet", map[string]string{"name": "socket"}, nil)
	if err != nil || !strings.Contains(asJSON(t, prompt), "socket") {
		t.Errorf("prompt = %s, %v", asJSON(t, prompt), err)
	}
	// Both fixtures have greet: without a server, the host's error.
	_, want := h.GetPrompt(ctx, "", "greet", nil, nil)
	if _, got := c.GetPrompt(ctx, "", "greet", nil, nil); want == nil || got == nil || got.Error() != want.Error() {
		t.Errorf("an ambiguous prompt: over the socket %v, in process %v", got, want)
	}

	// A call, with its progress.
	var progress []float64
	res, err := c.CallTool(ctx, "mcp_fx_progress", json.RawMessage(`{"steps":3,"interval_ms":10}`), &host.CallOptions{
		Progress: func(p *mcp.ProgressNotificationParams) { progress = append(progress, p.Progress) },
	})
	if err != nil || res.IsError || len(progress) != 3 {
		t.Errorf("progress call = %v, %v, progress %v; want 3 notifications", res, err, progress)
	}

	// Errors: the host's, word for word, and of the same kind (a server's
	// protocol error with its code).
	sameErr := func(what string, got, want error, is error) {
		t.Helper()
		if want == nil || got == nil || got.Error() != want.Error() || (is != nil && !errors.Is(got, is)) {
			t.Errorf("%s: over the socket %v, in process %v; want the same (%v)", what, got, want, is)
		}
		var wantRPC, gotRPC *jsonrpc.Error
		if errors.As(want, &wantRPC) && (!errors.As(got, &gotRPC) || gotRPC.Code != wantRPC.Code) {
			t.Errorf("%s: over the socket the protocol error is %v, want %v", what, gotRPC, wantRPC)
		}
	}
	for _, tc := range []struct {
		tool, args string
		opts       *host.CallOptions
		is         error
	}{
		{"mcp_fx_nope", `{}`, nil, host.ErrUnknownTool},
		{"mcp_fx_add", `{"a":"x","b":1}`, nil, host.ErrInvalidArguments},
		{"mcp_fx_slow", `{"ms":5000}`, nil, host.ErrTimeout},
		{"mcp_fx_slow", `{"ms":5000}`, &host.CallOptions{Timeout: 200 * time.Millisecond}, host.ErrTimeout}, // the call's own
		{"mcp_pe_echo", `{"text":"x"}`, nil, nil},
	} {
		_, want := h.CallTool(ctx, tc.tool, json.RawMessage(tc.args), tc.opts)
		_, got := c.CallTool(ctx, tc.tool, json.RawMessage(tc.args), tc.opts)
		sameErr(tc.tool+tc.args, got, want, tc.is)
	}
	for _, tc := range []struct {
		server, uri string
		is          error
	}{{"fx", "test://nope", nil}, {"nope", "test://static/1", host.ErrUnknownServer}, {"pe", "test://static/1", nil}} {
		_, want := h.ReadResource(ctx, tc.server, tc.uri, nil)
		_, got := c.ReadResource(ctx, tc.server, tc.uri, nil)
		sameErr("read "+tc.server+" "+tc.uri, got, want, tc.is)
	}
}
