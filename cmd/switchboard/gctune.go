package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The GC target while GOGC is not set (see the package doc): GOGC=400 lets
// a small heap grow 4× its live data between collections, which saves the
// CPU of collecting every few calls; on a large live heap (many idle
// sessions) the same factor is what costs memory, while a collection
// already comes only every so many megabytes. So the target follows the
// live heap: the growth allowed between collections is gcGrowth (or twice
// the live heap when larger), as a GOGC between minGOGC and maxGOGC.
// Not down to Go's 100: with 10,000 idle sessions it saved another 20–30 KiB
// a session but cost 17–86 % more CPU per call (docs/performance.md).
const (
	maxGOGC = 400
	minGOGC = 200
	// gcGrowth: 4× a live heap of 32 MiB, above what an idle serve holds
	// (docs/performance.md): up to there the target is GOGC=400.
	gcGrowth = 128 << 20
)

// gcPercent is the GOGC for a live heap of live bytes: 100·gcGrowth/live,
// within [minGOGC, maxGOGC].
func gcPercent(live uint64) int {
	if live == 0 {
		return maxGOGC
	}
	return int(max(minGOGC, min(maxGOGC, 100*gcGrowth/live)))
}

// gcTuner sets the GC target from the live heap after every collection.
type gcTuner struct {
	sample  []metrics.Sample
	percent int                         // the GOGC set last
	set     func(percent int) (old int) // debug.SetGCPercent
}

// tuneGC sets GOGC=maxGOGC, then follows the live heap after every
// collection.
func tuneGC() { newGCTuner(debug.SetGCPercent).start() }

func newGCTuner(set func(int) int) *gcTuner {
	return &gcTuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: maxGOGC, set: set}
}

// start sets GOGC=maxGOGC and arms a finalizer that sets itself again:
// it runs once per collection that finds its object unreachable, on the
// finalizer goroutine, and tunes.
func (t *gcTuner) start() {
	t.set(maxGOGC)
	runtime.SetFinalizer(&gcSentinel{}, t.collected)
}

// gcSentinel is the object whose finalizer tells the tuner of a
// collection; large enough not to share an allocation (the tiny
// allocator's 16 bytes) with anything else.
type gcSentinel struct{ _ [32]byte }

func (t *gcTuner) collected(s *gcSentinel) {
	t.tune()
	runtime.SetFinalizer(s, t.collected)
}

// tune sets the GOGC gcPercent gives for the live heap now, when it
// changed.
func (t *gcTuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := gcPercent(t.sample[0].Value.Uint64()); p != t.percent {
		t.percent = p
		t.set(p)
	}
}
