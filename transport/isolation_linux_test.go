package transport_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/transport"
)

// A host killed with SIGKILL runs no code of its own: its child dies by
// Pdeathsig, and in a PID namespace everything the child started dies with
// it, a grandchild in a session of its own included. In a process group
// only the child is promised.
func TestCommandHostKilled(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			host := exec.Command(exe)
			host.Env = append(os.Environ(), childEnv+"=host", "GORACE=atexit_sleep_ms=0")
			if iso.noNS {
				host.Env = append(host.Env, noNamespaceEnv+"=1")
			}
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			host.Stderr = os.Stderr
			if err := interop.StartWithTest(host); err != nil {
				t.Fatal(err)
			}
			defer host.Process.Kill()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				host.Process.Kill()
				host.Wait()
				t.Fatalf("reading the host's report: %v (%q)", err, line)
			}
			var msg struct {
				Params struct {
					Pid, Grandchild, Setsid int
					Isolation               string
				}
			}
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				t.Fatalf("host report %q: %v", line, err)
			}
			p := msg.Params
			if !strings.HasPrefix(p.Isolation, iso.label) {
				host.Process.Kill()
				host.Wait()
				if !iso.noNS {
					t.Skipf("no PID namespace on this machine (the child got %s)", p.Isolation)
				}
				t.Fatalf("isolation = %q, want %q", p.Isolation, iso.label)
			}
			for _, pid := range []int{p.Pid, p.Grandchild, p.Setsid} {
				if gone(pid) {
					t.Fatalf("process %d not running before the host is killed (%+v)", pid, p)
				}
			}
			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			host.Wait()
			wait.Gone(t, p.Pid, "child")
			if iso.noNS {
				// Not promised: clean up what the process group leaves.
				syscall.Kill(-p.Pid, syscall.SIGKILL)
				syscall.Kill(p.Setsid, syscall.SIGKILL)
				return
			}
			wait.Gone(t, p.Grandchild, "grandchild in the child's group")
			wait.Gone(t, p.Setsid, "grandchild in a session of its own")
		})
	}
}

// Pdeathsig fires when the thread that started the child exits
// (go.dev/issue/27505), and the Go runtime ends a thread when a goroutine
// locked to it exits. A child started from such a goroutine must outlive
// it: children are started from a thread of the transport's own.
func TestCommandOutlivesStartingThread(t *testing.T) {
	checkLeaks(t)
	cmd := child(t, "server")
	type connected struct {
		cs    *mcp.ClientSession
		err   error
		tid   int
		again bool
	}
	var c connected
	// Our own thread is locked meanwhile, so that the goroutine below runs
	// on another one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for try := 0; ; try++ {
		done := make(chan connected)
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == os.Getpid() {
				// The main thread is never ended, only parked: try from
				// another one.
				runtime.UnlockOSThread()
				done <- connected{again: true}
				return
			}
			// Never unlocked: the thread ends with the goroutine.
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0.0.1"}, nil)
			cs, err := client.Connect(t.Context(), cmd, nil)
			done <- connected{cs: cs, err: err, tid: syscall.Gettid()}
		}()
		if c = <-done; !c.again {
			break
		}
		if try == 100 {
			t.Fatal("no goroutine ran on a thread other than the main one")
		}
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	cs := c.cs
	defer cs.Close()
	task := "/proc/self/task/" + strconv.Itoa(c.tid)
	wait.For(t, "the thread that asked for the start to end", func() (error, bool) {
		_, err := os.Stat(task)
		return err, errors.Is(err, os.ErrNotExist)
	})
	if got := callText(t, cs, "greet", map[string]any{"name": "still here"}); got != "Hi still here" {
		t.Errorf("greet = %q", got)
	}
	select {
	case <-cmd.Exited():
		t.Fatalf("child died with the thread that started it: %v", cmd.ExitErr())
	default:
	}
}

// TestCommandNamespaceRefused runs as root without capabilities in a user
// namespace whose limit on user namespaces is 0, where the kernel refuses
// a PID namespace both ways (directly, without CAP_SYS_ADMIN: EPERM; in a
// new user namespace: ENOSPC). The child then starts in a process group of its
// own, Isolation says why, and a grandchild that left the group is still
// stopped with it.
func TestCommandNamespaceRefused(t *testing.T) {
	const inner = "SWITCHBOARD_TRANSPORT_TEST_REFUSED"
	if os.Getenv(inner) == "" {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Skipf("needs unshare(1): %v", err)
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skipf("needs setpriv(1): %v", err)
		}
		if out, err := exec.Command(unshare, "--user", "--map-root-user", "true").CombinedOutput(); err != nil {
			t.Skipf("no user namespaces here: %v: %s", err, out)
		}
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		c := exec.Command(unshare, "--user", "--map-root-user", "sh", "-c",
			`echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --bounding-set=-all --inh-caps=-all "$@"`, "sh",
			exe, "-test.run=^TestCommandNamespaceRefused$", "-test.v", "-test.count=1")
		c.Env = append(os.Environ(), inner+"=1")
		out, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestCommandNamespaceRefused") {
			t.Errorf("in a user namespace without namespaces: %v\n%s", err, out)
		}
		t.Logf("%s", out)
		return
	}
	cmd := child(t, "setsid")
	conn, err := cmd.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	iso, refused := cmd.Isolation()
	if iso != transport.IsolationProcessGroup || refused == nil {
		t.Fatalf("Isolation() = %v, %v; want a process group and the refusal", iso, refused)
	}
	for _, want := range []string{"operation not permitted", "no space left on device"} {
		if !strings.Contains(refused.Error(), want) {
			t.Errorf("refusal %q does not say %q", refused, want)
		}
	}
	t.Logf("refused: %v", refused)
	var pids struct{ Pid, Grandchild, Setsid int }
	readReady(t, conn, &pids)
	pids.Pid, pids.Grandchild, pids.Setsid = hostPID(t, cmd, pids.Pid), hostPID(t, cmd, pids.Grandchild), hostPID(t, cmd, pids.Setsid)
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	wait.Gone(t, pids.Pid, "child")
	wait.Gone(t, pids.Grandchild, "grandchild in the child's group")
	wait.Gone(t, pids.Setsid, "grandchild in a session of its own")
}

