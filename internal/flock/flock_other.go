//go:build !unix

package flock

import (
	"context"
	"errors"
	"os"
)

func lock(_ context.Context, f *os.File, _ func()) error {
	f.Close()
	return errors.ErrUnsupported
}

func release(f *os.File) { f.Close() }
