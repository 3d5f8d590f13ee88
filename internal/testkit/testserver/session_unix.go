//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// newSession makes cmd call setsid: it leaves our session and process group.
func newSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
