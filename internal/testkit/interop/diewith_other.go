//go:build !linux

package interop

import "os/exec"

// StartWithTest starts cmd; only Linux has Pdeathsig, so here cmd does not
// die with the test process.
func StartWithTest(cmd *exec.Cmd) error { return cmd.Start() }
