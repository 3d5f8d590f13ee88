package transport

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// On Linux a child is started, where the kernel allows it, as the init of a
// PID namespace of its own: when it dies the kernel kills every process in
// the namespace, so nothing it started can outlive it (a grandchild that
// calls setsid leaves the process group, never the namespace). And every
// child gets Pdeathsig SIGKILL, so that it dies with the host process, even
// when that is killed with SIGKILL and runs no code of ours; with the
// namespace, everything it started dies then too. The namespace comes with
// a mount namespace whose /proc shows the child's processes only (see
// procinit_linux.go); where the kernel refuses that mount (a container
// whose /proc hides paths, a policy against mounts), the child gets the
// PID namespace alone, and the host's /proc.
//
// Where the kernel refuses a namespace (user namespaces disabled or
// restricted, as by Ubuntu's AppArmor policy since 23.10, or a container's
// seccomp profile) the child gets its own process group, as on other
// systems, plus what /proc allows: the descendants found when a stop begins
// are killed once the child is dead, process group or not (strays).
//
// Alternatives considered: a cgroup per server (cgroup.kill) needs a
// delegated, writable cgroup v2 tree, which a terminal session over SSH or a
// container rarely has, and kills nothing when the host dies; and making the
// host a child subreaper (PR_SET_CHILD_SUBREAPER) hands every orphan to the
// host process, whose Go runtime would have to reap what os/exec does not
// know, and protects nothing when the host dies.

// startChild starts a child made by newCmd: in a PID namespace of its own
// (with a /proc of its own where the kernel allows) when pidNamespace is
// set and the kernel allows it, else in a process group of its own.
func startChild(newCmd func() *exec.Cmd, pidNamespace bool) (started, error) {
	var refusals, procRefusals []string
	if pidNamespace {
		// Root may create a PID namespace directly; anyone else (and root
		// without CAP_SYS_ADMIN, in a container) needs a user namespace
		// first, which the same clone creates.
		attempts := []bool{true}
		if os.Geteuid() == 0 {
			attempts = []bool{false, true}
		}
		for _, userNS := range attempts {
			what := "a PID namespace"
			if userNS {
				what += " in a user namespace"
			}
			st, refusal, err := startPrivateProc(newCmd, userNS)
			if err != nil {
				return started{}, err
			}
			if refusal == nil {
				return st, nil
			}
			procRefusals = append(procRefusals, fmt.Sprintf("%s with a /proc of its own (%v)", what, refusal))
			cmd := newCmd()
			cmd.SysProcAttr = namespaceAttr(userNS)
			release, err := spawn(cmd)
			if err == nil {
				return started{cmd: cmd, iso: IsolationPIDNamespace, release: release,
					refused: errors.New("the kernel refused " + strings.Join(procRefusals, " and "))}, nil
			}
			errno, ok := namespaceRefusal(err)
			if !ok {
				return started{}, err
			}
			refusals = append(refusals, fmt.Sprintf("%s (%v)", what, errno))
		}
	}
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	release, err := spawn(cmd)
	if err != nil {
		// A failure that the namespaces' failures may have hidden (a
		// missing program fails each attempt the same way) is this one.
		return started{}, err
	}
	s := started{cmd: cmd, iso: IsolationProcessGroup, release: release}
	if len(refusals) > 0 {
		s.refused = errors.New("the kernel refused " + strings.Join(refusals, " and "))
	}
	return s, nil
}

// namespaceAttr is the SysProcAttr of a child in a PID namespace of its own,
// inside a user namespace of its own when userNS is set. The user namespace
// maps only our own user and group, to themselves: the child runs as who we
// are, and sees files of other owners as owned by the overflow user.
func namespaceAttr(userNS bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
		Cloneflags: syscall.CLONE_NEWPID,
	}
	if userNS {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		uid, gid := os.Geteuid(), os.Getegid()
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		// Without setgroups: an unprivileged process may map its group
		// only once setgroups is denied in the namespace.
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	return attr
}

// namespaceRefusal reports whether a start failed in a way a kernel that
// refuses the namespace fails: EPERM (no privilege, AppArmor, seccomp),
// EINVAL (a kernel built without them), ENOSPC or EUSERS (a namespace limit
// such as user.max_user_namespaces), ENOSYS (a seccomp filter), EACCES (the
// ID maps). A program that cannot run fails the next attempt too, and that
// error is the one reported.
func namespaceRefusal(err error) (syscall.Errno, bool) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return 0, false
	}
	switch errno {
	case syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.ENOSYS, syscall.EACCES:
		return errno, true
	}
	return 0, false
}

// spawner owns the OS thread every child is started from.
//
// Pdeathsig fires when the thread that started the child exits, not the
// process (go.dev/issue/27505), and the Go runtime ends a thread when a
// goroutine locked to it exits. So children are started by one goroutine
// locked to its thread that exits only when no child it started is left
// unreaped, and then takes the thread with it.
var spawner struct {
	mu   sync.Mutex
	live int         // children started and not yet reaped
	reqs chan func() // nil while no thread runs
}

// spawn starts cmd from the spawner's thread. release must be called once
// the child has been reaped.
func spawn(cmd *exec.Cmd) (release func(), err error) {
	spawner.mu.Lock()
	defer spawner.mu.Unlock()
	if spawner.reqs == nil {
		spawner.reqs = make(chan func())
		go spawnLoop(spawner.reqs)
	}
	done := make(chan error, 1)
	spawner.reqs <- func() { done <- cmd.Start() }
	if err := <-done; err != nil {
		stopSpawnerIfIdleLocked()
		return nil, err
	}
	spawner.live++
	var once sync.Once
	return func() {
		once.Do(func() {
			spawner.mu.Lock()
			defer spawner.mu.Unlock()
			spawner.live--
			stopSpawnerIfIdleLocked()
		})
	}, nil
}

