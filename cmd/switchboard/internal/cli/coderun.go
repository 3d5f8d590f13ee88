//go:build !noui

package cli

import (
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/gateway/coderun"
)

// codeRunner is code mode's runner, in builds that have it (not -tags
// noui: goja's reflection keeps the linker from dropping unused methods,
// docs/size.md).
func codeRunner() gateway.CodeRunner { return coderun.New() }
