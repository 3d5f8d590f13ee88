//go:build !unix

package transport

import (
	"os"
	"os/exec"
	"syscall"
)

// Without process groups only the child itself can be stopped, and only by
// killing it.

func startChild(newCmd func() *exec.Cmd, _ bool) (started, error) {
	cmd := newCmd()
	if err := cmd.Start(); err != nil {
		return started{}, err
	}
	return started{cmd: cmd, iso: IsolationNone, release: func() {}}, nil
}

func signalGroup(p *os.Process, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = p.Kill()
	}
}

func (p *proc) terminate() {}

type strays struct{}

func (p *proc) descendants() *strays { return nil }

func (*strays) kill() {}

func waitExitedNoReap(int) {}

func afterReap(*os.Process) {}

// pipeUnreadKnown: elsewhere FIONREAD on a pipe's write end does not say
// what its reader has left (BSD answers for the end asked).
const pipeUnreadKnown = false

func pipeUnread(*os.File) (int64, bool) { return 0, false }
