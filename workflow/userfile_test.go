//go:build unix

package workflow

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/userfile/userfiletest"
)

// TestLoadReadsOnlyRegularFiles: a workflow file that is a named pipe, a
// device or larger than 1 MiB is refused at once, the error naming the
// file and saying what it is (issue 24 §2).
func TestLoadReadsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	for path, want := range userfiletest.Files(t, dir, "triage", ".yaml", 1<<20, "a workflow file") {
		userfiletest.Within(t, "Load "+filepath.Base(path), func() {
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
				t.Errorf("Load(%s) = %v; want an error naming the file and saying %q", filepath.Base(path), err, want)
			}
		})
	}
}
