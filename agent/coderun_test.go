package agent

import "github.com/switchboardmcp/switchboard/codemode/sandbox"

// The tests run code mode as the binary does where it has it.
func init() { RunCode = sandbox.Run }
