//go:build unix

package flock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/flock"
)

// TestLock: a second Lock of a path waits for the first to be released,
// says once that it waits, and gives up when its context ends; the lock
// file is made owner-only.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "x.lock")
	ctx := context.Background()
	unlock, err := flock.Lock(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, %v; want mode 0600", fi, err)
	}

	// Held: a Lock whose context ends gives up, having said it waits.
	waits := 0
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := flock.Lock(short, path, func() { waits++ }); !errors.Is(err, context.DeadlineExceeded) || waits != 1 {
		t.Fatalf("Lock while held: %v after %d waits; want DeadlineExceeded after 1", err, waits)
	}

	// Held: a Lock waits, then has it once released.
	waiting := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		u, err := flock.Lock(ctx, path, func() { close(waiting) })
		if err == nil {
			u()
		}
		got <- err
	}()
	<-waiting
	select {
	case err := <-got:
		t.Fatalf("the second Lock returned (%v) while the first held it", err)
	default:
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("Lock after release: %v", err)
	}

	// The lock a cancelled wait was left to take is given back.
	u, err := flock.Lock(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	u()
}
