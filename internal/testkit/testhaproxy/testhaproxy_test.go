package testhaproxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestStart: haproxy serves on the socket this package made, forwards to
// the backend it is given, and is gone, with its workers, when the test
// ends.
func TestStart(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend saw %s %s", r.Method, r.URL.Path)
	}))
	defer backend.Close()
	var pid int
	t.Run("proxy", func(t *testing.T) {
		h := Start(t, `
global
    log stderr format short local0 notice
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind fd@3
    default_backend be
backend be
    server only `+strings.TrimPrefix(backend.URL, "http://")+`
`)
		pid = h.Pid
		resp, err := http.Get(h.URL + "/through")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "backend saw GET /through" {
			t.Errorf("GET through haproxy = %d %q, want 200 \"backend saw GET /through\"", resp.StatusCode, b)
		}
	})
	if pid == 0 {
		t.FailNow()
	}
	// The group: the master and its worker, gone or zombies (an orphaned
	// worker's zombie may wait for a reaper a container lacks).
	wait.For(t, fmt.Sprintf("haproxy's process group %d to be gone", pid), func() (string, bool) {
		live := livingInGroup(pid)
		return fmt.Sprintf("living: %v", live), len(live) == 0
	})
}

// livingInGroup lists the processes of process group pgid that are
// neither gone nor zombies, from /proc.
func livingInGroup(pgid int) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		out = append(out, s[:i+1])
	}
	return out
}

// TestBadConfig: an haproxy that refuses its configuration is reported
// with what it said, at once (not after the ready timeout).
func TestBadConfig(t *testing.T) {
	_, err := start("frontend fe\n    bind fd@3\n    no_such_keyword here\n", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "no_such_keyword") {
		t.Errorf("start with an unknown keyword: %v; want haproxy's complaint naming it", err)
	}
}
