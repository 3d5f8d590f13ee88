package interop_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// dieWithTestHelper is set in the environment of TestDieWithTestHelper.
const dieWithTestHelper = "SWITCHBOARD_INTEROP_DIE_WITH_TEST"

// A process started with StartWithTest dies with the test process, even
// when that is killed with SIGKILL and cleans up nothing.
func TestStartWithTest(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDieWithTestHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), dieWithTestHelper+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := interop.StartWithTest(cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pid int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "started %d", &pid); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("the helper reported no pid: %v", sc.Err())
	}
	go io.Copy(io.Discard, out)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	defer func() {
		if t.Failed() {
			syscall.Kill(pid, syscall.SIGKILL) // it outlived the test process that started it
		}
	}()
	wait.Gone(t, pid, "the process the killed test process started")
}

// TestDieWithTestHelper is the test process TestStartWithTest kills.
func TestDieWithTestHelper(t *testing.T) {
	if os.Getenv(dieWithTestHelper) == "" {
		t.Skip("run by TestStartWithTest")
	}
	cmd := exec.Command("sleep", "1000")
	if err := interop.StartWithTest(cmd); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("started %d\n", cmd.Process.Pid)
	select {}
}

// TestStartWithTestOutlivesItsCaller: the process outlives the thread of
// the goroutine that started it (a goroutine locked to its thread that
// returns ends the thread, which Pdeathsig takes for the parent's death):
// a test's PostgreSQL died in mid-test that way.
func TestStartWithTestOutlivesItsCaller(t *testing.T) {
	// The runtime never ends the main thread (it parks it instead): a
	// goroutine that landed there is tried again, and the next one cannot
	// land there, which is parked for good.
	var cmd *exec.Cmd
	var exited chan error
	var tid int
	for range 2 {
		cmd = exec.Command("sleep", "1000")
		started := make(chan int, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			if err := interop.StartWithTest(cmd); err != nil {
				t.Error(err)
			}
			started <- syscall.Gettid()
		}()
		tid = <-started
		if cmd.Process == nil {
			t.FailNow()
		}
		exited = make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if tid != os.Getpid() {
			break
		}
		cmd.Process.Kill()
		<-exited
	}
	if tid == os.Getpid() {
		t.Fatal("the locked goroutines ran on the main thread twice")
	}
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	task := fmt.Sprintf("/proc/self/task/%d", tid)
	wait.For(t, fmt.Sprintf("the locked goroutine's thread %d to end", tid), func() (error, bool) {
		_, err := os.Stat(task)
		return err, os.IsNotExist(err)
	})
	// Pdeathsig's SIGKILL, had it been sent, is delivered as the thread
	// ends: Wait would return at once.
	select {
	case err := <-exited:
		exited <- err // for the deferred kill
		t.Fatalf("the process died with the thread of the goroutine that started it: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
}
