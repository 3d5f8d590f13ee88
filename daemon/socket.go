package daemon

// The local socket: where a daemon serves CLI commands of its own
// configuration, and how a CLI command finds it. The socket serves the
// listener's handler, its one guard with every route on it (the gateway's
// endpoints, /api/v1, every face mounted), so that no face is on one and
// not the other; a request that comes on it is the owner's
// (guard.LocalContext): only this user can reach the socket (its folder
// is 0700). A CLI command reads the daemon through /api/v1 and calls
// tools through the MCP endpoint (SocketClient).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guard"
)

// serveSocket serves h, the daemon's guard, on the local socket when
// Options.Socket names one; nil when it does not, or cannot (logged: CLI
// commands then start their own servers, as without a daemon).
func (d *Daemon) serveSocket(h http.Handler) *httpFace {
	path := d.opts.Socket
	if path == "" {
		return nil
	}
	ln, err := listenSocket(path)
	if errors.Is(err, ErrSocketInUse) {
		d.log.Info("not serving CLI commands: "+err.Error(), "socket", path)
		return nil
	}
	if err != nil {
		d.log.Warn("not serving CLI commands on a local socket", "err", err)
		return nil
	}
	d.mu.Lock()
	d.socket = path
	d.mu.Unlock()
	d.log.Info("serving CLI commands of this configuration", "socket", path)
	return d.serveHTTP(ln, socketOwner(h))
}

// socketOwner marks what comes on the socket as the owner's, and refuses
// what no CLI command sends: a browser's Origin, or a Host other than
// SocketHost (DNS rebinding through a forwarder someone set up, though no
// browser can open a unix socket).
func socketOwner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || r.Host != SocketHost {
			w.Header().Set("Connection", "close")
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(guard.LocalContext(r.Context())))
	})
}

// SocketHost is the Host a client sends on the socket: its URLs are
// http://SocketHost/….
const SocketHost = "localhost"

// ErrNoDaemon: no daemon answers on the socket (there is none, or it is
// stale: its daemon is gone).
var ErrNoDaemon = errors.New("no switchboard serve answers on the local socket")

// SocketClient returns an HTTP client whose every request goes to the
// daemon serving path ([SocketPath]), at http://[SocketHost]. It checks
// first that the socket is this user's, in a folder only this user may
// enter. A socket that is not there, or that nobody answers on (a daemon
// killed), is ErrNoDaemon, at once or when a request is made.
func SocketClient(path string) (*http.Client, error) {
	if err := checkSocket(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", ErrNoDaemon, err)
		}
		return nil, err
	}
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := d.DialContext(ctx, "unix", path)
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
				return nil, fmt.Errorf("%w: %s: %v", ErrNoDaemon, path, err)
			}
			return c, err
		},
		// Not a proxy's business: the socket is on this machine.
		Proxy: nil,
	}}, nil
}

// SocketPath is where a daemon of cfg serves CLI commands:
// $XDG_RUNTIME_DIR/switchboard/HASH.sock, or, without XDG_RUNTIME_DIR,
// $TMPDIR/switchboard-UID/HASH.sock. HASH covers what makes two
// configurations the same one: the configuration files, in order, by
// absolute path and content, and the values of the environment variables
// their {{env.NAME}} (or ${env:NAME}) placeholders name. A CLI command
// uses a daemon only of exactly its configuration; a changed file, or
// another value of a variable it reads, is another configuration. It fails
// when cfg was read from no file or a file cannot be read again.
func SocketPath(cfg *config.Config, getenv func(string) string) (string, error) {
	if len(cfg.Files) == 0 {
		return "", errors.New("no configuration file: no local socket")
	}
	h := sha256.New()
	var names []string
	for _, f := range cfg.Files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", err
		}
		b, err := config.ReadFile(abs)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %d %s\n%d\n", len(abs), abs, len(b))
		h.Write(b)
		for _, m := range envRef().FindAllSubmatch(b, -1) {
			names = append(names, string(m[1])+string(m[2]))
		}
	}
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		v := getenv(n)
		fmt.Fprintf(h, "env %d %s\n%d\n%s", len(n), n, len(v), v)
	}
	sum := h.Sum(nil)
	dir, err := socketDir(getenv)
	if err != nil {
		return "", err
	}
	// 20 bytes of the hash: a name no two configurations share by chance,
	// short enough for the 104 bytes a socket path may have on macOS (108
	// on Linux).
	p := filepath.Join(dir, hex.EncodeToString(sum[:20])+".sock")
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("local socket path %s is longer than %d bytes", p, maxSocketPath)
	}
	return p, nil
}

// maxSocketPath is the longest socket path every platform accepts
// (sockaddr_un's sun_path: 104 bytes on macOS and the BSDs, with its NUL).
const maxSocketPath = 103

// envRef finds the environment variables a configuration file reads.
var envRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*env\.([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}|\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)
})

// socketDir is the folder sockets go in: $XDG_RUNTIME_DIR/switchboard (a
// folder of the user's own, by the XDG spec), else one of the user's own
// in the shared temporary folder.
func socketDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "switchboard"), nil
	}
	uid := os.Getuid()
	if uid < 0 {
		return "", errors.New("no local socket on this platform")
	}
	return filepath.Join(os.TempDir(), "switchboard-"+strconv.Itoa(uid)), nil
}

// makePrivateDir makes dir (0700) unless it exists, and checks it like
// privateDir. An existing folder is not changed.
func makePrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("local socket folder: %w", err)
	}
	return privateDir(dir)
}

// privateDir checks that dir is a folder (not a link to one), owned by
// this user, that no one else may enter: a socket there can have been put
// there by no one else, and no one else can reach it.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("local socket folder: %w", err) // ErrNotExist: no daemon made it
	}
	switch {
	case !fi.IsDir():
		return fmt.Errorf("local socket folder %s is not a folder (a link or a file); remove it", dir)
	case !ownedByUs(fi):
		return fmt.Errorf("local socket folder %s belongs to another user; not using it", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("local socket folder %s is open to others (mode %04o); want 0700 (chmod 700 %s)", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// checkSocket checks that path is a socket of this user's in a private
// folder: what a CLI command checks before it trusts a daemon there.
func checkSocket(path string) error {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket || !ownedByUs(fi) {
		return fmt.Errorf("%s is not a socket of this user's", path)
	}
	return nil
}

// ErrSocketInUse: another daemon serves the local socket.
var ErrSocketInUse = errors.New("another switchboard serve of this configuration answers on the local socket")

// listenSocket listens on path, owner-only, in a private folder. A socket
// left there by a daemon that is gone (killed: it could not remove it) is
// replaced; one another daemon answers on is left to it (ErrSocketInUse).
func listenSocket(path string) (net.Listener, error) {
	if err := makePrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it", path)
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, ErrSocketInUse
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("local socket %s: %w", path, err)
		}
		// Refused: nobody listens; the socket is stale.
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing the stale local socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, ErrSocketInUse // another daemon was quicker
		}
		return nil, fmt.Errorf("local socket: %w", err)
	}
	// The folder already keeps others out; the socket's own mode says so
	// too (it was made with the umask's).
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("local socket: %w", err)
	}
	return ln, nil
}
