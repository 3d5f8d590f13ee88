package daemon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
)

// TestClientLeft: a stdio session that ends because its client left —
// its input ended, its output closed under a write (a list_changed when a
// server joins can go out at any moment), or the read pending when the
// session closed its input after that — is the client leaving, not an
// error serve exits 1 for (TestServeStdioOffersWhatItsClientHas failed
// once under -race with "io: read/write on closed pipe").
func TestClientLeft(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.EOF, true},
		{fmt.Errorf("write |1: %w", syscall.EPIPE), true},
		{&os.PathError{Op: "read", Path: "/dev/stdin", Err: os.ErrClosed}, true},
		{fmt.Errorf("reading: %w", io.ErrClosedPipe), true},
		{errors.New("invalid character 'x' looking for beginning of value"), false},
		{syscall.EIO, false},
	} {
		if got := clientLeft(tc.err); got != tc.want {
			t.Errorf("clientLeft(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
