// Package testpg starts a throwaway PostgreSQL server for a test, so that
// code with a PostgreSQL backend (the workflow engine's DBOS system
// database and events table; later the state store, issue 18) is tested on
// the real server, not on a fake.
//
// [Start] initialises a cluster in a temporary folder, runs postgres on a
// Unix socket in that folder only (no TCP port, so tests running at once
// never meet) and stops it when the test ends. The binaries are found on
// PATH or under /usr/lib/postgresql/*/bin; when they are missing and the
// test runs as root, Debian's postgresql package is installed, once per
// test binary. A PostgreSQL that is missing and cannot be installed fails
// the test: like every peer of this project's tests, it is never skipped.
//
// The server dies with the test process, however that ends (Linux).
//
// postgres refuses to run as root: as root, the server (and initdb) run as
// the postgres user (which Debian's package makes), or nobody.
package testpg

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// readyTimeout bounds the wait for a started server to take connections:
// a loaded machine takes seconds, a server that never answers must not
// hold the test.
const readyTimeout = 60 * time.Second

// stopTimeout bounds a fast shutdown before the server is killed.
const stopTimeout = 30 * time.Second

// Start starts a PostgreSQL server for t, stopped (nothing left running,
// its folder removed) when t ends, and returns the URL of its postgres
// database as the superuser postgres:
// postgres://postgres@/postgres?host=SOCKETDIR. Another database name in
// the path may be created on it (DBOS creates its own).
func Start(t testing.TB) string {
	t.Helper()
	return StartServer(t).URL
}

// Server is a PostgreSQL server started by [StartServer].
type Server struct {
	// URL is the URL of its postgres database, as [Start] returns it.
	URL string

	bin, dir, data, logPath string
	cred                    *syscall.Credential
	mu                      sync.Mutex
	proc                    *exec.Cmd
	exited                  chan struct{}
	waitErr                 error
}

// StartServer is [Start], returning the server, which a test may restart.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin, err := binaries()
	if err != nil {
		t.Fatalf("testpg: %v", err)
	}
	// Not t.TempDir(): its parent folder is private to root, and the
	// server may run as another user; and a Unix socket's path is limited
	// to 107 bytes, which a long test name would pass.
	dir, err := os.MkdirTemp("", "testpg-")
	if err != nil {
		t.Fatalf("testpg: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cred, err := credential(dir)
	if err != nil {
		t.Fatalf("testpg: %v", err)
	}
	s := &Server{bin: bin, dir: dir, cred: cred, data: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "postgres.log")}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", s.data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("testpg: initdb: %v\n%s", err, out)
	}
	s.URL = (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres", RawQuery: url.Values{"host": {dir}}.Encode()}).String()
	s.start(t)
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// start runs postgres on the server's folder and waits until it takes
// connections.
func (s *Server) start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("testpg: %v", err)
	}
	defer logf.Close()
	srv := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.data,
		"-c", "listen_addresses=", // no TCP: the socket in dir only
		"-c", "unix_socket_directories="+s.dir,
		"-c", "fsync=off", // a throwaway cluster: durability across a machine crash is not tested here
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off")
	srv.Dir = s.dir
	srv.Stdout, srv.Stderr = logf, logf
	srv.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	// A test process that dies without its cleanups (its -timeout, a
	// SIGKILL) leaves no server running on a shared machine: its
	// backends see the postmaster gone and exit too.
	if err := interop.StartWithTest(srv); err != nil {
		t.Fatalf("testpg: starting postgres: %v", err)
	}
	exited := make(chan struct{})
	s.mu.Lock()
	s.proc, s.exited = srv, exited
	s.mu.Unlock()
	go func() {
		err := srv.Wait()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(exited)
	}()
	if err := waitReady(s.URL, exited); err != nil {
		b, _ := os.ReadFile(s.logPath)
		if errors.Is(err, errExited) {
			s.mu.Lock()
			err = fmt.Errorf("%w (%v)", err, s.waitErr)
			s.mu.Unlock()
		}
		t.Fatalf("testpg: %v\n%s", err, b)
	}
}

// Stop stops the server with a fast shutdown (SIGINT: sessions are
// ended, the server stops at once), killing it if it takes longer than
// stopTimeout; a server stopped already is left as it is. The test's end
// stops it too; a test stops it sooner when a check of its own (no child
// process left) would otherwise see it.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	srv, exited := s.proc, s.exited
	s.mu.Unlock()
	select {
	case <-exited:
		return
	default:
	}
	srv.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		srv.Process.Kill()
		<-exited
		t.Errorf("testpg: postgres did not stop within %v of SIGINT; killed", stopTimeout)
	}
}

// Restart stops the server as an administrator's restart does (a fast
// shutdown: every session is ended) and starts it again on the same
// data, returning once it takes connections again. Its URL is the same.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.start(t)
}

var errExited = errors.New("postgres exited before taking connections")

// waitReady polls a connection until the server takes it (there is no
// event to wait on: the log's "ready" line is not a stable format).
func waitReady(u string, exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := pgx.Connect(ctx, u)
		if err == nil {
			err = c.Ping(ctx)
			c.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errExited
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v: %w", readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// credential returns the user the server runs as: nil (this process's)
// unless this process is root, which postgres refuses; then the postgres
// user (or nobody), which is given dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("running as root, and no unprivileged user (postgres, nobody) to run postgres as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// binaries returns the folder holding initdb and postgres, installing
// Debian's package when they are missing and this process may.
var binaries = sync.OnceValues(func() (string, error) {
	if dir := find(); dir != "" {
		return dir, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("PostgreSQL (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin, and not root to install Debian's postgresql package")
	}
	if err := interop.AptInstall("postgresql"); err != nil {
		return "", fmt.Errorf("PostgreSQL not found, and installing Debian's postgresql package failed: %w", err)
	}
	if dir := find(); dir != "" {
		return dir, nil
	}
	return "", errors.New("PostgreSQL installed, but initdb and postgres are not in /usr/lib/postgresql/*/bin")
})

// find returns the folder of initdb and postgres: PATH's, else the newest
// of /usr/lib/postgresql/*/bin (Debian keeps them off PATH).
func find() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			// PATH may hold symbolic links (/usr/local/bin on this
			// project's machines): the real folder is the one whose
			// initdb finds postgres beside it.
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d
		}
	}
	return ""
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// CreateDatabase creates database name on the server Start returned, and
// returns its URL.
func CreateDatabase(t testing.TB, server, name string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("testpg: creating database %s: %v", name, err)
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Silent returns the URL of a database that never answers: a listener on
// loopback that accepts connections and says nothing on them, for tests
// of what a hung database does to a start. connected is closed once the
// first connection is accepted. All close when the test ends.
func Silent(t testing.TB) (u string, connected <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := make(chan struct{})
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if conns = append(conns, conn); len(conns) == 1 {
				close(c)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range conns {
			conn.Close()
		}
	})
	return "postgres://switchboard@" + ln.Addr().String() + "/state?sslmode=disable", c
}
