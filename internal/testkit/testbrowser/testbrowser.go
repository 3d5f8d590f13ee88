// Package testbrowser starts a real, headless Chromium for a test, driven
// with chromedp, so that the web UI is tested in the browser people use
// rather than by reading its HTML.
//
// [New] finds Debian's chromium on PATH; when it is missing and the test
// runs as root, it installs the package (apt-get install -y
// --no-install-recommends chromium), once per test binary. A Chromium that
// is missing and cannot be installed fails the test: like every peer of
// this project's tests, it is never skipped.
//
// The browser runs headless, with a profile in a temporary folder removed
// when the test ends, and with the flags that keep it from reaching the
// network on its own (background networking, component updates, sync,
// QUIC): a page that works here works on a machine with no internet.
// As root, Chromium refuses to start without --no-sandbox: its sandbox
// needs user namespaces it will not create for root, and the pages it
// loads in a test are this project's own, served on loopback. As another
// user the sandbox stays on.
package testbrowser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// Names Chromium goes by on PATH.
var names = []string{"chromium", "chromium-browser"}

// New starts a headless Chromium for t, with a window of width×height,
// and returns a chromedp context of one tab in it; the browser is stopped
// and its profile removed when t ends.
func New(t testing.TB, width, height int) context.Context {
	t.Helper()
	exe, err := executable()
	if err != nil {
		t.Fatalf("testbrowser: %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	// The first action starts the browser: fail here, saying so, rather
	// than in the test's first step. A browser that exits before it
	// listens is started once more (one suite run in about twenty saw
	// Chromium exit at start under load, printing nothing but its usual
	// warnings): what the tests check is the pages, not Chromium's start.
	for attempt := 1; attempt <= 2; attempt++ {
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(t.TempDir()))...)
		ctx, cancel := chromedp.NewContext(actx)
		if err = chromedp.Do(ctx, chromedp.Navigate("about:blank")); err == nil {
			t.Cleanup(func() {
				cancel()
				cancelAlloc()
			})
			return ctx
		}
		cancel()
		cancelAlloc()
		t.Logf("testbrowser: starting %s (attempt %d): %v", exe, attempt, err)
	}
	t.Fatalf("testbrowser: starting %s: %v", exe, err)
	return nil
}

// executable returns Chromium's path, installing Debian's package when it
// is missing and this process may.
var executable = sync.OnceValues(func() (string, error) {
	if p := find(); p != "" {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("chromium not found on PATH, and not root to install Debian's chromium package")
	}
	if err := interop.AptInstall("chromium"); err != nil {
		return "", fmt.Errorf("chromium not found, and installing Debian's chromium package failed: %w", err)
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", errors.New("Debian's chromium package installed, but no chromium on PATH")
})

func find() string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}
