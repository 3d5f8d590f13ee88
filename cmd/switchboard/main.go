// Command switchboard connects LLM agents and people to the tools, resources
// and prompts of many MCP servers. Run 'switchboard --help'.
//
// # Garbage collection
//
// Unless the GOGC environment variable is set, switchboard runs with GOGC=400
// (set by the gogc package, as the program starts) instead of Go's 100
// while its live heap is small. Every JSON-RPC message the go-sdk decodes
// allocates a 32 KiB buffer, so a gateway's heap churns fast while its live
// heap stays small, and at GOGC=100 the collector runs every few calls: a
// third of the gateway's CPU per tools/call (docs/performance.md, Gateway).
// 400 cuts the CPU per call by about 40% and the p50 latency by 15–20%, at
// the price of a heap that may grow to 5× the live data between
// collections instead of 2×. That factor is what makes each of many idle
// sessions cost twice a plain go-sdk gateway's, while on a live heap that
// large a collection comes only every so many megabytes anyway. So the
// target follows the live heap, read after every collection (gctune.go):
// the heap may grow by 128 MiB between collections (GOGC=400 up to a live
// heap of 32 MiB), and by twice the live heap when that is more (GOGC=200
// from 64 MiB). Set GOGC (and GOMEMLIMIT) to override.
//
// # Memory limit
//
// Unless GOMEMLIMIT is set, switchboard also sets a soft memory limit
// (debug.SetMemoryLimit): 90% of the container's limit (cgroup v2
// memory.max, or v1 memory.limit_in_bytes) when there is one, else half
// the machine's RAM. Near the limit the collector runs as often as it must,
// whatever GOGC says; below it, GOGC keeps its CPU gain. A container
// then stays under its limit instead of being killed by it; set GOMEMLIMIT
// (such as GOMEMLIMIT=512MiB) for a tighter one. See docs/deployment.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	// GOGC=400 before the other packages' initialisers allocate.
	_ "github.com/switchboardmcp/switchboard/cmd/switchboard/internal/gogc"
)

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		tuneGC()
	}
	setMemoryLimit()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], pollableStdin(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
