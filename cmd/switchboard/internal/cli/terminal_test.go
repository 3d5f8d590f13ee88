package cli

import (
	"bytes"
	"os"
	"testing"
)

// /dev/null is a character device, not a terminal: progress drawn for a
// terminal must not go there (the hand-written check said it was one).
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("isTerminal(%s) = true", os.DevNull)
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Errorf("isTerminal(a buffer) = true")
	}
}
