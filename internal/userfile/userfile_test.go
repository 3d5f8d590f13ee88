//go:build unix

package userfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/userfile"
	"github.com/switchboardmcp/switchboard/internal/userfile/userfiletest"
)

// TestRead: a regular file (through a link too) is read; a named pipe
// (through a link too), /dev/zero behind a link, a folder and a file over
// the bound are refused at once with what they are, matching their
// sentinel; a missing file is fs.ErrNotExist.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "ok.toml")
	if err := os.WriteFile(regular, []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.toml")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{regular, link} {
		if b, err := userfile.Read(p, 6, "a configuration"); err != nil || string(b) != "x = 1\n" {
			t.Errorf("Read(%s) = %q, %v", filepath.Base(p), b, err)
		}
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { userfiletest.Release(fifo) })
	fifoLink := filepath.Join(dir, "fifo-link")
	zero := filepath.Join(dir, "zero")
	for target, l := range map[string]string{fifo: fifoLink, "/dev/zero": zero} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path, want string
		is         error
	}{
		{fifo, "read " + fifo + ": not a regular file: a named pipe", userfile.ErrNotRegular},
		{fifoLink, "read " + fifoLink + ": not a regular file: a named pipe", userfile.ErrNotRegular},
		{zero, "read " + zero + ": not a regular file: a device", userfile.ErrNotRegular},
		{dir, "read " + dir + ": not a regular file: a folder", userfile.ErrNotRegular},
		{regular, "read " + regular + ": 6 bytes is more than the 5 bytes a configuration may be", userfile.ErrTooLarge},
		{filepath.Join(dir, "missing"), "stat " + filepath.Join(dir, "missing") + ": no such file or directory", fs.ErrNotExist},
	} {
		userfiletest.Within(t, c.path, func() {
			_, err := userfile.Read(c.path, 5, "a configuration")
			if err == nil || err.Error() != c.want || !errors.Is(err, c.is) {
				t.Errorf("Read(%s) = %v; want %q, matching %v", c.path, err, c.want, c.is)
			}
		})
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 4 << 20: "4 MiB",
		4<<20 + 210<<10: "4.2 MiB", 100 << 20: "100 MiB", 3 << 30: "3 GiB",
	} {
		if got := userfile.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
