//go:build unix

package daemon

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUs reports whether fi is owned by this process's user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
