//go:build unix

package secret

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/userfile/userfiletest"
)

// TestFileStoreReadsOnlyRegularFiles: a secret store whose file or key
// file is a named pipe, a device or too large answers at once with an
// error naming the file and saying what it is (issue 24 §2), never waits
// for a writer.
func TestFileStoreReadsOnlyRegularFiles(t *testing.T) {
	work := t.TempDir()
	for _, c := range []struct {
		file  string
		limit int64
		what  string
	}{{fileName, 16 << 20, "a secret store"}, {keyName, 4 << 10, "a secret store's key"}} {
		for path, want := range userfiletest.Files(t, work, c.file, "", c.limit, c.what) {
			name := filepath.Base(path)
			dir := filepath.Join(work, name+".store")
			v, err := OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Set("a", "value-a"); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path, filepath.Join(dir, c.file)); err != nil {
				t.Fatal(err)
			}
			path = filepath.Join(dir, c.file)
			if strings.HasSuffix(name, ".fifo") {
				t.Cleanup(func() { userfiletest.Release(path) })
			}
			v, err = OpenStore(&StoreOptions{Dir: dir, Backend: BackendFile, LookupEnv: envOf(nil)})
			if err != nil {
				t.Fatal(err)
			}
			userfiletest.Within(t, "List with "+name, func() {
				_, err := v.List()
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
					t.Errorf("List() with %s = %v; want an error naming the file and saying %q", name, err, want)
				}
			})
		}
	}
}
