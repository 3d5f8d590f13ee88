package transport

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// A child in a PID namespace of its own still sees the host's /proc, and
// through it every process of the same user: their command lines and their
// environments (/proc/PID/environ), where other servers keep their secrets.
// A /proc of its own is a procfs mounted for its PID namespace, in a mount
// namespace of its own, which shows the child and what it starts and
// nothing else.
//
// That mount must happen inside the child, between clone and exec, which
// os/exec cannot do. So the child is first this very program (/proc/self/exe,
// the same binary whatever became of its file), started with argv[0]
// procInitArg0: the package's init function sees that before main runs,
// mounts the new /proc and execs the program the child was meant to be, in
// the same process, so that the program is the PID namespace's init with
// every guarantee of IsolationPIDNamespace (Pdeathsig and the process group
// survive exec). What happened comes back on a pipe (fd 3, closed on exec):
// nothing when the program was executed; otherwise the step that failed and
// its errno, and the helper exits.
//
// Alternatives considered: a separate helper program (one more file to
// install and find, and to keep in step with this one); unshare(1)
// --mount-proc (util-linux, absent from minimal images, and it stays the
// namespace's init as a parent instead of becoming the server); mounting
// from the parent into the child's namespace (setns is refused to a
// multithreaded process such as any Go program); procfs's hidepid=
// (a mount option for the whole host, which Switchboard does not own).

// procInitArg0 is argv[0] of a child that is to mount its own /proc
// before it becomes the program it was started for.
const procInitArg0 = "switchboard-transport-procinit"

// selfExe is what the child executes first: this program.
const selfExe = "/proc/self/exe"

// Linux capabilities and prctl options that package syscall lacks.
const (
	capSetpcap        = 8
	capSysAdmin       = 21
	prCapbsetDrop     = 24
	prCapAmbient      = 47
	prCapAmbientLower = 3
	capVersion3       = 0x20080522
)

func init() {
	// os.Args is set before any package's init runs. PID 1: only ever as
	// the init of the namespace just made for it, never by accident.
	if len(os.Args) < 4 || os.Args[0] != procInitArg0 || os.Getpid() != 1 {
		return
	}
	procInit(os.Args[1] == "ambient", os.Args[2], os.Args[3:])
}

// procInit runs in the child: it mounts a procfs of its PID namespace on
// /proc and executes path with argv and its own environment, or reports
// why not on fd 3 and exits. ambient says that the parent raised
// CAP_SYS_ADMIN and CAP_SETPCAP as ambient capabilities for it (a child in
// a user namespace whose user is not root there has no capability after
// exec otherwise); they are lowered again before the program runs.
func procInit(ambient bool, path string, argv []string) {
	// Capabilities belong to a thread, and exec keeps the calling one's.
	runtime.LockOSThread()
	syscall.CloseOnExec(3)
	status := os.NewFile(3, "status")
	fail := func(step string, err error) {
		errno, ok := err.(syscall.Errno)
		if !ok {
			errno = syscall.EINVAL
		}
		fmt.Fprintf(status, "%s %d", step, int(errno))
		// Not os.Exit: a race-enabled binary would sleep a second first.
		syscall.Exit(1)
	}
	// A shared / would carry the mounts below back to the host's /proc.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fail("propagation", err)
	}
	// Where the host is root outside a user namespace, the host's /proc
	// can be taken away altogether; in a user namespace it is locked
	// (mount_namespaces(7)) and stays, under the new one.
	hostProcGone := syscall.Unmount("/proc", syscall.MNT_DETACH) == nil
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		fail("proc", err)
	}
	if !hostProcGone {
		// A program with CAP_SYS_ADMIN in its user namespace could
		// unmount the new /proc and find the host's under it: it must not
		// have it. Dropped from the bounding set, exec grants it to no
		// one, root of the namespace included. (A user namespace it makes
		// itself locks the new /proc in place.)
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, capSysAdmin, 0); e != 0 {
			fail("capabilities", e)
		}
	}
	if ambient {
		for _, c := range []uintptr{capSysAdmin, capSetpcap} {
			if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientLower, c, 0, 0, 0); e != 0 {
				fail("capabilities", e)
			}
		}
		// os/exec added them to the inheritable set to raise them.
		if err := dropInheritable(capSysAdmin, capSetpcap); err != nil {
			fail("capabilities", err)
		}
	}
	err := syscall.Exec(path, argv, os.Environ())
	fail("exec", err)
}

