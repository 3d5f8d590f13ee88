package toolscan_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/toolscan"
)

var update = flag.Bool("update", false, "rewrite testdata/version.golden")

// TestVersion: toolscan.Version changes whenever what Scan finds does.
// testdata/version.golden pins the version and a digest of the rules and
// of every finding on the corpus (poisoned and benign): findings that
// change under the same version fail here, since a caller keeping
// findings by version (the host's tool-list cache) would show stale ones.
// After changing the rules, change Version and run with -update.
func TestVersion(t *testing.T) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.Encode(toolscan.Rules())
	for _, p := range readPoisoned(t) {
		enc.Encode(toolscan.Scan(p.Tool.def()))
	}
	files, err := filepath.Glob("testdata/benign/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		var srv struct {
			Tools []tool `json:"tools"`
		}
		readJSON(t, f, &srv)
		for _, tl := range srv.Tools {
			enc.Encode(toolscan.Scan(tl.def()))
		}
	}
	got := toolscan.Version + " " + hex.EncodeToString(h.Sum(nil))
	const golden = "testdata/version.golden"
	if *update {
		body := "# toolscan.Version and the digest of the rules and of Scan's findings on the corpus (TestVersion)\n" + got + "\n"
		if err := os.WriteFile(golden, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := lines[len(lines)-1]
	wantVersion, _, _ := strings.Cut(want, " ")
	switch {
	case got == want:
	case wantVersion == toolscan.Version:
		t.Errorf("Scan's findings on the corpus changed but toolscan.Version is still %q: change it, then run go test -run TestVersion -update", toolscan.Version)
	default:
		t.Errorf("toolscan.Version is %q, %s pins %q: run go test -run TestVersion -update", toolscan.Version, golden, wantVersion)
	}
}
