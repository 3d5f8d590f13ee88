//go:build unix

package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes the flock of f, closing f when it fails. A blocking flock
// cannot be interrupted, so when ctx ends first the waiting goroutine is
// left to take the lock and give it straight back.
func lock(ctx context.Context, f *os.File, waiting func()) error {
	fd := int(f.Fd())
	err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if waiting != nil {
			waiting()
		}
		done := make(chan error, 1)
		go func() { done <- flock(fd, syscall.LOCK_EX) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			go func() {
				if <-done == nil {
					flock(fd, syscall.LOCK_UN)
				}
				f.Close()
			}()
			return fmt.Errorf("waiting for the lock %s: %w", f.Name(), context.Cause(ctx))
		}
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return nil
}

func release(f *os.File) {
	flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}
