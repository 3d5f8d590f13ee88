// Package gogc sets switchboard's garbage collection target (GOGC=400
// unless the GOGC environment variable is set; the reasons are in
// cmd/switchboard's package doc) when it is initialised, before the
// initialisers of most other packages run.
//
// Those initialisers allocate about 3.4 MB (jsonschema/v6 compiles its
// meta-schemas, the LLM SDKs, DBOS, the Prometheus client and goja's
// dependencies build tables), just under the 4 MB a first collection
// waits for at Go's GOGC=100: set in main, the target came after them,
// and every command, `switchboard --help` included, paid for a
// collection during its start. The go command runs the initialisers that
// are ready (their imports initialised) in import-path order, so this
// package's runs as soon as os and runtime/debug have: in the build of
// 2026-12-06, after 170 packages that allocate 0.6 MB and before the 100
// that allocate the other 2.8 MB (GODEBUG=inittrace=1).
package gogc

import (
	"os"
	"runtime/debug"
)

// Default is the GC target used when GOGC is not set.
const Default = 400

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(Default)
	}
}
