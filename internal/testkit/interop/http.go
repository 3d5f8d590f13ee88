package interop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// startTimeout bounds the wait for a peer to listen. A Node server
	// starts in ≈ 250 ms alone, but `go test ./...` runs many packages on a
	// shared 2-core CI machine at once.
	startTimeout = 60 * time.Second
	// stopGrace is how long a peer has to exit after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// portAttempts bounds the retries when the free port we picked was taken
	// by someone else before the peer bound it.
	portAttempts = 5
)

// errPortTaken means the peer could not bind the port we chose for it.
var errPortTaken = errors.New("port taken before the peer could bind it")

// everythingListening matches server-everything's start line for both
// modes ("… listening on port N", "Server is running on port N").
var everythingListening = regexp.MustCompile(`(?i)(listening|running) on port (\d+)`)

// StartEverythingHTTP starts server-everything serving mode, "streamableHttp"
// or "sse", on a free port of 127.0.0.1 and returns its endpoint URL:
// http://127.0.0.1:PORT/mcp or http://127.0.0.1:PORT/sse. It returns once
// the server's own process listens on that port. The server runs in its own
// process group with a minimal environment ([Env] plus PORT); t.Cleanup
// stops the whole group (SIGTERM, then SIGKILL after a grace period).
func StartEverythingHTTP(t testing.TB, mode string) (url string) {
	t.Helper()
	var path string
	switch mode {
	case "streamableHttp":
		path = "/mcp"
	case "sse":
		path = "/sse"
	default:
		t.Fatalf("interop: StartEverythingHTTP: mode %q: want \"streamableHttp\" or \"sse\"", mode)
	}
	argv := append(Everything(t), mode)
	env := Env(t)
	port := StartHTTPPeer(t, "server-everything "+mode, everythingListening, func(port int) ([]string, []string) {
		return argv, slices.Concat(env, []string{"PORT=" + strconv.Itoa(port)})
	})
	return "http://127.0.0.1:" + strconv.Itoa(port) + path
}

// legacySSEListening matches GoSDKLegacySSE's start line
// ("MCP servers serving at 127.0.0.1:N").
var legacySSEListening = regexp.MustCompile(`serving at 127\.0\.0\.1:(\d+)`)

// StartGoSDKLegacySSE starts [GoSDKLegacySSE] on a free port of 127.0.0.1
// and returns the URL of its /greeter1 server (one tool, greet1 {name}),
// like [StartEverythingHTTP].
func StartGoSDKLegacySSE(t testing.TB) (url string) {
	t.Helper()
	bin := GoInstall(t, GoSDKLegacySSE)
	port := StartHTTPPeer(t, GoSDKLegacySSE.String(), legacySSEListening, func(port int) ([]string, []string) {
		return []string{bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port)}, Env(t)
	})
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/greeter1"
}

// goSDKEverythingListening matches GoSDKEverything's start line with -http
// ("MCP handler listening at 127.0.0.1:N").
var goSDKEverythingListening = regexp.MustCompile(`listening at 127\.0\.0\.1:(\d+)`)

// StartGoSDKEverythingHTTP starts [GoSDKEverything] serving Streamable HTTP
// on a free port of 127.0.0.1 and returns its URL (it serves every path),
// like [StartEverythingHTTP].
func StartGoSDKEverythingHTTP(t testing.TB) (url string) {
	t.Helper()
	bin := GoInstall(t, GoSDKEverything)
	port := StartHTTPPeer(t, GoSDKEverything.String(), goSDKEverythingListening, func(port int) ([]string, []string) {
		return []string{bin, "-http", "127.0.0.1:" + strconv.Itoa(port)}, Env(t)
	})
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
}

// StartHTTPPeer starts a peer that serves HTTP on a port it is told:
// command gives its argv and environment for a free port of 127.0.0.1. It
// returns the port once the peer printed a line matching listening (whose
// last group is the port) and its own process group holds the listener,
// retrying on another port when the one picked was taken meanwhile. The
// peer runs in its own process group; t.Cleanup stops the whole group
// (SIGTERM, then SIGKILL after a grace period). what names it in messages.
func StartHTTPPeer(t testing.TB, what string, listening *regexp.Regexp, command func(port int) (argv, env []string)) int {
	t.Helper()
	port, _ := StartHTTPPeerProcess(t, what, listening, command)
	return port
}

