//go:build unix && !linux

package transport

import (
	"os"
	"syscall"
)

// waitExitedNoReap is not implemented here; afterReap kills the group after
// reaping instead, accepting the tiny window in which the group could be
// gone and its ID reused.
func waitExitedNoReap(int) {}

func afterReap(p *os.Process) { signalGroup(p, syscall.SIGKILL) }
