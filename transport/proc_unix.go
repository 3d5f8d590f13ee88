//go:build unix

package transport

import (
	"os"
	"syscall"
)

// signalGroup sends sig to the child's whole process group. Errors (the
// group is already gone) are of no interest.
func signalGroup(p *os.Process, sig syscall.Signal) {
	_ = syscall.Kill(-p.Pid, sig)
}
