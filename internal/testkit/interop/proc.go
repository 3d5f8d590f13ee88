package interop

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Children returns the live child processes of pid (zombies excluded), each
// described as "PID (comm)", for tests that check nothing is left behind.
// It reads /proc: on systems without it the answer is empty.
func Children(pid int) map[int]string {
	out := map[int]string{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			out[p] = s[:i+1]
		}
	}
	return out
}

// HostPIDIn returns the process ID that the host's /proc gives the process
// that the PID namespace of process init (a host PID, such as
// transport.Command.Pid) calls pid: fixtures in a PID namespace of their own
// (transport.IsolationPIDNamespace) know only the IDs of their namespace,
// and with a /proc of their own (transport.IsolationPrivateProc) cannot
// learn any other. The process must still run. When init is in this
// process's PID namespace, and on systems without /proc, it returns pid.
func HostPIDIn(init, pid int) (int, error) {
	if runtime.GOOS != "linux" {
		return pid, nil
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", init))
	if err != nil {
		return 0, fmt.Errorf("the PID namespace of process %d: %w", init, err)
	}
	if self, err := os.Readlink("/proc/self/ns/pid"); err == nil && self == ns {
		return pid, nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	want := strconv.Itoa(pid)
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); err != nil || l != ns {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if f := strings.Fields(v); len(f) > 1 && f[len(f)-1] == want {
					return strconv.Atoi(f[0])
				}
			}
		}
	}
	return 0, fmt.Errorf("no process %d in the PID namespace of process %d", pid, init)
}

// WaitAccepting dials addr until it accepts a connection, for servers that
// announce their port before they bind. It gives up with an error when
// exited is closed (the process died, e.g. because the port was taken) or
// when deadline fires. A ticker paces the dials: a refused dial returns at
// once.
func WaitAccepting(addr string, exited <-chan struct{}, deadline <-chan time.Time) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-tick.C:
		case <-exited:
			return fmt.Errorf("exited before accepting connections on %s", addr)
		case <-deadline:
			return fmt.Errorf("%s not accepting connections in time: %v", addr, err)
		}
	}
}
