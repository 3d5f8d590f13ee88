package transport

import (
	"os"
	"syscall"
	"unsafe"
)

// waitExitedNoReap blocks until process pid has exited, without reaping it
// (waitid with WNOWAIT), so its process group ID stays reserved while we
// kill the rest of the group.
func waitExitedNoReap(pid int) {
	const (
		pPID    = 1         // P_PID
		wNoWait = 0x1000000 // WNOWAIT
	)
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}

// afterReap has nothing to do on Linux: the group was killed before reaping.
func afterReap(*os.Process) {}
