package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/decode"
)

// eachStep calls f on every step of w, a for_each's step after its
// for_each.
func (w *Workflow) eachStep(f func(s *Step)) {
	for _, s := range w.Steps {
		f(s)
		if s.ForEach != nil && s.ForEach.Step != nil {
			f(s.ForEach.Step)
		}
	}
}

// Tools returns the host tool names the workflow's tool steps call, sorted,
// each once: what hide_tools hides, and what `switchboard validate` checks
// exists.
func (w *Workflow) Tools() []string {
	var out []string
	w.eachStep(func(s *Step) {
		if s.Kind == StepTool && !slices.Contains(out, s.Tool) {
			out = append(out, s.Tool)
		}
	})
	sort.Strings(out)
	return out
}

// Agents returns the agents the workflow's agent steps run, sorted, each
// once.
func (w *Workflow) Agents() []string {
	var out []string
	w.eachStep(func(s *Step) {
		if s.Kind == StepAgent && !slices.Contains(out, s.Agent) {
			out = append(out, s.Agent)
		}
	})
	sort.Strings(out)
	return out
}

// Workflows returns the ids of the workflows its workflow steps run,
// sorted, each once.
func (w *Workflow) Workflows() []string {
	var out []string
	w.eachStep(func(s *Step) {
		if s.Kind == StepWorkflow && !slices.Contains(out, s.Workflow) {
			out = append(out, s.Workflow)
		}
	})
	sort.Strings(out)
	return out
}

// SchemaDialect is the JSON Schema of the published tool's schemas.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// InputSchema returns the workflow's inputs as the inputSchema of its
// published tool: a JSON Schema 2020-12 object with a property per input
// (type, description, default, enum) and the required ones listed; no other
// property is accepted.
func (w *Workflow) InputSchema() json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, in := range w.Inputs {
		p := map[string]any{"type": in.Type}
		if in.Description != "" {
			p["description"] = in.Description
		}
		if in.Default != nil {
			p["default"] = in.Default
		}
		if in.Enum != nil {
			p["enum"] = in.Enum
		}
		props[in.Name] = p
		if in.Required {
			required = append(required, in.Name)
		}
	}
	s := map[string]any{"$schema": SchemaDialect, "type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return mustJSON(s)
}

// OutputSchema returns the workflow's outputs as the outputSchema of its
// published tool: an object with a property per output, of the output's
// type (string when it says none).
func (w *Workflow) OutputSchema() json.RawMessage {
	props := map[string]any{}
	for _, o := range w.Outputs {
		t := o.Type
		if t == "" {
			t = "string"
		}
		// null too: an output that is not a string, over a step that was
		// skipped (its if was false, a gate's skip_rest), is null, and a
		// client that checks structuredContent against the schema must
		// accept it (a string output renders as "").
		p := map[string]any{"type": []string{t, "null"}}
		if o.Description != "" {
			p["description"] = o.Description
		}
		props[o.Name] = p
	}
	return mustJSON(map[string]any{"$schema": SchemaDialect, "type": "object", "properties": props})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("workflow: a schema that is not JSON: " + err.Error()) // built from decoded YAML: cannot happen
	}
	return b
}

// Annotations derives the published tool's safety annotations from its
// steps; toolAnnotations returns a host tool's (nil when it has none or is
// unknown, which MCP reads as: not read-only, destructive, open world). It
// is [Workflow.AnnotationsWith] with no workflow known: a workflow step
// counts as a tool with no annotations.
func (w *Workflow) Annotations(toolAnnotations func(name string) *mcp.ToolAnnotations) *mcp.ToolAnnotations {
	return w.AnnotationsWith(toolAnnotations, nil)
}

// AnnotationsWith is [Workflow.Annotations] where workflow steps count as
// the workflow they run (workflows returns it by id; nil, or a nil result:
// unknown). The tool is read-only only if every tool step's tool is (an
// agent step never is: its model chooses its tools), destructive if any
// step's may be, open-world if any step's may be; idempotent is never
// claimed (a run has its own id; a call is a new run). A gate changes
// nothing.
func (w *Workflow) AnnotationsWith(toolAnnotations func(name string) *mcp.ToolAnnotations, workflows func(id string) *Workflow) *mcp.ToolAnnotations {
	a := annotationsOf(w, toolAnnotations, workflows, map[string]bool{})
	return &mcp.ToolAnnotations{Title: w.Description, ReadOnlyHint: a.readOnly, DestructiveHint: &a.destructive, OpenWorldHint: &a.openWorld}
}

type hints struct{ readOnly, destructive, openWorld bool }

func annotationsOf(w *Workflow, tools func(string) *mcp.ToolAnnotations, workflows func(string) *Workflow, seen map[string]bool) hints {
	h := hints{readOnly: true}
	unknown := func() { h = hints{readOnly: false, destructive: true, openWorld: true} }
	seen[w.ID] = true
	defer delete(seen, w.ID)
	w.eachStep(func(s *Step) {
		switch s.Kind {
		case StepTool:
			var ta *mcp.ToolAnnotations
			if tools != nil {
				ta = tools(s.Tool)
			}
			if ta == nil {
				unknown()
				return
			}
			// MCP's defaults: destructive and open-world unless said otherwise;
			// destructiveHint means nothing for a read-only tool.
			if !ta.ReadOnlyHint {
				h.readOnly = false
				if ta.DestructiveHint == nil || *ta.DestructiveHint {
					h.destructive = true
				}
			}
			if ta.OpenWorldHint == nil || *ta.OpenWorldHint {
				h.openWorld = true
			}
		case StepAgent:
			unknown()
		case StepWorkflow:
			var child *Workflow
			if workflows != nil && !seen[s.Workflow] {
				child = workflows(s.Workflow)
			}
			if child == nil {
				unknown()
				return
			}
			c := annotationsOf(child, tools, workflows, seen)
			h.readOnly = h.readOnly && c.readOnly
			h.destructive = h.destructive || c.destructive
			h.openWorld = h.openWorld || c.openWorld
		}
	})
	if h.readOnly {
		h.destructive = false
	}
	return h
}

