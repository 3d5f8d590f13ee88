package agent

// Search mode and code mode in a run (tool_mode). The model is given, in
// place of the run's tools, search_tools and call_tool (search) or
// search_tools and run_code (code): the definitions of package toolmode,
// which the gateway's search and code endpoints list too. What a call may
// do does not change: call_tool and each tool call of a run_code program
// go through run.callTool, the path of a direct call (the run's tools
// only, host.CallTool with the run's elicitation and sampling, redaction,
// cleaning), and their agent:tool_call and agent:tool_result events name
// the tool called, with Call.Via saying how.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/toolmode"
	"github.com/switchboardmcp/switchboard/toolsearch"
)

// RunCode runs a code-mode program (tool_mode: code): sandbox.Run (package
// codemode/sandbox), set by
// the binary where it has code mode (cmd/switchboard/internal/cli's
// coderun.go; a -tags noui build leaves it nil, and run_code answers that
// code mode is not available). goja, the sandbox's engine, keeps the linker
// from dropping unused methods (docs/size.md), so nothing links it unless
// the binary sets this.
var RunCode func(ctx context.Context, code string, tools []codemode.Tool, call codemode.Caller, b codemode.Budget) (*codemode.Result, error)

// MaxDeclaredTools bounds the tools run_code's description declares
// (codemode.Declarations): all of the run's tools when there are this
// many or fewer, else this many best matches for the prompt; the model
// finds the others with search_tools, whose answer names each one's
// function. A declaration costs about a hundred tokens.
const MaxDeclaredTools = 20

// toolset is what the model is given and may call in one run.
type toolset struct {
	mode    string          // ToolModeAll, ToolModeSearch or ToolModeCode (auto resolved)
	offered map[string]bool // the host names the run may call
	llm     []llm.Tool      // what the model is given

	// Search and code mode.
	tools []host.Tool
	ix    *toolsearch.Index
	// Code mode: the program's tools (one per function: a tool whose
	// function another already has is left out), and each host name's
	// function ("tools.github.search_issues").
	code     []codemode.Tool
	function map[string]string
}

// toolMode resolves the agent's tool mode for a run of n tools.
func toolMode(a *Agent, n int) string {
	switch a.ToolMode {
	case ToolModeAll, ToolModeSearch, ToolModeCode:
		return a.ToolMode
	}
	above := a.SearchAbove
	if above <= 0 {
		above = DefaultSearchAbove
	}
	if n > above {
		return ToolModeSearch
	}
	return ToolModeAll
}

// newToolset gives the model tools in mode.
func newToolset(mode, prompt string, tools []host.Tool) *toolset {
	ts := &toolset{mode: mode, offered: map[string]bool{}}
	for _, t := range tools {
		ts.offered[t.Name] = true
	}
	if mode == ToolModeAll {
		ts.llm = make([]llm.Tool, len(tools))
		for i, t := range tools {
			params, _ := json.Marshal(t.Tool.InputSchema)
			ts.llm[i] = llm.Tool{Name: t.Name, Description: t.Tool.Description, Parameters: params}
		}
		return ts
	}
	ts.tools = tools
	ts.ix = toolsearch.New(docsOf(tools))
	if mode == ToolModeSearch {
		ts.llm = []llm.Tool{llmTool(toolmode.SearchToolsDef, ""), llmTool(toolmode.CallToolDef, "")}
		return ts
	}
	ts.function = map[string]string{}
	seen := map[string]bool{}
	for _, t := range tools {
		ct := codemode.Tool{Name: t.Name, Namespace: t.Server, Function: t.Tool.Name,
			Description: t.Tool.Description, InputSchema: schemaJSON(t.Tool.InputSchema)}
		fn := "tools." + codemode.Identifier(ct.Namespace) + "." + codemode.Identifier(ct.Function)
		if seen[fn] {
			continue // sandbox.Run refuses two tools of one function
		}
		seen[fn] = true
		ts.code = append(ts.code, ct)
		ts.function[t.Name] = fn
	}
	declared := ts.code
	note := ""
	if len(ts.code) > MaxDeclaredTools {
		declared = nil
		for _, h := range ts.ix.SearchFunc(prompt, MaxDeclaredTools, func(i int) bool { return ts.function[tools[i].Name] != "" }) {
			declared = append(declared, ts.byName(tools[h.Index].Name))
		}
		note = fmt.Sprintf("\n\n%d of the %d tools are declared below, those that best match the task; %s finds the others.",
			len(declared), len(ts.code), toolmode.SearchTools)
		if len(declared) == 0 {
			note = fmt.Sprintf("\n\nThere are %d tools, none declared here: find them with %s.", len(ts.code), toolmode.SearchTools)
		}
	}
	ts.llm = []llm.Tool{llmTool(toolmode.SearchToolsDef, ""), llmTool(toolmode.RunCodeDef, note+"\n\n"+codemode.Declarations(declared))}
	return ts
}

// byName is the program's tool of a host name.
func (ts *toolset) byName(name string) codemode.Tool {
	for _, t := range ts.code {
		if t.Name == name {
			return t
		}
	}
	return codemode.Tool{}
}

func schemaJSON(s any) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// llmTool is a toolmode definition for the model, its description
// followed by more.
func llmTool(t *mcp.Tool, more string) llm.Tool {
	params, _ := json.Marshal(t.InputSchema)
	return llm.Tool{Name: t.Name, Description: t.Description + more, Parameters: params}
}

