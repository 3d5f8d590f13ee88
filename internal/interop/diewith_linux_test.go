package interop_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/interop"
)

// dieWithTestHelper is set in the environment of TestDieWithTestHelper.
const dieWithTestHelper = "SWITCHBOARD_INTEROP_DIE_WITH_TEST"

// A process started with DieWithTest dies with the test process, even
// when that is killed with SIGKILL and cleans up nothing.
func TestDieWithTest(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDieWithTestHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), dieWithTestHelper+"=1")
	interop.DieWithTest(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived the test process that started it", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded
	}
}

// TestDieWithTestHelper is the test process TestDieWithTest kills.
func TestDieWithTestHelper(t *testing.T) {
	if os.Getenv(dieWithTestHelper) == "" {
		t.Skip("run by TestDieWithTest")
	}
	cmd := exec.Command("sleep", "1000")
	interop.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("started %d\n", cmd.Process.Pid)
	select {}
}
