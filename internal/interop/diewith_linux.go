package interop

import (
	"os/exec"
	"syscall"
)

// DieWithTest makes the kernel kill cmd's process (SIGKILL) when the test
// process dies, however it dies (its -timeout, a crash, SIGKILL), so that
// a test that does not get to clean up leaves no server running on a
// shared machine. It acts on Linux only (Pdeathsig), and only on cmd's own
// process, not on what that starts.
//
// Pdeathsig fires when the thread that started the process exits, and the
// Go runtime ends a thread when a goroutine locked to it returns: start cmd
// from a goroutine that is not locked to its thread (a test's own is not).
func DieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