func stopSpawnerIfIdleLocked() {
	if spawner.live == 0 && spawner.reqs != nil {
		close(spawner.reqs)
		spawner.reqs = nil
	}
}

func spawnLoop(reqs <-chan func()) {
	// Never unlocked: returning while locked ends the thread, which is safe
	// only because no child it started is left.
	runtime.LockOSThread()
	for start := range reqs {
		start()
	}
}

// terminate is the SIGTERM step of stopping the child.
//
// A PID namespace's init receives only the signals it has a handler for
// (pid_namespaces(7)), so SIGTERM, whose default action would kill any
// other process, does nothing to a child that has none. Such a child gets
// SIGKILL instead, which is what SIGTERM would have done; one that ignores
// SIGTERM on purpose waits for the next step, as elsewhere.
func (p *proc) terminate() {
	// Read before signalling: a handler may reset SIGTERM to the default
	// on its way out (the Go runtime does).
	kill := p.iso >= IsolationPIDNamespace && signalDefault(p.pid, syscall.SIGTERM)
	signalGroup(p.cmd.Process, syscall.SIGTERM)
	if kill {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
}

// signalDefault reports whether process pid neither catches nor ignores sig.
func signalDefault(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false // gone: nothing to do
	}
	bit := uint64(1) << (uint(sig) - 1)
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "SigIgn" && k != "SigCgt") {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil || mask&bit != 0 {
			return false
		}
	}
	return true
}

// strays are a child's descendants found when its stop began, kept by
// pidfd (os.FindProcess uses one where the kernel has them, since Linux
// 5.3), so that a signal reaches that process and never the next owner of
// its process ID. Only a child in a process group of its own has them: in a
// PID namespace the kernel kills every descendant.
type strays struct {
	procs map[int]*stray
}

type stray struct {
	p     *os.Process
	start uint64 // start time, in clock ticks since boot: with the pid, who it is
	done  bool   // gone, or stopped
}

// maxStrayRounds bounds the search for children the strays start while
// they are being stopped: each round stops the strays found so far, and a
// stopped process cannot fork, so one round normally ends it.
const maxStrayRounds = 8

// descendants returns the child's descendants, nil when there are none to
// look after.
func (p *proc) descendants() *strays {
	if p.iso != IsolationProcessGroup {
		return nil
	}
	s := &strays{procs: map[int]*stray{}}
	table := readProcs()
	parents := map[int]bool{p.pid: true}
	for grew := true; grew; {
		grew = false
		for pid, e := range table {
			if parents[e.ppid] && !parents[pid] {
				parents[pid] = true
				grew = true
				s.add(pid, e.start)
			}
		}
	}
	if len(s.procs) == 0 {
		return nil
	}
	return s
}

// add keeps process pid if it is still the one that started at start.
func (s *strays) add(pid int, start uint64) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	// Checked after the pidfd is open: from then on it names this process.
	if e, ok := readProc(pid); !ok || e.start != start {
		p.Release()
		return
	}
	s.procs[pid] = &stray{p: p, start: start}
}

// kill kills the strays still alive, and the children they started
// meanwhile: each round stops them (SIGSTOP), then looks for children of
// theirs not seen yet, until there are none; then all get SIGKILL.
func (s *strays) kill() {
	if s == nil {
		return
	}
	defer func() {
		for _, e := range s.procs {
			e.p.Release()
		}
	}()
	for round := 0; round < maxStrayRounds; round++ {
		alive := 0
		for _, e := range s.procs {
			if !e.done {
				e.done = true
				if e.p.Signal(syscall.SIGSTOP) == nil {
					alive++
				}
			}
		}
		if alive == 0 {
			break
		}
		table := readProcs()
		for pid, e := range table {
			parent, ok := s.procs[e.ppid]
			// The parent must still be the stray we know, not a process
			// that got its ID since.
			if _, seen := s.procs[pid]; seen || !ok || table[e.ppid].start != parent.start {
				continue
			}
			s.add(pid, e.start)
		}
	}
	for _, e := range s.procs {
		_ = e.p.Signal(syscall.SIGKILL)
	}
}

// procEntry is what /proc/PID/stat says of a process.
type procEntry struct {
	ppid  int
	start uint64
}

// readProcs reads every process's parent and start time from /proc.
func readProcs() map[int]procEntry {
	out := map[int]procEntry{}
	d, err := os.Open("/proc")
	if err != nil {
		return out
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if e, ok := readProc(pid); ok {
			out[pid] = e
		}
	}
	return out
}

func readProc(pid int) (procEntry, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	// pid (comm) state ppid pgrp ... starttime is the 22nd field; comm may
	// hold spaces and parentheses, so count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return procEntry{}, false // a zombie is dead already
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procEntry{}, false
	}
	return procEntry{ppid: ppid, start: start}, true
}

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

// pipeUnreadKnown: Linux tells how much of a pipe is unread from either
// end.
const pipeUnreadKnown = true

// pipeUnread returns how many bytes written to the pipe whose write end is
// w are still unread (FIONREAD, which Linux answers on the write end too).
func pipeUnread(w *os.File) (int64, bool) {
	rc, err := w.SyscallConn() // not Fd, which would make w blocking
	if err != nil {
		return 0, false
	}
	var n int32
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil || errno != 0 {
		return 0, false
	}
	return int64(n), true
}
