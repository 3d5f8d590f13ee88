//go:build !unix

package transport

import (
	"os"
	"syscall"
)

// Without process groups only the child itself can be stopped, and only by
// killing it.

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = p.Kill()
	}
}

func waitExitedNoReap(int) {}

func afterReap(*os.Process) {}
