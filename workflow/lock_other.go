//go:build !unix

package workflow

import (
	"errors"
	"os"
)

// tryLock cannot tell here: every executor counts as alive, and runs left
// behind are resumed by hand (`switchboard runs resume` after `runs
// cancel`).
func tryLock(f *os.File) (bool, error) { return false, errors.ErrUnsupported }
