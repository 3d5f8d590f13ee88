package config

import "github.com/switchboardmcp/switchboard/internal/decode"

// Limits is the [limits] table: bounds on the text MCP servers declare and
// send, which the host cleans (terminal escapes and control and invisible
// characters removed) and bounds once, for every face: the CLI, agents,
// the gateway's clients; and bounds on workflow runs, which the workflow
// engine holds whatever the workflow files say.
//
//	[limits]
//	max_description_bytes = 8192  # each description, instructions, error and progress message: longer is cut
//	max_name_bytes        = 256   # titles and serverInfo strings are cut; a longer tool or prompt name is not offered
//	max_workflow_depth    = 8     # runs nested through workflow steps; a deeper one fails
//	max_for_each_items    = 1000  # a for_each's items unless it says max_items; more fails before any runs
//	keep_runs             = 10000 # ended workflow runs kept; the oldest past it are deleted
//
// max_description_bytes applies to each description of a tool, prompt,
// resource, resource template, prompt argument and schema property, to a
// server's instructions, and to the error and progress messages it sends.
// max_name_bytes applies to titles, a resource's name, serverInfo and a
// log message's logger, which are cut, and to tool, prompt and prompt
// argument names, which are identifiers and never cut: a tool or prompt
// whose name is longer is not offered. The zero value means the defaults
// ([DefaultMaxDescriptionBytes], [DefaultMaxNameBytes],
// [DefaultMaxWorkflowDepth], [DefaultMaxForEachItems], [DefaultKeepRuns]).
// A later file's keys override an earlier file's one by one.
//
// max_workflow_depth bounds how deeply workflow runs nest: the run a
// person or client starts is at depth 0, the run of one of its workflow
// steps (or of a tool step that calls a published workflow) at 1; a step
// whose run would be deeper fails without starting it. validate refuses a
// workflow that runs itself; this bound also holds for workflows checked
// apart. max_for_each_items bounds the items of a for_each that says no
// max_items of its own: a for_each over more fails before any item runs.
// keep_runs bounds the ended workflow runs the state database keeps: past
// it, the oldest ended runs are deleted, each with its nested runs, gates
// and events, as runs end; a run that has not ended is never deleted.
type Limits struct {
	MaxDescriptionBytes int
	MaxNameBytes        int
	MaxWorkflowDepth    int
	MaxForEachItems     int
	KeepRuns            int

	// Source is where the last [limits] table was declared; zero when none
	// was.
	Source Position
}

// The ranges the [limits] keys accept. A description bound below 256
// bytes would cut ordinary descriptions to nothing useful; above 4 MiB it
// is no bound (a message is at most that). A name bound below 64 would
// refuse ordinary tool names; MCP's own advice is at most 128 characters.
const (
	minDescriptionBytes = 256
	maxDescriptionBytes = 4 << 20
	minNameBytes        = 64
	maxNameBytes        = 64 << 10
	// MaxWorkflowDepthCeiling and MaxForEachItemsCeiling bound the
	// workflow keys (the workflow package's own bounds): deeper than 64
	// runs is a loop, not a composition; more than 100,000 items is a
	// batch job, not a run to replay step by step.
	MaxWorkflowDepthCeiling = 64
	MaxForEachItemsCeiling  = 100_000
	// MaxKeepRuns bounds keep_runs: beyond it the bound would not bound.
	MaxKeepRuns = 10_000_000
)

// limitsTable declares [limits], checked as each file is read.
var limitsTable = mergedTable[Limits]{
	key: "limits",
	fields: decode.Table[Limits]{
		decode.Bytes("max_description_bytes", decode.TOML, func(l *Limits) *int { return &l.MaxDescriptionBytes }, minDescriptionBytes, maxDescriptionBytes),
		decode.Bytes("max_name_bytes", decode.TOML, func(l *Limits) *int { return &l.MaxNameBytes }, minNameBytes, maxNameBytes),
		decode.Range("max_workflow_depth", decode.TOML, func(l *Limits) *int { return &l.MaxWorkflowDepth }, 1, MaxWorkflowDepthCeiling),
		decode.Range("max_for_each_items", decode.TOML, func(l *Limits) *int { return &l.MaxForEachItems }, 1, MaxForEachItemsCeiling),
		decode.Range("keep_runs", decode.TOML, func(l *Limits) *int { return &l.KeepRuns }, 1, MaxKeepRuns),
	},
	config:        func(c *Config) *Limits { return &c.Limits },
	source:        func(l *Limits) *Position { return &l.Source },
	checkOnDecode: true,
}