// StartHTTPPeerProcess is [StartHTTPPeer] that also returns the peer's
// process ID (the leader of its process group), for a benchmark that reads
// the peer's CPU time.
func StartHTTPPeerProcess(t testing.TB, what string, listening *regexp.Regexp, command func(port int) (argv, env []string)) (port, pid int) {
	t.Helper()
	var errs []error
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			t.Fatalf("interop: picking a free port: %v", err)
		}
		t0 := time.Now()
		argv, env := command(port)
		p, err := startPeer(argv, env, port, listening)
		if err == nil {
			t.Cleanup(func() {
				if err := p.stop(); err != nil {
					t.Errorf("interop: stopping %s: %v", what, err)
				}
			})
			t.Logf("%s on port %d, ready in %s", what, port, time.Since(t0).Round(time.Millisecond))
			return port, p.cmd.Process.Pid
		}
		errs = append(errs, err)
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatalf("interop: starting %s: %v", what, errors.Join(errs...))
	return 0, 0
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// peer is a running HTTP peer process.
type peer struct {
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd.Wait returned
	waitErr  error         // valid after exited
	out      *tailBuffer
	readDone chan struct{} // closed when the output reader finished
	stopOnce sync.Once
	stopErr  error
}

// startPeer starts argv with env and waits until it prints its listening
// line (a match of listening whose last group is port) and holds the
// listener on port.
func startPeer(argv, env []string, port int, listening *regexp.Regexp) (*peer, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	ownProcessGroup(cmd)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := StartWithTest(cmd); err != nil { // a peer listens: nothing else would end it
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close() // the child has its copy; EOF comes when the group is gone
	p := &peer{cmd: cmd, exited: make(chan struct{}), out: new(tailBuffer), readDone: make(chan struct{})}
	bound := make(chan struct{})
	go func() {
		defer close(p.readDone)
		defer pr.Close()
		var once sync.Once
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.out.WriteLine(line)
			if m := listening.FindStringSubmatch(line); m != nil && m[len(m)-1] == strconv.Itoa(port) {
				once.Do(func() { close(bound) })
			}
		}
		io.Copy(io.Discard, pr) // a line longer than the scanner's buffer
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()

	fail := func(err error) (*peer, error) {
		p.stop()
		<-p.readDone
		out := p.out.String()
		if strings.Contains(out, "already in use") || strings.Contains(out, "EADDRINUSE") {
			err = fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return nil, fmt.Errorf("%s (port %d): %w\noutput:\n%s", strings.Join(argv, " "), port, err, out)
	}
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	select {
	case <-bound:
	case <-p.exited:
		return fail(fmt.Errorf("exited before listening: %v", p.waitErr))
	case <-deadline.C:
		return fail(fmt.Errorf("no listening line within %s", startTimeout))
	}
	// The line is printed before the bind: dial until the port answers.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := WaitAccepting(addr, p.exited, deadline.C); err != nil {
		select {
		case <-p.exited: // waitErr is set once exited is closed
			err = fmt.Errorf("%w (%v)", err, p.waitErr)
		default:
		}
		return fail(err)
	}
	// The dial may have reached another process that had the port; only
	// our process holding the listener proves the server is up.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		owned, err := listenerOwned(cmd.Process.Pid, port)
		if err != nil {
			return fail(fmt.Errorf("checking who listens on port %d: %v", port, err))
		}
		if owned {
			return p, nil
		}
		select {
		case <-tick.C:
		case <-p.exited:
			return fail(fmt.Errorf("exited: %v", p.waitErr))
		case <-deadline.C:
			return fail(fmt.Errorf("%w: another process listens on it", errPortTaken))
		}
	}
}

// stop ends the peer's process group: SIGTERM, then SIGKILL after
// stopGrace. It is idempotent and returns once the process has been reaped.
func (p *peer) stop() error {
	p.stopOnce.Do(func() {
		pid := p.cmd.Process.Pid
		if err := signalGroup(pid, syscall.SIGTERM); err != nil {
			p.stopErr = err
		}
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
		}
		// Also reaps stragglers of the group after the leader has exited.
		if err := signalGroup(pid, syscall.SIGKILL); err != nil && p.stopErr == nil {
			p.stopErr = err
		}
		<-p.exited
	})
	return p.stopErr
}

// tailBuffer keeps the last lines of a process's output for error messages.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	size  int
}

// tailBytes bounds what a chatty peer can make us keep.
const tailBytes = 64 << 10

func (b *tailBuffer) WriteLine(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
	b.size += len(line) + 1
	for b.size > tailBytes && len(b.lines) > 1 {
		b.size -= len(b.lines[0]) + 1
		b.lines = b.lines[1:]
	}
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var buf bytes.Buffer
	for _, l := range b.lines {
		buf.WriteString("\t" + l + "\n")
	}
	return buf.String()
}
