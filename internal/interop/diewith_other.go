//go:build !linux

package interop

import "os/exec"

// DieWithTest does nothing here: only Linux has Pdeathsig.
func DieWithTest(*exec.Cmd) {}
