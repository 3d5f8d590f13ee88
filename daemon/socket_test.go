package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
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
)

// runtimeDir is a short private folder for sockets (a socket's path is
// bounded to about 100 bytes; t.TempDir's are long).
func runtimeDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func dialLocal(t *testing.T, path string) *daemon.Client {
	t.Helper()
	c, err := daemon.DialLocal(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("DialLocal: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// asJSON is v as JSON, for comparing what a command would print.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLocalSocket: a daemon serves its host on the local socket, and a
// Client gets from it what the host gives in process — servers, tools in
// the host's order, calls with progress, resources, templates, prompts —
// and the host's errors with the same text, matching the same sentinels.
// The socket is owner-only in an owner-only folder, and gone after the
// daemon.
func TestLocalSocket(t *testing.T) {
	dir := runtimeDir(t)
	sock := filepath.Join(dir, "switchboard", "t.sock")
	fx := fixture(t, "fx")
	fx.Timeout = 500 * time.Millisecond
	cfg := &config.Config{Servers: []config.Server{fx, fixture(t, "fy", "-tool-name", "zz_first", "-tool-name", "aa_second"),
		fixture(t, "pe", "-without", "tools/call", "-without", "resources/read")}}
	r := run(t, cfg, openStore(t), nil, daemon.Options{Socket: sock})
	r.awaitReady(t)
	if got := r.d.Socket(); got != sock {
		t.Fatalf("Socket() = %q, want %q", got, sock)
	}
	for path, want := range map[string]fs.FileMode{filepath.Dir(sock): 0o700, sock: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", path, fi.Mode().Perm(), want)
		}
	}
	h := r.d.Host()
	c := dialLocal(t, sock)
	ctx := context.Background()

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
	for name, list := range map[string]func(context.Context) (any, error){
		"resources": func(ctx context.Context) (any, error) { return c.Resources(ctx) },
		"templates": func(ctx context.Context) (any, error) { return c.ResourceTemplates(ctx) },
		"prompts":   func(ctx context.Context) (any, error) { return c.Prompts(ctx) },
	} {
		got, err := list(ctx)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		var want any
		switch name {
		case "resources":
			want, _ = h.Resources(ctx)
		case "templates":
			want, _ = h.ResourceTemplates(ctx)
		case "prompts":
			want, _ = h.Prompts(ctx)
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
	for _, tc := range []struct{ server, uri string }{{"fx", "test://nope"}, {"nope", "test://static/1"}, {"pe", "test://static/1"}} {
		_, want := h.ReadResource(ctx, tc.server, tc.uri, nil)
		_, got := c.ReadResource(ctx, tc.server, tc.uri, nil)
		sameErr("read "+tc.server+" "+tc.uri, got, want, nil)
	}
	r.shutdown(t)
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket is left after the daemon: %v", err)
	}
}

// staleSocket leaves a socket at path that nobody listens on, as a daemon
// killed with SIGKILL does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("no stale socket: %v", err)
	}
}

// TestStaleSocket: a socket whose daemon is gone is "no daemon" to a
// client, and a new daemon replaces it.
func TestStaleSocket(t *testing.T) {
	sock := filepath.Join(runtimeDir(t), "switchboard", "t.sock")
	staleSocket(t, sock)
	_, err := daemon.DialLocal(context.Background(), sock, nil)
	if !errors.Is(err, daemon.ErrNoDaemon) {
		t.Fatalf("DialLocal on a stale socket: %v, want ErrNoDaemon", err)
	}
	r := run(t, &config.Config{Servers: []config.Server{fixture(t, "fx")}}, openStore(t), nil, daemon.Options{Socket: sock})
	r.awaitReady(t)
	if r.d.Socket() != sock {
		t.Fatalf("the daemon did not replace the stale socket (Socket() = %q)", r.d.Socket())
	}
	if tools := dialLocal(t, sock).Tools(); len(tools) == 0 {
		t.Error("no tools over the replaced socket")
	}
	// No socket at all is no daemon too, and a client makes no folder.
	if _, err := daemon.DialLocal(context.Background(), sock+".none", nil); !errors.Is(err, daemon.ErrNoDaemon) {
		t.Errorf("DialLocal with no socket: %v, want ErrNoDaemon", err)
	}
	none := filepath.Join(runtimeDir(t), "switchboard")
	if _, err := daemon.DialLocal(context.Background(), filepath.Join(none, "t.sock"), nil); !errors.Is(err, daemon.ErrNoDaemon) {
		t.Errorf("DialLocal with no folder: %v, want ErrNoDaemon", err)
	}
	if _, err := os.Lstat(none); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a client made the socket folder: %v", err)
	}
}

