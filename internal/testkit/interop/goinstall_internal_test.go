package interop

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGoInstallFails: a peer that cannot be built is an error naming it
// and saying what it needs (GoInstall turns it into t.Fatal), and leaves
// nothing behind that a later run would take for a build.
func TestGoInstallFails(t *testing.T) {
	t.Setenv(CacheEnv, t.TempDir())
	t.Setenv("GOPROXY", "off") // fail at once, without the network
	p := GoPeer{Pkg: "github.com/switchboardmcp/no-such-module/cmd/none", Version: "v0.0.1"}
	for range 2 { // the second time from the memo
		_, err := goInstall(p, t.Logf)
		if err == nil || !strings.Contains(err.Error(), p.String()) || !strings.Contains(err.Error(), "module proxy") {
			t.Fatalf("goInstall(%s) = %v, want an error naming it and the proxy", p, err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(CacheDir(), "gobin", "*"))
	for _, f := range left {
		if !strings.HasSuffix(f, ".lock") {
			t.Errorf("left behind: %s", f)
		}
	}
	if _, err := goInstall(GoPeer{Pkg: "x"}, t.Logf); err == nil {
		t.Errorf("goInstall without a version succeeded")
	}
}
