package switchboard_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
)

// docFiles are the files a newcomer follows: the README, docs/ and the
// examples.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	for _, root := range []string{"docs", "examples"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch filepath.Ext(p) {
			case ".md", ".toml", ".cfg", ".service", ".yaml":
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestDocsDefaultListen: where the docs say what serve listens on by
// default, they say config.DefaultGatewayListen (docs/deployment.md said
// 127.0.0.1:8484, followed it reached nothing; issue 24).
func TestDocsDefaultListen(t *testing.T) {
	claim := regexp.MustCompile(`(?i)(?:default[^\n]{0,20}?|serve[^\n]{0,20}?)(127\.0\.0\.1:\d+|localhost:\d+)[^\n]*|(127\.0\.0\.1:\d+)[^\n]{0,10}unless[^\n]*listen`)
	found := 0
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range claim.FindAllStringSubmatch(line, -1) {
				addr := m[1] + m[2]
				if strings.Contains(m[0], "--listen") || strings.Contains(m[0], "listen =") && !strings.Contains(strings.ToLower(m[0]), "default") {
					continue // a chosen address, not the default
				}
				found++
				port := func(a string) string { return a[strings.LastIndex(a, ":"):] }
				if port(addr) != port(config.DefaultGatewayListen) {
					t.Errorf("%s:%d: %q says serve listens on %s by default; it is %s", f, i+1, strings.TrimSpace(line), addr, config.DefaultGatewayListen)
				}
			}
		}
	}
	if found < 2 {
		t.Errorf("found %d places that state the default listen address: the pattern misses them", found)
	}
}
