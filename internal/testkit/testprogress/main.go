// Command testprogress reads `go test -json` and prints what go test prints
// without -json, a package at a time, plus a line after each quiet minute
// saying what is going on, so that a long `go test -race ./...` (ten
// minutes and more, most of them silent) shows its progress:
//
//	go test -race -json ./... | go run ./internal/testkit/testprogress
//
// For each package, as it ends, it prints go test's own line ("ok  pkg
// 12.3s", "?  pkg  [no test files]"); for a package that failed, the whole
// output of its failed tests (and of the tests it was running when it
// crashed or timed out) and its own output, ending in "FAIL pkg", as go test
// does; build errors as they come. After a minute without a line it prints
// which packages are running and for how long ("... 4m0s in: running
// …/host (2m10s)"), or that the go command is still building. At the end,
// every skipped test with its reason ("skipped:", a line each), then the
// counts: "N packages" and "tests: N passed, N failed, N skipped".
//
// It exits 1 when something failed, 0 otherwise; scripts/test.sh runs it
// under `set -o pipefail`, so that go test's own exit status (2 for bad
// flags, say) is kept too.
//
// Flags:
//
//	-v      print every line of output as it comes, as go test -v would
//	-every  the quiet spell before a progress line (default 1m; 0 for none)
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	verbose := flag.Bool("v", false, "print every line of output as it comes")
	every := flag.Duration("every", time.Minute, "the quiet spell before a progress line; 0 for none")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ... | testprogress [-v] [-every D]")
		os.Exit(2)
	}
	opts := &Options{Verbose: *verbose, Every: *every}
	if *every == 0 {
		opts.Every = -1
	}
	counts, err := Summarize(os.Stdin, os.Stdout, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress: reading go test -json:", err)
		os.Exit(1)
	}
	if !counts.OK() {
		os.Exit(1)
	}
}
