package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
)

// TestServeStartCancelled: Ctrl-C ends a serve whose state database never
// answers while it starts (it opened the store with a context nothing
// cancelled, and waited for ever).
func TestServeStartCancelled(t *testing.T) {
	database, connected := testpg.Silent(t)
	dir := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"} {
		t.Setenv(k, dir)
	}
	file := filepath.Join(dir, "switchboard.toml")
	if err := os.WriteFile(file, fmt.Appendf(nil, "[state]\ndatabase = %q\n", database), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--config", file, "--listen", "127.0.0.1:0"}, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()
	select {
	case <-connected:
	case code := <-done:
		t.Fatalf("serve exited %d before it connected to the database: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve never connected to the database")
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("serve cancelled while it opened the database: exit %d, want %d (interrupted); stderr:\n%s", code, ExitInterrupted, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve still runs 5 s after Ctrl-C")
	}
}
