//go:build unix

package config

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/userfile/userfiletest"
)

// TestReadsOnlyRegularFiles: every reader of a configuration — the
// layered files (a well-known one too), LoadFile, an edit, another
// client's file — refuses a named pipe, a device and a file over its
// bound at once, naming the file and saying what it is (issue 24 §2:
// validate on a FIFO blocked forever, on a link to /dev/zero it grew to
// 15.8 GB, and a 100 MB file was read and accepted).
func TestReadsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	files := userfiletest.Files(t, dir, "config", ".toml", 4<<20, "a configuration")
	for path, want := range userfiletest.Files(t, dir, "claude", ".json", 64<<20, "another client's configuration") {
		files[path] = want
	}
	for path, want := range files {
		name := filepath.Base(path)
		check := func(what string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s(%s) = %v; want an error naming the file and saying %q", what, name, err, want)
			}
		}
		if strings.HasPrefix(name, "claude.") {
			userfiletest.Within(t, "ReadClientFile "+name, func() {
				_, err := ReadClientFile(UserFile(path, dir), "")
				check("ReadClientFile", err)
			})
			continue
		}
		userfiletest.Within(t, "Load "+name, func() {
			_, err := Load(&LoadOptions{File: path, Dir: dir, UserConfigDir: t.TempDir(), Getenv: getenv(nil)})
			check("Load", err)
		})
		userfiletest.Within(t, "LoadFile "+name, func() {
			_, err := LoadFile(path)
			check("LoadFile", err)
		})
		userfiletest.Within(t, "OpenEdit "+name, func() {
			_, err := OpenEdit(path, "")
			check("OpenEdit", err)
		})
	}

	// ./switchboard.toml, which may be missing, is refused all the same.
	work := t.TempDir()
	fifo := filepath.Join(work, "switchboard.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { userfiletest.Release(fifo) })
	userfiletest.Within(t, "Load ./switchboard.toml", func() {
		_, err := Load(&LoadOptions{Dir: work, UserConfigDir: t.TempDir(), Getenv: getenv(nil)})
		if ps := Problems(err); len(ps) != 1 || ps[0].Pos.File != fifo || ps[0].Msg != "cannot read: not a regular file: a named pipe" {
			t.Errorf("Load with a named pipe for ./switchboard.toml: %v", err)
		}
	})
}
