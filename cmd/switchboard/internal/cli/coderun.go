//go:build !noui

package cli

import (
	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/codemode/sandbox"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/gateway/coderun"
)

// Code mode, in builds that have it (not -tags noui: goja's reflection
// keeps the linker from dropping unused methods, docs/size.md): the
// agent runner's (tool_mode: code) and the gateway's (mode = "code").
func init() { agent.RunCode = sandbox.Run }

// codeRunner is the gateway's code mode runner.
func codeRunner() gateway.CodeRunner { return coderun.New() }