// isMeta reports whether name is one of the mode's own tools.
func (ts *toolset) isMeta(name string) bool {
	switch ts.mode {
	case ToolModeSearch:
		return name == toolmode.SearchTools || name == toolmode.CallTool
	case ToolModeCode:
		return name == toolmode.SearchTools || name == toolmode.RunCode
	}
	return false
}

// search answers search_tools.
func (ts *toolset) search(arguments json.RawMessage) (string, CallErrorCode) {
	query, limit, err := toolmode.ParseSearch(arguments)
	if err != nil {
		return err.Error(), CallInvalidArguments
	}
	keep := func(int) bool { return true }
	if ts.mode == ToolModeCode {
		keep = func(i int) bool { return ts.function[ts.tools[i].Name] != "" }
	}
	hits := ts.ix.SearchFunc(query, limit, keep)
	found := make([]toolmode.Found, len(hits))
	for i, h := range hits {
		t := ts.tools[h.Index]
		found[i] = toolmode.Found{Name: t.Name, Title: t.Tool.Title, Description: t.Tool.Description, InputSchema: t.Tool.InputSchema,
			Function: ts.function[t.Name]}
		if found[i].Function != "" {
			found[i].Declaration = codemode.Signature(ts.byName(t.Name))
		}
	}
	text, _, err := toolmode.Answer(query, found)
	if err != nil {
		return err.Error(), CallFailed
	}
	return truncate(text, MaxResultBytes), ""
}

// The reasons a run_code call fails, beside the tools' own.
const (
	CallCodeError  CallErrorCode = "code_error"  // the program failed: a syntax error, an exception it did not catch (a tool's error among them)
	CallCodeBudget CallErrorCode = "code_budget" // the program spent a budget (code_budget: CPU or wall time, tool calls; memory, output)
)

// runCode answers run_code: the program runs in codemode's sandbox with
// the run's tools, each call through r.callTool (and reported as a call
// of its own, Via run_code, its id the run_code call's with ".1", ".2", …
// after it). The answer is the program's value and console output,
// cleaned and redacted; a budget spent or a failed program is an error
// result.
func (r *run) runCode(ctx context.Context, step int, c llm.ToolCall, ts *toolset, sampling host.SamplingHandler) (string, CallErrorCode) {
	code, err := toolmode.ParseRunCode(c.Arguments)
	if err != nil {
		return err.Error(), CallInvalidArguments
	}
	var n atomic.Int64
	call := func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
		inner := llm.ToolCall{ID: fmt.Sprintf("%s.%d", c.ID, n.Add(1)), Name: name, Arguments: args}
		announce := func(args json.RawMessage) {
			r.emit(Event{Type: EventToolCall, Step: step, Call: &Call{ID: inner.ID, Tool: name, Via: toolmode.RunCode, Arguments: args}})
		}
		start := r.now()
		res, text, ecode := r.callToolResult(ctx, inner, ts.offered, sampling, announce)
		ok := ecode == ""
		d := r.now().Sub(start).Milliseconds()
		r.emit(Event{Type: EventToolResult, Step: step, Call: &Call{ID: inner.ID, Tool: name, Via: toolmode.RunCode, Success: &ok, ErrorCode: ecode,
			Output: truncate(text, EventOutputBytes), DurationMS: &d, Guardrails: guardrailRecords(res)}})
		if res == nil {
			return nil, errors.New(text)
		}
		return res, nil
	}
	if RunCode == nil {
		return "code mode is not available in this build: use " + toolmode.SearchTools + " and the tools it finds", CallCodeError
	}
	res, err := RunCode(ctx, code, ts.code, call, r.o.Agent.CodeBudget)
	switch {
	case err == nil:
		return r.red.Redact(host.CleanText(codeOutput(res))), ""
	case ctx.Err() != nil:
		return r.red.Redact(err.Error()), CallFailed
	}
	ecode := CallCodeError
	if errors.Is(err, codemode.ErrBudget) {
		ecode = CallCodeBudget
	}
	msg := err.Error()
	if res != nil && res.Console != "" {
		msg += "\nconsole:\n" + res.Console
	}
	return r.red.Redact(host.CleanText(truncate(msg, MaxResultBytes))), ecode
}

// codeOutput is what the model reads of a program's result: its value
// (JSON) and, after it, its console output.
func codeOutput(res *codemode.Result) string {
	var b strings.Builder
	switch {
	case res.Value != nil:
		b.Write(res.Value)
	default:
		b.WriteString("(the program returned nothing)")
	}
	if res.Console != "" {
		b.WriteString("\nconsole:\n")
		b.WriteString(res.Console)
	}
	return truncate(b.String(), MaxResultBytes)
}

// cleanResult is res as a program may see it: its text cleaned and
// redacted as a direct call's, and its structured content redacted (left
// out when redaction leaves it unreadable).
func (r *run) cleanResult(res *mcp.CallToolResult, text string) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	if recs, ok := res.Meta[guardrail.MetaKey]; ok {
		// What the guardrails did, for the run's events: no matched text.
		out.Meta = mcp.Meta{guardrail.MetaKey: recs}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			s := r.red.Redact(host.CleanText(string(b)))
			if json.Valid([]byte(s)) {
				out.StructuredContent = json.RawMessage(s)
			}
		}
	}
	return out
}
