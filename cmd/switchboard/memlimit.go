package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fractions of the memory available that the soft limit is set to (see
// the package doc): most of a container's limit, which is the process's
// own; half of a machine's RAM, which other processes share.
const (
	cgroupFraction = 0.9
	ramFraction    = 0.5
)

// noLimit is how cgroup v1 says "unlimited": a page-rounded
// MaxInt64; anything this large is no limit.
const noLimit = 1 << 62

// setMemoryLimit sets the soft memory limit memoryLimit derives, unless
// GOMEMLIMIT is set; it returns the limit and where it came from, or 0.
func setMemoryLimit() (int64, string) {
	limit, from := memoryLimit(os.LookupEnv, os.ReadFile)
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	return limit, from
}

// memoryLimit derives the soft memory limit: none when GOMEMLIMIT is set
// (the runtime reads it); cgroupFraction of the container's limit (cgroup
// v2 memory.max, or v1 memory.limit_in_bytes) when there is one; else
// ramFraction of the machine's RAM (/proc/meminfo's MemTotal); else none.
func memoryLimit(lookupEnv func(string) (string, bool), readFile func(string) ([]byte, error)) (int64, string) {
	if _, set := lookupEnv("GOMEMLIMIT"); set {
		return 0, "GOMEMLIMIT"
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := readFile(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			break // v2 without a limit
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= noLimit {
			break
		}
		return int64(float64(n) * cgroupFraction), f
	}
	b, err := readFile("/proc/meminfo")
	if err != nil {
		return 0, ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, ""
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0, ""
		}
		return int64(float64(kb*1024) * ramFraction), "/proc/meminfo"
	}
	return 0, ""
}
