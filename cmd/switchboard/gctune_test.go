package main

import (
	"runtime"
	"sync"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestGCPercent: GOGC=400 up to a live heap of 32 MiB, then the growth
// gcGrowth allows, down to 200 from 64 MiB.
func TestGCPercent(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int
	}{
		{0, 400},
		{8 << 20, 400},
		{32 << 20, 400},
		{48 << 20, 266},
		{64 << 20, 200},
		{128 << 20, 200},
		{1 << 30, 200},
	} {
		if got := gcPercent(tt.live); got != tt.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", tt.live>>20, got, tt.want)
		}
	}
}

// TestTuneGC: the tuner sets GOGC=400 at once, and after a collection
// with a large live heap what gcPercent says for it; after a collection
// that freed it, 400 again.
func TestTuneGC(t *testing.T) {
	var mu sync.Mutex
	var set []int
	tu := newGCTuner(func(p int) int {
		mu.Lock()
		defer mu.Unlock()
		set = append(set, p)
		return 0
	})
	tu.start()
	if got := tu.percent; got != maxGOGC || len(set) != 1 || set[0] != maxGOGC {
		t.Fatalf("at start: set %v, want [%d]", set, maxGOGC)
	}
	last := func() int {
		mu.Lock()
		defer mu.Unlock()
		if len(set) == 0 {
			return 0
		}
		return set[len(set)-1]
	}
	live := make([][]byte, 0, 256)
	for range 256 { // 256 MiB live, in pointers-free blocks
		live = append(live, make([]byte, 1<<20))
	}
	wait.For(t, "the tuner to lower GOGC for a live heap of 256 MiB", func() (string, bool) {
		runtime.GC()
		return "", last() == minGOGC
	})
	runtime.KeepAlive(live)
	live = nil
	wait.For(t, "the tuner to raise GOGC again once the heap is freed", func() (string, bool) {
		runtime.GC()
		return "", last() == maxGOGC
	})
}
