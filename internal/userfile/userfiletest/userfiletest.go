//go:build unix

// Package userfiletest makes what a path a person names may be but a file
// read with userfile.Read may not, for the tests of its readers.
package userfiletest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Files makes, in dir, a named pipe nobody writes to, a symbolic link to
// /dev/null (a device that would read as an empty file) and a regular
// file of limit+1 bytes, each named base plus ".fifo", ".dev" or ".big"
// and then ext. It returns each path with what its error must say, what
// naming such a file ("a configuration"). The big file's content is
// filler, lines of '#' comments, which every format the readers know
// would parse.
func Files(t testing.TB, dir, base, ext string, limit int64, what string) map[string]string {
	t.Helper()
	fifo := filepath.Join(dir, base+".fifo"+ext)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Should a reader wait on it (the code before issue 24), an open for
	// writing and reading lets it go at the end.
	t.Cleanup(func() { Release(fifo) })
	dev := filepath.Join(dir, base+".dev"+ext)
	if err := os.Symlink("/dev/null", dev); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, base+".big"+ext)
	line := "#" + strings.Repeat("x", 62) + "\n"
	content := strings.Repeat(line, int(limit)/len(line)+1)
	if err := os.WriteFile(big, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		fifo: "not a regular file: a named pipe",
		dev:  "not a regular file: a device",
		big:  fmt.Sprintf("is more than the %s %s may be", size(limit), what),
	}
}

// Release lets go a reader that waits on the named pipe at path.
func Release(path string) {
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
		f.Close()
	}
}

// Within runs f and fails the test when it has not returned in 10 s: a
// reader that opens a named pipe waits for a writer forever.
func Within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still reading after 10 s", what)
	}
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprint(n>>20, " MiB")
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprint(n>>10, " KiB")
	}
	return fmt.Sprint(n, " bytes")
}
