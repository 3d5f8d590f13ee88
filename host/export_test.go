package host

import "time"

// Test hooks for the package's external tests.

type BreakerForTest struct{ b breaker }

func NewBreakerForTest() *BreakerForTest                 { return &BreakerForTest{} }
func (t *BreakerForTest) Allow(now time.Time) error      { return t.b.allow(now) }
func (t *BreakerForTest) Record(now time.Time, ok bool)  { t.b.record(now, ok) }
func BackoffForTest(n int, jitter float64) time.Duration { return backoff(n, jitter) }

// PackageRunnerForTest is packageRunner: the runner's name and the package.
func PackageRunnerForTest(command string, args []string) (name, pkg string, ok bool) {
	r, ok := packageRunner(command, args)
	return r.name, r.pkg, ok
}
