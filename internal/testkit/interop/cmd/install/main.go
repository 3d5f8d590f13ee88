// Command install installs the pinned MCP test peers (Node 22, the reference
// servers, inspector-cli, the TypeScript SDK, the conformance suites, and the
// third-party Go servers built from the Go module proxy) into the interop cache,
// so that scripts can do it once, with progress, before `go test ./...`.
//
// Usage:
//
//	go run ./internal/testkit/interop/cmd/install
//
// It prints what it installed or found on stderr, and exits 1 on failure.
// The cache is .cache/interop at the module root, or $SWITCHBOARD_TEST_CACHE.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

func main() {
	t0 := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[interop %5.1fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
	}
	logf("cache: %s", interop.CacheDir())
	if err := interop.InstallAll(logf); err != nil {
		fmt.Fprintf(os.Stderr, "install: %v\n", err)
		os.Exit(1)
	}
	logf("all MCP test peers ready")
}
