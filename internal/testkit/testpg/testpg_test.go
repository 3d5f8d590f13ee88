package testpg

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestStart: the server takes connections on its socket only (no TCP),
// runs SQL, and is gone, with its folder, when the test ends.
func TestStart(t *testing.T) {
	var dir string
	var pid int
	t.Run("server", func(t *testing.T) {
		u := Start(t)
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		dir = pu.Query().Get("host")
		ctx := context.Background()
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var listen string
		if err := c.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil || listen != "" {
			t.Errorf("listen_addresses = %q, %v; want none", listen, err)
		}
		if _, err := c.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (42)"); err != nil {
			t.Fatal(err)
		}
		var x int
		if err := c.QueryRow(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
			t.Errorf("SELECT x = %d, %v", x, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if pid, err = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err != nil {
			t.Fatal(err)
		}
	})
	if dir == "" || pid == 0 {
		t.FailNow()
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postgres (pid %d) still there after the test: kill 0 = %v", pid, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the server's folder %s is still there: %v", dir, err)
	}
}

// diesHelper is set in the environment of TestDiesWithTestHelper.
const diesHelper = "SWITCHBOARD_TESTPG_DIES_HELPER"

// TestDiesWithTest: a test process killed before its cleanups run (its
// -timeout, SIGKILL) leaves no postgres running. Before, the server of a
// timed-out test ran on, with its folder in /tmp.
func TestDiesWithTest(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux's")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiesWithTestHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), diesHelper+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "postgres %d %s", &pid, &dir); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("the helper reported no postgres: %v", sc.Err())
	}
	go io.Copy(io.Discard, out)
	defer os.RemoveAll(dir) // the helper's cleanups never run
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// No event says when the kernel has delivered the signal and
	// postgres has exited.
	defer func() {
		if t.Failed() {
			syscall.Kill(pid, syscall.SIGINT) // it outlived the test process that started it
		}
	}()
	wait.Gone(t, pid, "the postgres of the killed test process")
}

// TestDiesWithTestHelper is the test process TestDiesWithTest kills.
func TestDiesWithTestHelper(t *testing.T) {
	if os.Getenv(diesHelper) == "" {
		t.Skip("run by TestDiesWithTest")
	}
	u, err := url.Parse(Start(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := u.Query().Get("host")
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("postgres %s %s\n", strings.SplitN(string(b), "\n", 2)[0], dir)
	select {}
}

// TestRestart: a restart ends every session (a connection made before
// fails), keeps the data, and the server takes connections again at the
// same URL.
func TestRestart(t *testing.T) {
	s := StartServer(t)
	ctx := context.Background()
	before, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close(ctx)
	if _, err := before.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	if _, err := before.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a session from before the restart still answers")
	}
	after, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close(ctx)
	var x int
	if err := after.QueryRow(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 7 {
		t.Errorf("after the restart: SELECT x = %d, %v; want 7", x, err)
	}
}
