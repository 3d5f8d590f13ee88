//go:build unix

package main

import (
	"os"
	"syscall"
)

// pollableStdin returns stdin made non-blocking, so that reads wait in Go's
// network poller instead of a blocking read(2), when stdin is a pipe or a
// socket (how MCP clients such as Claude Desktop start `serve --stdio`);
// otherwise (a terminal, a file) stdin itself.
//
// Why: in Go 1.26's runtime, a goroutine that enters a blocking system
// call just as a garbage collection stops the world can keep its P, and
// the stop-the-world then waits until the call returns (reentersyscall checks
// for a pending stop before it marks the goroutine as in a system call, and
// stopTheWorldWithSema retakes system-call Ps only once, before its wait
// loop; go1.27.3 has the same code). For a server blocked reading stdin,
// that is until the client's next message: docs/performance.md saw calls
// stall for 3–22 s in a Go stdio server this way. A read in the poller is
// no system call the world has to wait for.
//
// O_NONBLOCK belongs to the pipe's open file description, which only this
// process reads; a terminal is left alone, since a shell shares it.
func pollableStdin() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return os.Stdin
	}
	if mode := st.Mode & syscall.S_IFMT; mode != syscall.S_IFIFO && mode != syscall.S_IFSOCK {
		return os.Stdin
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	// NewFile sees the non-blocking descriptor and registers it with the
	// poller.
	return os.NewFile(0, "/dev/stdin")
}