// TestCommandPrivateProc: a stdio server cannot read the environment of
// another, where its secrets are (issue 23 §4): each has a /proc of its own,
// which shows only its own processes. The snooping child reads the other's
// /proc/PID/environ, scans every /proc/*/environ, and, as root of a mount
// namespace or of a user namespace of its own, unmounts /proc to see what
// is under it and mounts a procfs anew. It runs as the user the tests run
// as (root here), as root of a user namespace (a rootless container),
// which owns the child's mount namespace but may not unmount what hides the
// host's /proc, and as an unprivileged user, whose child gets a user
// namespace of its own.
func TestCommandPrivateProc(t *testing.T) {
	const inner = "SWITCHBOARD_TRANSPORT_TEST_PRIVATE_PROC"
	if os.Getenv(inner) != "" {
		snoopOther(t, true)
		return
	}
	t.Run("self", func(t *testing.T) { snoopOther(t, false) })
	reexec := func(t *testing.T, exe string, wrapper ...string) {
		t.Helper()
		args := append(wrapper, exe, "-test.run=^TestCommandPrivateProc$", "-test.v", "-test.count=1")
		c := exec.Command(args[0], args[1:]...)
		c.Env = append(os.Environ(), inner+"=1")
		out, err := c.CombinedOutput()
		t.Logf("%s", out)
		if strings.Contains(string(out), "--- SKIP: TestCommandPrivateProc") {
			t.Skip("skipped inside")
		}
		if err != nil || !strings.Contains(string(out), "--- PASS: TestCommandPrivateProc") {
			t.Errorf("%v: %v", wrapper, err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("root of a user namespace", func(t *testing.T) {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Skipf("needs unshare(1): %v", err)
		}
		if out, err := exec.Command(unshare, "--user", "--map-root-user", "true").CombinedOutput(); err != nil {
			t.Skipf("no user namespaces here: %v: %s", err, out)
		}
		reexec(t, exe, unshare, "--user", "--map-root-user")
	})
	t.Run("unprivileged", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("the tests run unprivileged already (self)")
		}
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skipf("needs setpriv(1): %v", err)
		}
		// A copy that nobody may run: the test binary's own folder is root's.
		dir, err := os.MkdirTemp("", "privateproc")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "transport.test")
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		reexec(t, bin, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")
	})
}

// snoopOther starts a server with a secret in its environment and a
// snooping child, and fails t if the snoop finds the secret. inside says
// it runs re-executed under another user or namespace.
func snoopOther(t *testing.T, inside bool) {
	canary := interop.NewCanary(t)
	holder := child(t, "server")
	holder.Env = transport.MinimalEnv(map[string]string{childEnv: "server", "GORACE": "atexit_sleep_ms=0", "API_TOKEN": canary})
	cs := connectClient(t, holder)
	defer cs.Close()
	// The secret is there to be found by whoever may read the host's /proc.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", holder.Pid())); err != nil || !strings.Contains(string(b), canary) {
		t.Fatalf("the holder's environment, as the host sees it, lacks the secret: %v", err)
	}
	snooper := child(t, "snoop")
	conn, err := snooper.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	readReady(t, conn, nil)
	params, _ := json.Marshal(map[string]any{"needle": canary, "pid": holder.Pid()})
	if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "snoop", Params: params}); err != nil {
		t.Fatal(err)
	}
	var got struct{ Report string }
	readReady(t, conn, &got)
	t.Logf("uid %d; the snooper's report:\n%s", os.Geteuid(), got.Report)
	if strings.Contains(got.Report, "FOUND") {
		iso, refused := snooper.Isolation()
		t.Errorf("a server found another's secret in its environment (isolation %v, refused: %v)", iso, refused)
	}
	if strings.Contains(got.Report, "scanned /proc: 0 environments") {
		t.Errorf("the snooper read no environment at all, not even its own: the probe proves nothing")
	}
	for _, c := range []*transport.Command{holder, snooper} {
		iso, refused := c.Isolation()
		if iso != transport.IsolationPrivateProc {
			if refused != nil {
				t.Skipf("no /proc of its own here: %v (%v)", refused, iso)
			}
			t.Errorf("Isolation() = %v, %v; want %v", iso, refused, transport.IsolationPrivateProc)
		}
	}
}
