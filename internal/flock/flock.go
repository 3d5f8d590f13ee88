// Package flock takes exclusive locks on files, which the processes of one
// machine share: two CLI commands refreshing one OAuth login, two test
// binaries installing one peer, a serve and a CLI command on one SQLite
// state database. The kernel drops a lock when its process dies, so a
// killed process never leaves one held.
//
// Where the system has no flock (not unix), [Lock] returns
// [errors.ErrUnsupported] and the caller chooses: lock within the process
// only, or refuse.
package flock

import (
	"context"
	"os"
	"path/filepath"
)

// Lock takes an exclusive lock on path, creating the file (owner-only, in
// an owner-only folder) when it is missing, and returns the function that
// releases it. When another process holds the lock, waiting (if not nil)
// is called once, and Lock waits until it is released or ctx is done.
//
// Locks are held by open file, not by process: two Locks of one path in
// one process exclude each other too.
func Lock(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lock(ctx, f, waiting); err != nil {
		return nil, err
	}
	return func() { release(f) }, nil
}
