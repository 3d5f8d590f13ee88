package workflow

import (
	"encoding/json"
	"time"
)

// Workflow is one workflow file, decoded and validated.
type Workflow struct {
	ID          string
	Description string
	Inputs      []Input
	Outputs     []Output
	Steps       []*Step // in file order
	// Vars are named values (templates over inputs) that steps' templates
	// read as .vars.NAME.
	Vars map[string]*Template
	// Concurrency bounds how many steps of one run run at once;
	// DefaultConcurrency when unset.
	Concurrency int
	// Timeout bounds a whole run; 0: none (a run waiting on a gate may
	// last days).
	Timeout time.Duration
	// HideTools removes the host tools this workflow's steps call from the
	// gateway's list when the workflow is published.
	HideTools bool
	// MCPServers and AgentTools are the file's mcp_servers and tools: the
	// servers and the tools its agent steps' agents may use, unless a
	// step or the run says otherwise (see Selection). Nil: inherit.
	MCPServers *Selection
	AgentTools *Selection

	// File is where the workflow was read from.
	File string
	// Digest identifies the definition (a hash of its normalized form): a
	// run records the digest it started with, and one whose workflow
	// changed since is reported, not resumed on the new definition.
	Digest string
}

// DefaultConcurrency is the number of steps of one run that run at once
// when the workflow does not say.
const DefaultConcurrency = 4

// Input is one of a workflow's inputs; together they are the published
// tool's inputSchema.
type Input struct {
	Name        string
	Type        string // JSON Schema type: string, number, integer, boolean, array, object
	Description string
	Required    bool
	Default     any   // nil: none
	Enum        []any // nil: any value of Type
	Line        int
}

// Output is one of a workflow's outputs: a template over the run's step
// results. Together they are the published tool's outputSchema and its
// result's structuredContent.
type Output struct {
	Name        string
	Type        string // JSON Schema type of the value; "" means string
	Description string
	Value       *Template
	Line        int
}

// StepKind says what a step does.
type StepKind string

// The kinds of step.
const (
	StepTool     StepKind = "tool"
	StepAgent    StepKind = "agent"
	StepGate     StepKind = "gate"
	StepForEach  StepKind = "for_each"
	StepWorkflow StepKind = "workflow"
)

// Step is one step of a workflow. The fields that apply are those of its
// Kind.
type Step struct {
	ID    string
	Kind  StepKind
	Needs []string // ids of the steps that must end first
	// If, when set, is a condition: the step runs only when it renders to
	// a true value ("true", a non-zero number, a non-empty string other
	// than "false"); otherwise it is skipped (its result is nil).
	If      *Template
	Timeout time.Duration // 0: the kind's default (a tool call's is the host's)
	Retry   *Retry        // nil: no retry
	// Idempotent marks a step safe to call again. A tool step is retried
	// (Retry) only when marked; agent and workflow steps may always
	// retry. An attempt of a tool or agent step that was in flight when
	// its process stopped (killed, or the run stopped) is called again by
	// recovery only when the step is idempotent: marked, or a tool that
	// declares readOnlyHint or idempotentHint. Otherwise the run is
	// interrupted there (RunInterrupted) until a person resolves the step
	// (Engine.Resolve). An agent step is idempotent only when marked.
	Idempotent bool
	OnError    ErrorPolicy
	// Default is the result of a step that failed with OnError continue.
	Default any

	// Tool: the host's name for the tool ("mcp_everything_echo") and its
	// arguments, whose string leaves are templates.
	Tool      string
	Arguments *Value

	// Agent: the agent (a name found like `switchboard run NAME`, or a
	// path) and its prompt; MCPServers and AgentTools, the step's
	// mcp_servers and tools, say what it may use (see Selection).
	Agent      string
	Prompt     *Template
	MCPServers *Selection
	AgentTools *Selection

	// Gate: what a person is asked.
	Gate *Gate

	// ForEach: an inner step run once per item.
	ForEach *ForEach

	// Workflow: another workflow's id and its inputs (templates).
	Workflow string
	With     *Value

	Line int
}

// Selection is what a workflow, one of its agent steps, or a run says of
// the servers (mcp_servers) or the tools (tools) an agent step's agent may
// use. The most specific one that says something wins — the run's, else
// the step's, else the workflow's — and what it says replaces what the
// agent file says, as `switchboard run --mcp` and `--tools` do: servers by
// id, each a configured one; tools by their host names, which can only
// narrow the agent file's own tools. A nil *Selection inherits (the
// parent's, and at the top the agent file's, whose own default is the
// configuration's servers and every tool); empty Names means none.
type Selection struct {
	Names []string `json:"names"`
	// Line is where the file says it; 0 for a run's.
	Line int `json:"-"`
}

// None reports whether s says none.
func (s *Selection) None() bool { return s != nil && len(s.Names) == 0 }

// Retry says how a failed step is tried again.
type Retry struct {
	Attempts int           // total attempts, at least 2
	Backoff  time.Duration // before the second attempt; doubled each time
	MaxDelay time.Duration // cap on one backoff; 0: none
}

// ErrorPolicy says what a step's failure does to its run.
type ErrorPolicy string

// The error policies.
const (
	OnErrorFail     ErrorPolicy = "fail"     // the run fails (the default)
	OnErrorContinue ErrorPolicy = "continue" // the step's result is its Default; the run goes on
)

// GatePolicy says what a declined or timed-out gate does to its run.
type GatePolicy string

// The gate policies.
const (
	GateFail     GatePolicy = "fail"      // the run fails (the default)
	GateSkipRest GatePolicy = "skip_rest" // the steps that have not run are skipped; the run completes
	GateContinue GatePolicy = "continue"  // the gate's result is nil; the run goes on
)

// Gate asks a person for an answer.
type Gate struct {
	Message *Template
	// Schema is the JSON Schema of the answer (an elicitation's
	// requestedSchema: an object of primitive properties); nil asks for a
	// plain accept or decline.
	Schema    json.RawMessage
	Timeout   time.Duration // 0: waits until answered or the run is cancelled
	OnDecline GatePolicy
	OnTimeout GatePolicy
}

// ForEach runs Step once per item of Items.
type ForEach struct {
	Items *Template // renders to a JSON list
	// As names the item in the inner step's templates (.item by default;
	// the index is .index).
	As          string
	Concurrency int // items at once; DefaultConcurrency when unset
	// MaxItems bounds the items: a list of more fails the step
	// (ErrLimit) before any item runs. 0: the engine's Limits.MaxItems.
	MaxItems int
	Step     *Step
}
