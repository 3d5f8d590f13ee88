package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
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

// probeSocket asks the daemon on the socket at path for /healthz, as a CLI
// command would reach it (SocketClient), and returns the answer's body.
func probeSocket(t *testing.T, path string) (string, error) {
	t.Helper()
	hc, err := daemon.SocketClient(path)
	if err != nil {
		return "", err
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://" + daemon.SocketHost + "/healthz")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestLocalSocket: a daemon serves on its local socket the handler of
// its listener, every route on it, a face mounted with Handle as much as
// the MCP endpoint, and a request that comes there is the owner's though
// [gateway] auth_token is set; a browser's Origin, or a Host other than
// SocketHost, is refused. The socket is owner-only in an owner-only
// folder, and gone after the daemon.
func TestLocalSocket(t *testing.T) {
	dir := runtimeDir(t)
	sock := filepath.Join(dir, "switchboard", "t.sock")
	t.Setenv("SB_SOCKET_TEST_TOKEN", "socket-test-token-5b1e")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "fx")}, Gateway: config.Gateway{AuthToken: "{{env.SB_SOCKET_TEST_TOKEN}}"}}
	r := run(t, cfg, openStore(t), func(d *daemon.Daemon) {
		d.Handle("/added-later", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "added later") }))
	}, daemon.Options{Socket: sock})
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
	hc, err := daemon.SocketClient(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	get := func(hc *http.Client, url string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
			} else {
				req.Header.Set(hdr[i], hdr[i+1])
			}
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	local := "http://" + daemon.SocketHost
	// The face mounted with Handle: on the listener the token's, on the
	// socket anyone's who can reach it.
	if status, _ := get(http.DefaultClient, r.url+"/added-later"); status != http.StatusUnauthorized {
		t.Errorf("GET /added-later on the listener without the token: %d, want 401", status)
	}
	if status, body := get(hc, local+"/added-later"); status != http.StatusOK || body != "added later" {
		t.Errorf("GET /added-later on the socket: %d %q, want the face's answer", status, body)
	}
	for _, trick := range [][]string{{"Origin", "http://localhost"}, {"Origin", "null"}, {"Host", "127.0.0.1"}, {"Host", "evil.example"}} {
		if status, _ := get(hc, local+"/added-later", trick...); status != http.StatusForbidden {
			t.Errorf("GET /added-later on the socket with %s: %q: %d, want 403", trick[0], trick[1], status)
		}
	}
	// The MCP endpoint, for calls, without a token.
	mc := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := mc.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: local + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("MCP over the socket: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "over the socket"}})
	if err != nil || res.IsError {
		t.Errorf("a call over the socket: %v, %v", res, err)
	}
	cs.Close()
	hc.CloseIdleConnections()
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
	if _, err := probeSocket(t, sock); !errors.Is(err, daemon.ErrNoDaemon) {
		t.Fatalf("a request on a stale socket: %v, want ErrNoDaemon", err)
	}
	r := run(t, &config.Config{Servers: []config.Server{fixture(t, "fx")}}, openStore(t), nil, daemon.Options{Socket: sock})
	r.awaitReady(t)
	if r.d.Socket() != sock {
		t.Fatalf("the daemon did not replace the stale socket (Socket() = %q)", r.d.Socket())
	}
	if body, err := probeSocket(t, sock); err != nil || body != "ok\n" {
		t.Errorf("GET /healthz over the replaced socket: %q, %v", body, err)
	}
	// No socket at all is no daemon too, and a client makes no folder.
	if _, err := daemon.SocketClient(sock + ".none"); !errors.Is(err, daemon.ErrNoDaemon) {
		t.Errorf("SocketClient with no socket: %v, want ErrNoDaemon", err)
	}
	none := filepath.Join(runtimeDir(t), "switchboard")
	if _, err := daemon.SocketClient(filepath.Join(none, "t.sock")); !errors.Is(err, daemon.ErrNoDaemon) {
		t.Errorf("SocketClient with no folder: %v, want ErrNoDaemon", err)
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
	if body, err := probeSocket(t, sock); err != nil || body != "ok\n" {
		t.Errorf("the first daemon no longer answers after the second stopped: %q, %v", body, err)
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
			_, err := daemon.SocketClient(sock)
			if err == nil || errors.Is(err, daemon.ErrNoDaemon) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SocketClient in %s: %v, want a refusal saying %q", tc.dir, err, tc.want)
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
