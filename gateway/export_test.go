package gateway

// FastCalls turns the fast path for 2026-07-28 tools/calls (fastcall.go)
// on or off, and returns how many requests it has served so far.
func FastCalls(on bool) (served int64) {
	fastOff.Store(!on)
	return fastServed.Load()
}
