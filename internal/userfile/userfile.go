// Package userfile reads the files a person names or places: configuration
// files, agent and workflow files, other clients' MCP configurations, the
// secret store's file. Such a path may be anything — a named pipe that
// never delivers, a link to /dev/zero that never ends, a log of a gigabyte
// — and whatever it is, reading it must end at once, with an error that
// says what the file is. [Read] reads only a regular file (links
// followed), no larger than the bound its caller gives, and never opens
// anything else. A [Named] kind of file (agents, workflows) is found by id
// in the folders people place it in.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Errors [Read] returns, wrapped in an *fs.PathError naming the file and
// saying what it is or how large.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
)

// reason is a refusal: its message for people, its sentinel for errors.Is.
type reason struct {
	msg  string
	kind error
}

func (r *reason) Error() string { return r.msg }
func (r *reason) Unwrap() error { return r.kind }

// Read returns the content of the regular file at path (a symbolic link
// is followed, and its target judged), of at most limit bytes. what names
// such a file in the error for a larger one ("a configuration": "6.0 MiB
// is more than the 4 MiB a configuration may be").
//
// A named pipe, socket, device or folder is refused from what stat says,
// without being opened: opening a pipe for reading waits for a writer,
// and reading /dev/zero never ends. The file is then opened without
// waiting (O_NONBLOCK, where the system has it) and judged again, so that
// a pipe put in its place meanwhile is refused too; a file that grows past
// limit while it is read is refused as well. Errors are *fs.PathError:
// errors.Is(err, fs.ErrNotExist) holds for a missing file, and
// [ErrNotRegular] or [ErrTooLarge] for the refusals.
func Read(path string, limit int64, what string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := judge(path, fi, limit, what); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := judge(path, fi, limit, what); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, int64(len(data)), limit, what, true)
	}
	return data, nil
}

// judge refuses what is not a regular file, or is larger than limit.
func judge(path string, fi fs.FileInfo, limit int64, what string) error {
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: path, Err: &reason{"not a regular file: " + Kind(fi.Mode()), ErrNotRegular}}
	}
	if fi.Size() > limit {
		return tooLarge(path, fi.Size(), limit, what, false)
	}
	return nil
}

func tooLarge(path string, size, limit int64, what string, grew bool) error {
	msg := fmt.Sprintf("%s is more than the %s %s may be", Size(size), Size(limit), what)
	if grew {
		msg = fmt.Sprintf("more than the %s %s may be (it grew while it was read)", Size(limit), what)
	}
	return &fs.PathError{Op: "read", Path: path, Err: &reason{msg, ErrTooLarge}}
}

// Kind says what a file of mode m is, for people: "a named pipe", "a
// device", "a folder".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a file that can be read"
}

// Size writes n bytes for people: "512 bytes", "64 KiB", "4.2 MiB".
func Size(n int64) string {
	const (
		kib = 1 << 10
		mib = 1 << 20
		gib = 1 << 30
	)
	unit := func(u int64, name string) string {
		if n%u == 0 {
			return fmt.Sprintf("%d %s", n/u, name)
		}
		return fmt.Sprintf("%.1f %s", float64(n)/float64(u), name)
	}
	switch {
	case n >= gib:
		return unit(gib, "GiB")
	case n >= mib:
		return unit(mib, "MiB")
	case n >= kib:
		return unit(kib, "KiB")
	}
	return fmt.Sprintf("%d bytes", n)
}