// TestSocketInUse: a second daemon of the same socket leaves it to the
// first, which goes on answering.
func TestSocketInUse(t *testing.T) {
	sock := filepath.Join(runtimeDir(t), "switchboard", "t.sock")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	first := run(t, cfg, openStore(t), nil, daemon.Options{Socket: sock})
	first.awaitReady(t)
	second := run(t, cfg, openStore(t), nil, daemon.Options{Socket: sock})
	second.awaitReady(t)
	if first.d.Socket() != sock || second.d.Socket() != "" {
		t.Errorf("Socket(): first %q, second %q; want the first to keep it", first.d.Socket(), second.d.Socket())
	}
	second.shutdown(t)
	if tools := dialLocal(t, sock).Tools(); len(tools) == 0 {
		t.Error("the first daemon no longer answers after the second stopped")
	}
}

// TestSocketFolderRefused: a socket folder others may enter, or one that
// is a link, is not used by a daemon nor trusted by a client.
func TestSocketFolderRefused(t *testing.T) {
	base := runtimeDir(t)
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	private := filepath.Join(base, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}}
	for _, tc := range []struct{ dir, want string }{
		{open, "open to others (mode 0755)"},
		{link, "not a folder"},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			sock := filepath.Join(tc.dir, "t.sock")
			r := run(t, cfg, openStore(t), nil, daemon.Options{Socket: sock})
			r.awaitReady(t)
			if got := r.d.Socket(); got != "" {
				t.Errorf("the daemon serves a socket in %s", tc.dir)
			}
			if _, err := os.Lstat(sock); err == nil {
				t.Errorf("a socket was made in %s", tc.dir)
			}
			// A socket someone else put there is not trusted.
			staleSocket(t, sock)
			_, err := daemon.DialLocal(context.Background(), sock, nil)
			if err == nil || errors.Is(err, daemon.ErrNoDaemon) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DialLocal in %s: %v, want a refusal saying %q", tc.dir, err, tc.want)
			}
		})
	}
}

// TestSocketPath: the socket is named by the configuration's files, their
// contents and the environment values they read, under XDG_RUNTIME_DIR
// or else a folder of the user's own in the temporary folder.
func TestSocketPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.toml")
	write := func(body string) {
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000", "TOKEN": "one"}
	path := func() string {
		t.Helper()
		p, err := daemon.SocketPath(&config.Config{Files: []string{file}}, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(`[[mcp_servers]]
id = "a"
command = "a"
env = { T = "{{env.TOKEN}}" }
`)
	p := path()
	if !strings.HasPrefix(p, "/run/user/1000/switchboard/") || !strings.HasSuffix(p, ".sock") {
		t.Errorf("SocketPath = %s, want under $XDG_RUNTIME_DIR/switchboard", p)
	}
	if path() != p {
		t.Error("SocketPath is not the same twice")
	}
	env["TOKEN"] = "two"
	if path() == p {
		t.Error("another value of a variable the file reads gives the same socket")
	}
	env["TOKEN"] = "one"
	env["UNREAD"] = "x"
	if path() != p {
		t.Error("a variable the file does not read changes the socket")
	}
	write(`[[mcp_servers]]
id = "b"
command = "a"
env = { T = "{{env.TOKEN}}" }
`)
	if path() == p {
		t.Error("another content gives the same socket")
	}
	delete(env, "XDG_RUNTIME_DIR")
	if want := filepath.Join(os.TempDir(), fmt.Sprintf("switchboard-%d", os.Getuid())); !strings.HasPrefix(path(), want+"/") {
		t.Errorf("without XDG_RUNTIME_DIR: %s, want under %s", path(), want)
	}
	if _, err := daemon.SocketPath(&config.Config{}, os.Getenv); err == nil {
		t.Error("a configuration of no file has a socket")
	}
}
