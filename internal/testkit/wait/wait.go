// Package wait is how Switchboard's tests wait for what nothing announces:
// a process gone, a line in a log, a gate's form on a page, the goroutines
// back to where they were. [For] looks at once, then again with a short
// backoff, and after a bound fails the test, naming what it waited for and
// what it saw last: a test never sleeps to synchronise, and never hangs.
//
// Where something does announce itself (a channel, a line a process
// prints, an event), wait for that instead.
package wait

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// T is what For needs of a test: a *testing.T or *testing.B, or a
// testscript's *TestScript.
type T interface {
	Fatalf(format string, args ...any)
}

// Bound is how long For waits before it fails the test. A passing test
// never waits it out; it is long because the machines the suite runs on
// are loaded (two cores, the race detector, several packages at once).
const Bound = 30 * time.Second

// maxGap caps the backoff between looks: a condition met is seen within
// 10 ms, without looking more often than that for long.
const maxGap = 10 * time.Millisecond

// For calls look until it reports done, and returns the value it returned
// then. It looks at once, then after 1 ms, 2 ms, 4 ms, 8 ms and every
// 10 ms. After [Bound] it fails t (Fatalf), with what it waited for and
// the last value look returned ("waited 30s for the gate's form; last:
// <the page>"); a value whose String method is costly is formatted only
// then. look runs on the caller's goroutine, and may itself fail t.
func For[V any](t T, what string, look func() (V, bool)) V {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	return Within(t, Bound, what, look)
}

// Within is [For] with a bound of its own, for what takes longer (npm
// installing a package).
func Within[V any](t T, bound time.Duration, what string, look func() (V, bool)) V {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	end := time.Now().Add(bound)
	gap := time.Millisecond
	for {
		v, done := look()
		if done {
			return v
		}
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s; last: %v", bound, what, v)
			return v // for a T whose Fatalf returns
		}
		time.Sleep(gap) // the poll itself: nothing announces what look sees
		gap = min(2*gap, maxGap)
	}
}

// Goroutines waits until the process runs no more goroutines than before,
// as counted before the test started what it checks; it fails t with
// every goroutine's stack otherwise.
func Goroutines(t T, before int) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	For(t, fmt.Sprintf("the goroutines to end (%d before)", before), func() (stacks, bool) {
		n := runtime.NumGoroutine()
		return stacks(n), n <= before
	})
}

// stacks is a count of goroutines that prints as every goroutine's stack.
type stacks int

func (n stacks) String() string {
	buf := make([]byte, 1<<20)
	return fmt.Sprintf("%d goroutines:\n%s", int(n), buf[:runtime.Stack(buf, true)])
}

// Gone waits until process pid has exited: gone, or a zombie (a killed
// process dies asynchronously, and an orphan's zombie waits for a new
// parent that, in a container, may never reap it). It reads /proc, where
// the system has it; what names the process in the failure.
func Gone(t T, pid int, what string) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	For(t, fmt.Sprintf("%s (pid %d) to exit", what, pid), func() (string, bool) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return err.Error(), true
		}
		// pid (comm) S ...: the state follows the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		return s, i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
	})
}
