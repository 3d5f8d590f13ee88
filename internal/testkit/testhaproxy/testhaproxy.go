// Package testhaproxy starts a real HAProxy for a test, so that what
// Switchboard promises behind a load balancer (sessions routed by
// Mcp-Session-Id, replicas taken out on /readyz, SSE kept open) is tested
// through the balancer people run, with the configuration the project
// ships (examples/haproxy/haproxy.cfg), not against a fake.
//
// [Start] runs haproxy with a configuration given as text, written into
// the test's temporary folder. The frontend's socket is made by this
// package, not by haproxy: a listener on 127.0.0.1:0 whose file descriptor
// the child inherits as fd 3, which the configuration binds with
// `bind fd@3`. The port is therefore known before haproxy starts and no
// other process can take it in between, as it could if a free port were
// picked, closed and named in the configuration. Readiness is an event,
// not a poll: haproxy runs in master-worker mode with systemd's
// notification protocol (-Ws), and says READY=1 on a datagram socket of
// the test's (NOTIFY_SOCKET) once its workers serve; an haproxy that exits
// first (a configuration error) fails the test with its output.
//
// haproxy is found on PATH or in /usr/sbin; when it is missing and the test
// runs as root, Debian's haproxy package is installed, once per test
// binary. An HAProxy that is missing and cannot be installed fails the
// test: like every peer of this project's tests, it is never skipped.
//
// At the test's end haproxy is stopped the way its systemd unit does it
// (SIGTERM to the master, which stops its workers), then, if it lingers,
// with SIGKILL to its whole process group.
package testhaproxy

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// readyTimeout bounds the wait for READY=1: a loaded machine takes
// seconds, an haproxy that never gets ready must not hold the test.
const readyTimeout = 60 * time.Second

// stopTimeout bounds the master's stop after SIGTERM before the group is
// killed.
const stopTimeout = 15 * time.Second

// ListenFD is the file descriptor, in haproxy, of the frontend's socket:
// the configuration binds it with `bind fd@3`.
const ListenFD = 3

// HAProxy is a running haproxy.
type HAProxy struct {
	// Addr is the frontend's address, 127.0.0.1:PORT.
	Addr string
	// URL is http://Addr.
	URL string
	// Pid is the master's process id.
	Pid int

	cmd    *exec.Cmd
	exited chan struct{}
	out    *interop.LogBuffer
	once   sync.Once
}

// Start starts haproxy with config for t and returns it once it serves;
// it is stopped when t ends. config binds its frontend with `bind fd@3`
// (ListenFD): a socket on 127.0.0.1 this package made.
func Start(t testing.TB, config string) *HAProxy {
	t.Helper()
	h, err := start(config, t.TempDir())
	if err != nil {
		t.Fatalf("testhaproxy: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Errorf("testhaproxy: %v", err)
		}
	})
	return h
}

// Output returns what haproxy wrote to stdout and stderr so far (its log,
// when the configuration logs to stderr).
func (h *HAProxy) Output() string { return h.out.String() }

func start(config, dir string) (*HAProxy, error) {
	bin, err := executable()
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lnFile, err := ln.(*net.TCPListener).File()
	ln.Close() // the duplicate in lnFile keeps the socket
	if err != nil {
		return nil, err
	}
	defer lnFile.Close() // haproxy has its own copy once started
	addr := ln.Addr().String()

	// The notification socket's path is limited to 107 bytes, which
	// t.TempDir() under a long test name passes.
	nd, err := os.MkdirTemp("", "testhaproxy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(nd)
	notifyPath := filepath.Join(nd, "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		return nil, err
	}
	defer notify.Close()

	out := new(interop.LogBuffer)
	cmd := exec.Command(bin, "-Ws", "-f", cfgPath)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+notifyPath)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{lnFile} // fd 3
	// A group of its own, so that SIGKILL reaches the workers too; and
	// the master dies with the test process however that ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := interop.StartWithTest(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	h := &HAProxy{Addr: addr, URL: "http://" + addr, Pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{}), out: out}
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(h.exited) }()

	ready := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := notify.Read(buf)
			if err != nil {
				ready <- err
				return
			}
			for _, l := range strings.Split(string(buf[:n]), "\n") {
				if l == "READY=1" {
					ready <- nil
					return
				}
			}
		}
	}()
	select {
	case err := <-ready:
		if err == nil {
			return h, nil
		}
		h.Stop()
		return nil, fmt.Errorf("reading haproxy's notifications: %w", err)
	case <-h.exited:
		return nil, fmt.Errorf("haproxy exited before it was ready (%v):\n%s", waitErr, out)
	case <-time.After(readyTimeout):
		h.Stop()
		return nil, fmt.Errorf("haproxy not ready after %v:\n%s", readyTimeout, out)
	}
}

// Stop stops haproxy: SIGTERM to the master (which stops its workers at
// once), then SIGKILL to the process group if it has not exited within
// stopTimeout. It returns an error when SIGKILL was needed. A worker the
// master left behind as it exited gets SIGKILL too (the group outlives
// the master while one of its processes lives). Later calls do nothing.
func (h *HAProxy) Stop() error {
	var err error
	h.once.Do(func() {
		h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.exited:
			syscall.Kill(-h.Pid, syscall.SIGKILL) // ESRCH when none is left
		case <-time.After(stopTimeout):
			// The master is not reaped yet, so its group id is still
			// its own: the workers go with it.
			syscall.Kill(-h.Pid, syscall.SIGKILL)
			<-h.exited
			err = fmt.Errorf("haproxy did not stop within %v of SIGTERM; killed", stopTimeout)
		}
	})
	return err
}

// executable returns haproxy's path, installing Debian's package when it
// is missing and this process may.
var executable = sync.OnceValues(func() (string, error) {
	if p := find(); p != "" {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("haproxy not found on PATH or in /usr/sbin, and not root to install Debian's haproxy package")
	}
	if err := interop.AptInstall("haproxy"); err != nil {
		return "", fmt.Errorf("haproxy not found, and installing Debian's haproxy package failed: %w", err)
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", errors.New("Debian's haproxy package installed, but haproxy is not on PATH nor in /usr/sbin")
})

func find() string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	// Debian installs it in /usr/sbin, which a user's PATH may lack.
	if st, err := os.Stat("/usr/sbin/haproxy"); err == nil && st.Mode().IsRegular() {
		return "/usr/sbin/haproxy"
	}
	return ""
}
