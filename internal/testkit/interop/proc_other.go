//go:build !unix

package interop

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
)

func ownProcessGroup(cmd *exec.Cmd) {}

func signalGroup(pid int, sig syscall.Signal) error {
	return fmt.Errorf("interop: process groups are not supported on %s", runtime.GOOS)
}
