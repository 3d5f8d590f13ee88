package host

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/transport"
)

// The signatures of a half-written npx cache entry, as npm 11, npm 7–10
// and node print them, name the entry to remove; other failures do not.
func TestDamagedNPXEntry(t *testing.T) {
	cache := filepath.Join(t.TempDir(), ".npm", "_npx")
	entry := filepath.Join(cache, "c98ccc168155bafa")
	if err := os.MkdirAll(filepath.Join(entry, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stderr string
		ok           bool
	}{
		{"npm 11: the entry's package.json missing", `npm error code ENOENT
npm error syscall open
npm error path ` + entry + `/package.json
npm error errno -2
npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open '` + entry + `/package.json'`, true},
		{"npm 10: a folder in the way", `npm ERR! code ENOTEMPTY
npm ERR! syscall rename
npm ERR! path ` + entry + `/node_modules/@modelcontextprotocol/server-memory
npm ERR! dest ` + entry + `/node_modules/@modelcontextprotocol/.server-memory-oQcztsWA
npm ERR! errno -39`, true},
		{"node: a dependency missing", `Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from ` + entry + `/node_modules/@modelcontextprotocol/server-memory/dist/index.js
    at packageResolve (node:internal/modules/esm/resolve:873:9) {
  code: 'ERR_MODULE_NOT_FOUND'`, true},
		{"a network failure", `npm error code ECONNRESET
npm error network request to https://registry.npmjs.org/x failed`, false},
		{"another entry", `npm error code ENOENT
npm error path ` + cache + `/0123456789abcdef/package.json`, false}, // does not exist
		{"not npx's cache", `npm error code ENOENT
npm error path /home/u/project/node_modules/x/package.json`, false},
		{"no damage named", `npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@x%2fnope - Not found
npm error 404 at ` + entry, false},
	} {
		got, ok := damagedNPXEntry(tc.stderr)
		if ok != tc.ok || (ok && got != entry) {
			t.Errorf("%s: damagedNPXEntry = %q, %v; want %v", tc.name, got, ok, tc.ok)
		}
	}
	// An entry another npx is installing in now is left alone.
	lock := filepath.Join(entry, "concurrency.lock")
	if err := os.Mkdir(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	enoent := "npm error code ENOENT\nnpm error path " + entry + "/package.json"
	if _, ok := damagedNPXEntry(enoent); ok {
		t.Errorf("an entry locked a moment ago is damaged")
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)
	if got, ok := damagedNPXEntry(enoent); !ok || got != entry {
		t.Errorf("an entry whose lock is stale: %q, %v", got, ok)
	}
}

// What explain quotes of a child's stderr: its last lines but those that
// echo its environment or are JavaScript stack frames, each bounded.
func TestExplainTail(t *testing.T) {
	s := &server{h: &Host{red: secret.NewRedactor()}, stderr: transport.NewTailBuffer(stderrTailBytes)}
	s.envKeys.Store(envKeys([]string{"PATH=/usr/bin:/bin", "TOKEN=x"}))
	s.stderr.Write([]byte("PATH=/usr/bin:/bin\nTOKEN=x\nPWD=/tmp\n" +
		"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod'\n" +
		"    at packageResolve (node:internal/modules/esm/resolve:873:9)\n" +
		"    at ModuleJob._link (node:internal/modules/esm/module_job:168:49) {\n" +
		"  code: 'ERR_MODULE_NOT_FOUND'\n" + strings.Repeat("y", 400) + "\n"))
	got := s.explain(errors.New("failed")).Error()
	want := "failed\nstderr: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod'\nstderr: code: 'ERR_MODULE_NOT_FOUND'\nstderr: " + strings.Repeat("y", 300) + "…"
	if got != want {
		t.Errorf("explain =\n%s\nwant\n%s", got, want)
	}
}

// TestNPXLocks: of npx's install locks, one no npm has touched for
// npxLockFresh is removed (npm would wait until it is a minute old), one
// untouched for npxLockIdle is named as what the install waits on, and one
// touched just now (an npm holding it) is left alone; the cache npx uses
// follows --cache, npm_config_cache and HOME.
func TestNPXLocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "_npx")
	lock := func(entry string, age time.Duration) string {
		p := filepath.Join(dir, entry, "concurrency.lock")
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := lock("aaaaaaaaaaaaaaaa", 2*npxLockFresh)
	idle := lock("bbbbbbbbbbbbbbbb", npxLockIdle+time.Second)
	held := lock("cccccccccccccccc", 0)
	logs := &strings.Builder{}
	l := &npxLocks{dir: dir}
	if got := l.sweep(slog.New(slog.NewTextHandler(logs, nil))); got != idle {
		t.Errorf("sweep waits on %q, want %q", got, idle)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale lock is still there: %v", err)
	}
	for _, p := range []string{idle, held} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if !strings.Contains(logs.String(), "removed npm's install lock") || !strings.Contains(logs.String(), stale) {
		t.Errorf("the removal is not logged, naming the lock: %s", logs)
	}

	t.Setenv("HOME", "/home/someone")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-y", "pkg"}, nil, "/home/someone/.npm/_npx"},
		{[]string{"-y", "pkg"}, map[string]string{"HOME": "/h"}, "/h/.npm/_npx"},
		{[]string{"-y", "pkg"}, map[string]string{"NPM_CONFIG_CACHE": "/c"}, "/c/_npx"},
		{[]string{"--cache", "/d", "-y", "pkg"}, map[string]string{"npm_config_cache": "/c"}, "/d/_npx"},
		{[]string{"--cache=/e", "pkg"}, nil, "/e/_npx"},
	} {
		if got := npxCacheDir(config.Server{Command: "npx", Args: tc.args, Env: tc.env}); got != tc.want {
			t.Errorf("npxCacheDir(%q, %v) = %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}
