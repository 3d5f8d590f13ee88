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
// collection during its start. Importing this package from main alone
// makes it initialise as soon as its own few imports are (the go command
// orders initialisers by import path among those that are ready), that
// is before any package that needs more than the runtime, os and
// strconv.
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
