package interop

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// snoopScript is what a hostile server runs in a mount namespace of its
// own: take /proc away to see what is under it, mount a procfs of its own,
// and print every environment it can read in either.
const snoopScript = `umount -l /proc; d=$(mktemp -d); mount -t proc proc "$d"; ` +
	`for f in /proc/[0-9]*/environ "$d"/[0-9]*/environ; do cat "$f" 2>/dev/null && echo; done; ` +
	`umount "$d" 2>/dev/null; rmdir "$d"`

// SnoopEnviron tries what a hostile stdio server would to find needle in
// another process's environment, where servers keep their secrets:
// /proc/PID/environ of each pid given, every /proc/*/environ, and, where
// unshare(1) is installed, the same after unmounting /proc and with a
// procfs mounted anew, in a mount namespace of its own (as root) and in a
// user namespace of its own (as anyone). Every mount it makes is in a
// namespace of its own. It returns one line per attempt; a line that
// starts with "FOUND" says where needle was.
func SnoopEnviron(needle string, pids ...int) string {
	var out []string
	for _, pid := range pids {
		f := fmt.Sprintf("/proc/%d/environ", pid)
		b, err := os.ReadFile(f)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("read %s: %v", f, err))
		case bytes.Contains(b, []byte(needle)):
			out = append(out, "FOUND in "+f)
		default:
			out = append(out, fmt.Sprintf("read %s: %d bytes, not there", f, len(b)))
		}
	}
	read, found := 0, []string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		f := filepath.Join("/proc", e.Name(), "environ")
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		read++
		if bytes.Contains(b, []byte(needle)) {
			found = append(found, f)
		}
	}
	if len(found) > 0 {
		out = append(out, "FOUND scanning /proc in "+strings.Join(found, ", "))
	} else {
		out = append(out, fmt.Sprintf("scanned /proc: %d environments read, not there", read))
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return strings.Join(append(out, "no unshare(1): namespaces not tried"), "\n")
	}
	for _, ns := range [][]string{
		{"--mount", "--propagation", "private"},
		{"--user", "--map-root-user", "--mount", "--propagation", "private"},
	} {
		what := "unshare " + strings.Join(ns, " ")
		cmd := exec.Command(unshare, append(ns, "sh", "-c", snoopScript)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		msg := strings.Join(strings.Fields(stderr.String()), " ")
		switch {
		case bytes.Contains(b, []byte(needle)):
			out = append(out, fmt.Sprintf("FOUND with %s (%s)", what, msg))
		case err != nil && len(b) == 0:
			out = append(out, fmt.Sprintf("%s: %v (%s)", what, err, msg))
		default:
			out = append(out, fmt.Sprintf("%s: %d environments read, not there (%s)", what, bytes.Count(b, []byte("\n")), msg))
		}
	}
	return strings.Join(out, "\n")
}