// CheckAll checks what spans workflow files: ids unique across files,
// workflow steps that name an existing workflow, with inputs it declares
// and every input it requires, and no cycle through workflow steps. The
// error joins a [*config.Problem] for each problem, at the step's file and
// line.
func CheckAll(wfs []*Workflow) error {
	var errs []error
	byID := map[string]*Workflow{}
	var ids []string
	for _, w := range wfs {
		if prev, dup := byID[w.ID]; dup {
			errs = append(errs, &config.Problem{Pos: config.Position{File: w.File, Line: 1}, Field: "id",
				Msg: fmt.Sprintf("workflow id %q is also %s's: ids are unique across files", w.ID, prev.File)})
			continue
		}
		byID[w.ID] = w
		ids = append(ids, w.ID)
	}
	for _, w := range wfs {
		if byID[w.ID] != w {
			continue
		}
		workflowSteps(w, func(s *Step, _ string, field string) {
			errs = append(errs, checkWith(w, s, field, byID[s.Workflow], ids)...)
		})
	}
	// A workflow that runs itself, directly or through others, would nest
	// runs without end (the engine's [Limits].MaxDepth stops it at run
	// time, for workflows checked apart).
	for _, w := range wfs {
		if byID[w.ID] != w {
			continue
		}
		workflowSteps(w, func(s *Step, step, field string) {
			if s.Workflow == w.ID {
				errs = append(errs, &config.Problem{Pos: config.Position{File: w.File, Line: s.Line}, Field: decode.KeyPath(field, "workflow"),
					Msg: fmt.Sprintf("step %s: workflow %s runs itself (%s → %s): a workflow step may not name its own workflow", step, w.ID, w.ID, w.ID)})
			}
		})
	}
	if cycle := findCycle(ids, func(id string) []string { return byID[id].Workflows() }); cycle != nil {
		w := byID[cycle[0]]
		line, field, step := 1, "steps", ""
		found := false
		workflowSteps(w, func(s *Step, id, f string) {
			if !found && s.Workflow == cycle[1] {
				found, line, field, step = true, s.Line, decode.KeyPath(f, "workflow"), id
			}
		})
		errs = append(errs, &config.Problem{Pos: config.Position{File: w.File, Line: line}, Field: field,
			Msg: fmt.Sprintf("step %s: workflows run each other in a cycle: %s", step, strings.Join(cycle, " → "))})
	}
	return errors.Join(errs...)
}

// workflowSteps calls f on each workflow step of w, a for_each's step
// included, with the id of the step of w it is (a for_each's step has
// its for_each's) and its field path.
func workflowSteps(w *Workflow, f func(s *Step, id, field string)) {
	for i, s := range w.Steps {
		field := decode.IndexPath("steps", i)
		if s.Kind == StepWorkflow {
			f(s, s.ID, field)
		}
		if st := innerStep(s); st != nil && st.Kind == StepWorkflow {
			f(st, s.ID, decode.KeyPath(decode.KeyPath(field, "for_each"), "step"))
		}
	}
}

// Runs returns the ids of the workflows w's steps run (workflow steps,
// and those of a for_each), in the order of its steps, each once.
func (w *Workflow) Runs() []string {
	var out []string
	workflowSteps(w, func(s *Step, _, _ string) {
		if !slices.Contains(out, s.Workflow) {
			out = append(out, s.Workflow)
		}
	})
	return out
}

func innerStep(s *Step) *Step {
	if s.ForEach != nil {
		return s.ForEach.Step
	}
	return nil
}

// checkWith checks a workflow step against the workflow it runs.
func checkWith(w *Workflow, s *Step, field string, child *Workflow, ids []string) []error {
	at := func(f string, format string, args ...any) error {
		return &config.Problem{Pos: config.Position{File: w.File, Line: s.Line}, Field: f, Msg: fmt.Sprintf(format, args...)}
	}
	if child == nil {
		return []error{at(decode.KeyPath(field, "workflow"), "no workflow %q%s", s.Workflow, didYouMean(s.Workflow, ids, "no workflow files were found"))}
	}
	var errs []error
	given := map[string]any{}
	if s.With != nil {
		given, _ = s.With.v.(map[string]any)
	}
	var names []string
	for _, in := range child.Inputs {
		names = append(names, in.Name)
		if _, ok := given[in.Name]; in.Required && !ok {
			errs = append(errs, at(decode.KeyPath(field, "with"), "missing %s: workflow %s requires it", in.Name, child.ID))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if !slices.Contains(names, k) {
			errs = append(errs, at(decode.KeyPath(decode.KeyPath(field, "with"), k), "workflow %s has no input %q%s", child.ID, k, didYouMean(k, names, "it has no inputs")))
		}
	}
	return errs
}
