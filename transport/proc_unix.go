//go:build unix

package transport

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in a new process group whose ID is its PID, so
// that signals reach its descendants too.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the child's whole process group. Errors (the
// group is already gone) are of no interest.
func signalGroup(p *os.Process, sig syscall.Signal) {
	_ = syscall.Kill(-p.Pid, sig)
}
