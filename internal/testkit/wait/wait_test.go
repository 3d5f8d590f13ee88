package wait_test

import (
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// fakeT records a failure instead of ending the test.
type fakeT struct{ failed string }

func (f *fakeT) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

// TestFor: For returns the value of the look that says done, seen within
// 10 ms of the condition holding, after looks that back off from 1 ms.
func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ready := start.Add(500 * time.Millisecond)
		var looks []time.Duration
		got := wait.For(t, "the count to reach 3", func() (int, bool) {
			looks = append(looks, time.Since(start))
			return len(looks), !time.Now().Before(ready)
		})
		if took := time.Since(start); took < 500*time.Millisecond || took > 510*time.Millisecond {
			t.Errorf("For returned %v after the start, want within 10 ms of 500ms", took)
		}
		if got != len(looks) {
			t.Errorf("For = %d, want the last look's value %d", got, len(looks))
		}
		want := []time.Duration{0, 1 * time.Millisecond, 3 * time.Millisecond, 7 * time.Millisecond, 15 * time.Millisecond, 25 * time.Millisecond}
		if !slices.Equal(looks[:len(want)], want) {
			t.Errorf("looks at %v, want them to start at %v", looks[:len(want)], want)
		}
	})
}

// TestForFails: a condition that never holds fails the test after the
// bound, naming what was waited for and the last value seen, after a
// number of looks the backoff bounds.
func TestForFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f fakeT
		looks := 0
		start := time.Now()
		wait.Within(&f, time.Second, "the gate's form", func() (string, bool) {
			looks++
			return fmt.Sprintf("page %d", looks), false
		})
		if took := time.Since(start); took < time.Second || took > time.Second+10*time.Millisecond {
			t.Errorf("failed after %v, want the bound, 1s", took)
		}
		if want := fmt.Sprintf("waited 1s for the gate's form; last: page %d", looks); f.failed != want {
			t.Errorf("failure %q, want %q", f.failed, want)
		}
		if looks < 90 || looks > 110 {
			t.Errorf("%d looks in 1s, want about 100 (every 10 ms)", looks)
		}
	})
}

// TestGoroutines: Goroutines returns once the goroutines started have
// ended, and fails with every stack while more run than it is told. (The
// failure is asked for with 0 before: other tests' goroutines may end
// meanwhile.)
func TestGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := runtime.NumGoroutine()
		stop := make(chan struct{})
		go func() { <-stop }()
		var f fakeT
		wait.Goroutines(&f, 0)
		if !strings.Contains(f.failed, "waited 30s for the goroutines to end (0 before)") || !strings.Contains(f.failed, "wait_test.TestGoroutines.func1.1") {
			t.Errorf("failure with a goroutine left: %q, want the wait and the goroutine's stack", f.failed)
		}
		close(stop)
		f = fakeT{}
		wait.Goroutines(&f, before)
		if f.failed != "" {
			t.Errorf("failure with none left: %s", f.failed)
		}
	})
}

// TestGone: Gone fails while the process runs, and returns once it is a
// zombie, and once it is reaped.
func TestGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	synctest.Test(t, func(t *testing.T) {
		var f fakeT
		wait.Gone(&f, pid, "sleep")
		if want := fmt.Sprintf("waited 30s for sleep (pid %d) to exit; last: %d (sleep) S", pid, pid); !strings.HasPrefix(f.failed, want) {
			t.Errorf("failure while it runs: %q, want %q...", f.failed, want)
		}
	})
	cmd.Process.Kill()
	wait.Gone(t, pid, "sleep, killed and not reaped")
	cmd.Wait()
	wait.Gone(t, pid, "sleep, reaped")
}
