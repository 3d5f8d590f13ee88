// Package coderun is code mode's runner: it runs the gateway's run_code
// programs (gateway.CodeRunner) in code mode's sandbox (codemode/sandbox).
//
// The gateway owns everything around a program — the run_code tool, the
// tools its caller may use, and the path each call takes (policy,
// validation, redaction, timeouts, telemetry) — and this package only
// what is between: each tool becomes tools.<server>.<name>(args) (its
// server's id, and its name with the gateway's mcp_<server>_ prefix taken
// off), the configured budget becomes the sandbox's, and the program's
// value and console output become run_code's result, or a tool error
// naming what failed or which budget was spent.
//
// It is a package of its own, linked by the binary only where code mode
// is built in (not with -tags noui): goja, the sandbox's engine, wraps Go
// values by reflection, which keeps the linker from dropping unused
// methods (docs/size.md).
//
//	gwOpts.CodeRunner = coderun.New()
package coderun

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/codemode/sandbox"
	"github.com/switchboardmcp/switchboard/gateway"
)

// Runner runs run_code programs. The zero value is ready; it keeps no
// state between programs (each runs in a fresh runtime).
type Runner struct{}

// New returns a Runner.
func New() *Runner { return &Runner{} }

var (
	_ gateway.CodeRunner      = (*Runner)(nil)
	_ gateway.CodeToolDefiner = (*Runner)(nil)
	_ gateway.CodeNamer       = (*Runner)(nil)
)

// Tools are the sandbox's tools for the gateway's: namespace the server,
// function the tool's name less its mcp_<server>_ prefix, each called
// under the name the endpoint's clients use. Of two tools whose names
// make the same identifier (get-issue, get_issue), the first is kept: the
// sandbox refuses a list with both, and one odd name must not take code
// mode away from every other tool.
func Tools(offered []gateway.OfferedTool) []codemode.Tool {
	out := make([]codemode.Tool, 0, len(offered))
	seen := map[string]bool{}
	for _, o := range offered {
		key := codemode.Identifier(o.Server) + "." + codemode.Identifier(function(o))
		if seen[key] {
			continue
		}
		seen[key] = true
		schema, _ := json.Marshal(o.Tool.InputSchema)
		out = append(out, codemode.Tool{Name: o.Tool.Name, Namespace: o.Server, Function: function(o),
			Description: o.Tool.Description, InputSchema: schema})
	}
	return out
}

// function is a tool's name in its server's namespace.
func function(o gateway.OfferedTool) string {
	return strings.TrimPrefix(o.Tool.Name, "mcp_"+o.Server+"_")
}

// CodeName is how a program calls t: tools.<server>.<function>, as
// identifiers (codemode.Identifier), and that call typed from t's input
// schema (codemode.Signature).
func (*Runner) CodeName(t gateway.OfferedTool) (function, declaration string) {
	ct := Tools([]gateway.OfferedTool{t})[0]
	return "tools." + codemode.Identifier(ct.Namespace) + "." + codemode.Identifier(ct.Function), codemode.Signature(ct)
}

// RunCodeTool is run_code's definition: how to write a program for this
// sandbox (codemode.Header) and how to find the tools.
func (*Runner) RunCodeTool() *mcp.Tool {
	return &mcp.Tool{
		Name:  gateway.RunCodeName,
		Title: "Run code that calls tools",
		Description: "Run a JavaScript program that calls this server's tools and combines their results, instead of calling them one by one " +
			"(the intermediate results stay out of your context). Find the tools with " + gateway.SearchToolName +
			" first: each result's \"function\" is the async function to call (\"declaration\" types its arguments), e.g. `const r = await tools.github.search_issues({q: \"…\"})`, " +
			"with arguments matching its inputSchema; a tool's result is its structured content, or its text. " +
			"Tools may be called together with Promise.all. The program has no filesystem, network, timers, eval or modules, " +
			"and budgets of CPU and wall time, memory, output and calls. The answer is the program's return value and its console output.\n\n" +
			codemode.Header,
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"code":{"type":"string","description":"The body of an async JavaScript function: await the tools, return the result"}` +
			`},"required":["code"],"additionalProperties":false}`),
	}
}

// RunCode runs req's program. What the program returns and logs is the
// result, as JSON {"value", "console", "calls"} (structured and as text);
// a program that throws, fails to parse or spends a budget is a tool error
// saying so. A Go error is for a budget the sandbox refuses.
func (*Runner) RunCode(ctx context.Context, req gateway.CodeRequest) (*mcp.CallToolResult, error) {
	b := codemode.Budget{CPUTime: req.Budget.CPUTime, WallTime: req.Budget.WallTime,
		MemoryBytes: int64(req.Budget.Memory), OutputBytes: req.Budget.Output}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	res, err := sandbox.Run(ctx, req.Code, Tools(req.Tools), codemode.Caller(req.Call), b)
	switch {
	case errors.Is(err, codemode.ErrBudget), errors.Is(err, codemode.ErrProgram):
		text := err.Error()
		if res != nil && res.Console != "" {
			text += "\nconsole:\n" + res.Console
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	case err != nil:
		return nil, err
	}
	out := struct {
		Value   json.RawMessage `json:"value"`
		Console string          `json:"console,omitempty"`
		Calls   int             `json:"calls"`
	}{res.Value, res.Console, res.Calls}
	if out.Value == nil {
		out.Value = json.RawMessage("null")
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}, nil
}
