//go:build !unix

package interop

import (
	"fmt"
	"runtime"
)

func lockFile(path string, waiting func()) (unlock func(), err error) {
	return nil, fmt.Errorf("interop: installing test peers is not supported on %s", runtime.GOOS)
}