// dropInheritable removes caps from the calling thread's inheritable
// capability set.
func dropInheritable(caps ...uint) error {
	hdr := struct {
		version uint32
		pid     int32
	}{version: capVersion3}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return e
	}
	for _, c := range caps {
		data[c/32].inheritable &^= 1 << (c % 32)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return e
	}
	return nil
}

// privateProcRefused remembers, for starts without and with a user
// namespace, why the kernel refused a child its own /proc: it will refuse
// the next one for the same reason (the mount table and the kernel's
// policy do not change under a running host), and asking again would cost
// each start a run of this program.
var privateProcRefused [2]struct {
	sync.Mutex
	reason error
}

func refusedBefore(userNS bool) error {
	r := &privateProcRefused[boolIndex(userNS)]
	r.Lock()
	defer r.Unlock()
	return r.reason
}

func rememberRefusal(userNS bool, reason error) {
	r := &privateProcRefused[boolIndex(userNS)]
	r.Lock()
	defer r.Unlock()
	r.reason = reason
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startPrivateProc starts the child made by newCmd as the init of a PID
// namespace and a mount namespace of its own, inside a user namespace of
// its own when userNS is set, through procInit. refusal says why the
// kernel refused it (nothing was left running then); err is a failure that
// any other way of starting the child would meet too (its program cannot
// be executed).
func startPrivateProc(newCmd func() *exec.Cmd, userNS bool) (st started, refusal, err error) {
	if reason := refusedBefore(userNS); reason != nil {
		return started{}, reason, nil
	}
	if _, err := os.Stat(selfExe); err != nil {
		return started{}, fmt.Errorf("no /proc/self/exe to run: %w", err), nil
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return started{}, nil, err
	}
	defer statusR.Close()
	cmd := newCmd()
	target := cmd.Path
	mode := "-"
	if userNS {
		mode = "ambient"
	}
	cmd.Args = append([]string{procInitArg0, mode, target}, cmd.Args...)
	cmd.Path = selfExe
	cmd.ExtraFiles = []*os.File{statusW}
	attr := namespaceAttr(userNS)
	attr.Cloneflags |= syscall.CLONE_NEWNS
	if userNS {
		attr.AmbientCaps = []uintptr{capSysAdmin, capSetpcap}
	}
	cmd.SysProcAttr = attr
	release, err := spawn(cmd)
	statusW.Close()
	if err != nil {
		if errno, ok := namespaceRefusal(err); ok {
			return started{}, errno, nil
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == selfExe {
			return started{}, err, nil // this program, not the child's, cannot run
		}
		return started{}, nil, err
	}
	msg, _ := io.ReadAll(statusR)
	if len(msg) == 0 {
		return started{cmd: cmd, iso: IsolationPrivateProc, release: release}, nil, nil
	}
	cmd.Wait()
	release()
	step, num, _ := strings.Cut(string(msg), " ")
	n, convErr := strconv.Atoi(num)
	if convErr != nil {
		return started{}, fmt.Errorf("the child said %q", msg), nil
	}
	errno := syscall.Errno(n)
	if step == "exec" {
		// What starting the program without the helper says.
		return started{}, nil, &fs.PathError{Op: "fork/exec", Path: target, Err: errno}
	}
	refusal = fmt.Errorf("%s: %w", procStep(step), errno)
	rememberRefusal(userNS, refusal)
	return started{}, refusal, nil
}

// procStep names a step of procInit for a refusal.
func procStep(step string) string {
	switch step {
	case "propagation":
		return "making its mounts private"
	case "proc":
		return "mounting /proc"
	case "capabilities":
		return "dropping CAP_SYS_ADMIN"
	}
	return step
}
