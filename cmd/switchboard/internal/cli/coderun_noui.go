//go:build noui

package cli

import "github.com/switchboardmcp/switchboard/gateway"

// codeRunner: a -tags noui build has no code mode (run_code answers that
// it is not available in this build), as it has no web UI.
func codeRunner() gateway.CodeRunner { return nil }
