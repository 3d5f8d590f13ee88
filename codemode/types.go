package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool a program may call, as tools.<Namespace>.<Function>.
type Tool struct {
	// Name is what the [Caller] is given for a call of this tool: the
	// published MCP tool name, such as "mcp_github_search_issues".
	Name string
	// Namespace and Function name it in the program: "github" and
	// "search_issues" give tools.github.search_issues(...). Each is made an
	// identifier with [Identifier].
	Namespace string
	Function  string
	// Description and InputSchema are rendered by [Declarations].
	Description string
	InputSchema json.RawMessage
}

// Caller makes one tool call for a program. It is the host's or the
// gateway's own path for a call, so policy, validation, redaction, limits
// and metrics apply to a program's calls as to direct ones. ctx ends with
// the run's wall-time budget. Calls made together (Promise.all) run
// concurrently, so a Caller must be safe for concurrent use.
type Caller func(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error)

// Result is what a run gives back.
type Result struct {
	// Value is the JSON of what the program returned; nil when it returned
	// nothing (undefined).
	Value json.RawMessage
	// Console is what the program wrote with console.log, info and debug
	// (as is) and warn and error (prefixed "warn: ", "error: "), a line
	// each.
	Console string
	// Calls is the number of tool calls the program made.
	Calls int
	// CPUTime is the time the program ran (wall time minus the time it
	// waited for tool calls); WallTime is the whole run.
	CPUTime, WallTime time.Duration
}

// ErrProgram is matched (errors.Is) by every [*ProgramError].
var ErrProgram = errors.New("code mode: the program failed")

// ProgramError is a program's own failure: a syntax error, an exception it
// did not catch (a tool error among them), or a wait nothing can end.
type ProgramError struct {
	Message string
}

func (e *ProgramError) Error() string { return "code mode: " + e.Message }

// Is reports whether target is [ErrProgram].
func (e *ProgramError) Is(target error) bool { return target == ErrProgram }
