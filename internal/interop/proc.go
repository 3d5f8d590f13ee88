package interop

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
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

// HostPID returns the process ID that the host's /proc gives process pid,
// which is this process (os.Getpid()) or one of its children, for fixtures
// that report process IDs to a test from inside a PID namespace of their own
// (transport.IsolationPIDNamespace), where os.Getpid() is 1. There /proc is
// still the host's, so /proc/self names this process by its host ID, and a
// child's /proc/PID/status has its IDs in every namespace (NSpid). Outside
// such a namespace, and where /proc cannot say, it returns pid.
func HostPID(pid int) int {
	link, err := os.Readlink("/proc/self")
	self, err2 := strconv.Atoi(link)
	if err != nil || err2 != nil || self == os.Getpid() {
		return pid
	}
	if pid == os.Getpid() {
		return self
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return pid
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var ppid int
		var nspid []string
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "PPid":
				ppid, _ = strconv.Atoi(strings.TrimSpace(v))
			case "NSpid":
				nspid = strings.Fields(v)
			}
		}
		if ppid == self && len(nspid) > 1 && nspid[len(nspid)-1] == strconv.Itoa(pid) {
			host, _ := strconv.Atoi(nspid[0])
			return host
		}
	}
	return pid
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
