package workflow

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/switchboardmcp/switchboard/config"
)

// Limits bounds what one run may grow to, whatever its workflow files
// say: workflows given to an engine may not have been checked together
// (CheckAll refuses a workflow that runs itself; a library user's, or a
// tool step that calls a published workflow's tool, is not seen there).
// Zero fields mean the defaults.
type Limits struct {
	// MaxDepth bounds how deeply runs nest: the run a person or a client
	// starts is at depth 0, the run of one of its workflow steps (or of
	// a tool step that calls a published workflow, see MetaKeyDepth) at
	// 1, and so on. A step whose run would be deeper fails (ErrLimit)
	// without starting it. 0 means DefaultMaxDepth ([limits]
	// max_workflow_depth).
	MaxDepth int
	// MaxItems bounds the items of a for_each that says no max_items of
	// its own: one with more fails (ErrLimit) before any item runs. 0
	// means DefaultMaxItems ([limits] max_for_each_items).
	MaxItems int
	// KeepRuns bounds the ended runs kept in the database: past it, the
	// oldest ended runs are deleted (Engine.Prune) as runs started here
	// end, and once at Launch. 0 means DefaultKeepRuns ([limits]
	// keep_runs).
	KeepRuns int
}

// The defaults of [Limits], and the bound of a for_each's own max_items.
// The numbers are the configuration's ([limits]).
const (
	// DefaultMaxDepth lets workflows nest as deep as people compose them
	// (examples nest two or three), and stops a workflow that runs
	// itself before it fills the database: in the trial of issue 24 one
	// nested 396 runs in 20 s.
	DefaultMaxDepth = config.DefaultMaxWorkflowDepth
	// DefaultMaxItems bounds a for_each: each item is a durable step, its
	// events and its attempt's row, and its result is kept in the run
	// until the for_each ends.
	DefaultMaxItems = config.DefaultMaxForEachItems
	// MaxItemsCeiling bounds max_items and [limits] max_for_each_items:
	// more items than that is a batch job, not a run to replay.
	MaxItemsCeiling = config.MaxForEachItemsCeiling
	// MaxDepthCeiling bounds [limits] max_workflow_depth.
	MaxDepthCeiling = config.MaxWorkflowDepthCeiling
	// DefaultKeepRuns keeps a long history of runs to look back on
	// (`switchboard runs`, the API), and bounds the database: each run
	// is its DBOS rows and its events, and nothing else removes them.
	DefaultKeepRuns = config.DefaultKeepRuns
)

// MetaKeyDepth is the _meta key under which a tool step's call says the
// nesting depth of its run, so that a published workflow it calls (the
// engine's InProcess server) starts its run one deeper, and a workflow
// that calls its own tool stops at [Limits].MaxDepth like one that names
// itself in a workflow step. A call without it starts a run at depth 0;
// a client that sends it only lowers how deep its own runs may nest.
const MetaKeyDepth = "switchboard/workflow_depth"

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxItems <= 0 {
		l.MaxItems = DefaultMaxItems
	}
	if l.KeepRuns <= 0 {
		l.KeepRuns = DefaultKeepRuns
	}
	return l
}

// depthError is the refusal of a run at depth, beyond max.
func depthError(what string, depth, max int) string {
	return fmt.Sprintf("%s would run at nesting depth %d, beyond the limit of %d ([limits] max_workflow_depth)", what, depth, max)
}

// metaDepth reads MetaKeyDepth's value, a whole number (JSON's, or Go's
// in process); anything else is 0. It is clamped to [0, MaxDepthCeiling]:
// a depth beyond any limit is refused as such.
func metaDepth(v any) int {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		f, _ = x.Float64()
	default:
		return 0
	}
	if math.IsNaN(f) || f < 0 || f != math.Trunc(f) {
		return 0
	}
	return int(min(f, MaxDepthCeiling+1))
}
