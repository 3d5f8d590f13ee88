package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// TestSoak is opt-in: SWITCHBOARD_SOAK=2m go test ./host -run TestSoak -v
//
// It makes calls from 8 goroutines for the given time across 4 servers, two
// of which exit every few seconds and are restarted, and checks that the
// only errors are the ones those exits must cause (the calls in flight when
// a server died, and calls that found it restarting past their timeout),
// that the steady servers never fail, and that memory stays flat.
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("SWITCHBOARD_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("opt-in: set SWITCHBOARD_SOAK to a duration, e.g. 2m")
	}
	var servers []config.Server
	for i := range 2 {
		s := fixture(t, fmt.Sprintf("steady%d", i))
		servers = append(servers, s)
		f := fixture(t, fmt.Sprintf("flaky%d", i), "-exit-after", fmt.Sprint(3000+1000*i))
		f.MaxRestarts = 1000 // flapping on purpose: keep restarting
		f.Timeout = 5 * time.Second
		servers = append(servers, f)
	}
	h, _ := start(t, servers, nil)

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	var calls, okCalls, lost, waitedOut, other atomic.Int64
	var steadyErrs sync.Map
	deadline := time.Now().Add(d)
	warm := time.Now().Add(min(d/4, 20*time.Second))
	var heapStart uint64
	var once sync.Once
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				if time.Now().After(warm) {
					once.Do(func() { heapStart = heap() })
				}
				s := servers[(g+i)%len(servers)]
				calls.Add(1)
				_, err := h.CallTool(context.Background(), "mcp_"+s.ID+"_echo", json.RawMessage(`{"text":"soak"}`), nil)
				switch {
				case err == nil:
					okCalls.Add(1)
				case s.ID[:6] == "steady":
					steadyErrs.Store(err.Error(), true)
					other.Add(1)
				case errors.Is(err, host.ErrUnavailable):
					lost.Add(1)
				case errors.Is(err, host.ErrTimeout):
					waitedOut.Add(1)
				default:
					other.Add(1)
					t.Logf("unexpected error: %v", err)
				}
			}
		})
	}
	wg.Wait()
	heapEnd := heap()
	var restarts int
	for _, st := range h.Servers() {
		restarts += st.Restarts
	}
	t.Logf("soak %v: %d calls, %d ok, %d lost to a dying server, %d timed out waiting for a restart, %d other; %d restarts; heap in use %d KiB after warm-up, %d KiB at the end",
		d, calls.Load(), okCalls.Load(), lost.Load(), waitedOut.Load(), other.Load(), restarts, heapStart>>10, heapEnd>>10)
	steadyErrs.Range(func(k, _ any) bool { t.Errorf("a steady server failed: %v", k); return true })
	if other.Load() > 0 {
		t.Errorf("%d errors that no fault explains", other.Load())
	}
	if restarts == 0 {
		t.Errorf("no restarts: the soak did not exercise supervision")
	}
	if heapStart > 0 && heapEnd > 2*heapStart+(4<<20) {
		t.Errorf("heap grew from %d KiB to %d KiB", heapStart>>10, heapEnd>>10)
	}
}
