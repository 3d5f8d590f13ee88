package interop

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// StartWithTest starts cmd so that the kernel kills its process (SIGKILL)
// when the test process dies, however it dies (its -timeout, a crash,
// SIGKILL): a test that does not get to clean up leaves no server running
// on a shared machine. It acts on Linux only (Pdeathsig), and only on
// cmd's own process, not on what that starts.
//
// Pdeathsig fires when the thread that started the process exits, not the
// process, and the Go runtime ends a thread when a goroutine locked to it
// returns: any goroutine (the go-sdk's, a driver's) that ran on the
// starting thread later could end it, and the server with it (a test's
// PostgreSQL died in mid-test that way). So cmd is started from one
// thread kept for the purpose, locked and never ended.
func StartWithTest(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawnOnce.Do(func() {
		spawns = make(chan spawn)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for s := range spawns {
				s.err <- s.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawns <- spawn{cmd, errc}
	return <-errc
}

type spawn struct {
	cmd *exec.Cmd
	err chan error
}

var (
	spawnOnce sync.Once
	spawns    chan spawn
)
