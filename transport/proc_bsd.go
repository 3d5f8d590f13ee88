//go:build unix && !linux

package transport

import (
	"os"
	"os/exec"
	"syscall"
)

// startChild starts the child in a new process group whose ID is its PID,
// so that signals reach its descendants too.
func startChild(newCmd func() *exec.Cmd, _ bool) (started, error) {
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return started{}, err
	}
	return started{cmd: cmd, iso: IsolationProcessGroup, release: func() {}}, nil
}

// terminate is the SIGTERM step of stopping the child.
func (p *proc) terminate() { signalGroup(p.cmd.Process, syscall.SIGTERM) }

// strays would be the descendants that left the child's process group;
// they are not looked for here.
type strays struct{}

func (p *proc) descendants() *strays { return nil }

func (*strays) kill() {}

// waitExitedNoReap is not implemented here; afterReap kills the group after
// reaping instead, accepting the tiny window in which the group could be
// gone and its ID reused.
func waitExitedNoReap(int) {}

func afterReap(p *os.Process) { signalGroup(p, syscall.SIGKILL) }

// pipeUnreadKnown: elsewhere FIONREAD on a pipe's write end does not say
// what its reader has left (BSD answers for the end asked).
const pipeUnreadKnown = false

func pipeUnread(*os.File) (int64, bool) { return 0, false }
