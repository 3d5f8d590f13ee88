package host

// growStack grows the calling goroutine's stack, in one step, to about what
// a tools/call needs. A call often runs on a goroutine started for it (the
// go-sdk starts one per incoming request, so every call through the gateway
// does), whose stack starts at 2 KiB; argument validation and the SDK's
// encoding then used to grow it three times, each growth copying the stack
// and walking every frame on it, deeper each time. That cost more than the
// validation itself (docs/performance.md). Growing once here, while the
// stack is shallow, is cheap; on a goroutine whose stack is already large
// enough it costs a function call.
//
//go:noinline
func growStack() {
	var buf [callStackBytes]byte
	if growStackNever {
		// Never runs; it keeps buf, and so the frame, from being
		// optimized away.
		for i := range buf {
			buf[i] = byte(i)
		}
		growStackSink = buf[len(buf)-1]
	}
}

// callStackBytes is the frame growStack asks for: with what is already on
// the stack, the runtime grows a 2 KiB stack straight to 16 KiB.
const callStackBytes = 8 << 10

var (
	growStackNever bool
	growStackSink  byte
)
