package interop

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listenerOwned reports whether a process in the group led by pid (we check
// pid itself and its children's fds via the group's /proc entries) holds
// the TCP socket listening on port. server-everything prints "listening"
// before it binds and exits if the port is taken, so a successful dial alone
// could be another process's listener.
func listenerOwned(pid, port int) (bool, error) {
	inodes := make(map[string]bool)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listenInodes(f, port, inodes); err != nil {
			return false, err
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false, err
	}
	for _, p := range procs {
		n, err := strconv.Atoi(p.Name())
		if err != nil || (n != pid && pgidOf(n) != pid) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return true, nil
			}
		}
	}
	return false, nil
}

// listenInodes adds the inodes of sockets in LISTEN state on port, from a
// /proc/net/tcp{,6} table, to inodes.
func listenInodes(table string, port int, inodes map[string]bool) error {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return nil // no IPv6
	}
	if err != nil {
		return err
	}
	defer f.Close()
	suffix := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(fields) < 10 || fields[3] != "0A" { // 0A is TCP_LISTEN
			continue
		}
		if strings.HasSuffix(fields[1], suffix) {
			inodes[fields[9]] = true
		}
	}
	return sc.Err()
}

func pgidOf(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 3 {
		return -1
	}
	n, err := strconv.Atoi(fields[2])
	if err != nil {
		return -1
	}
	return n
}
