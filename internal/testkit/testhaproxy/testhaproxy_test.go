package testhaproxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
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
	// The group: the master and its worker.
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("haproxy's process group %d still there after the test: kill 0 = %v", pid, err)
	}
}

// TestBadConfig: an haproxy that refuses its configuration is reported
// with what it said, at once (not after the ready timeout).
func TestBadConfig(t *testing.T) {
	_, err := start("frontend fe\n    bind fd@3\n    no_such_keyword here\n", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "no_such_keyword") {
		t.Errorf("start with an unknown keyword: %v; want haproxy's complaint naming it", err)
	}
}
