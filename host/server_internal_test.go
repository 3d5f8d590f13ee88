package host

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"
)

// Closing errors are told apart by type, not by their text.
func TestIsBenignCloseErr(t *testing.T) {
	exit := exec.Command("sh", "-c", "exit 3").Run()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{exit, true},
		{fmt.Errorf("closing: %w", exit), true},
		{fmt.Errorf("closing: %w", os.ErrClosed), true},
		{io.EOF, true},
		{fmt.Errorf("write: %w", io.ErrClosedPipe), true},
		{net.ErrClosed, true},
		{errors.New("exit status 3"), false}, // text alone is not enough
		{errors.New("disk full"), false},
	} {
		if got := isBenignCloseErr(tc.err); got != tc.want {
			t.Errorf("isBenignCloseErr(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
