package gateway

// Search mode and code mode (Endpoint.Mode): an endpoint that lists, in
// place of the tools it offers, search_tools and call_tool (search) or
// search_tools and run_code (code), so that a client's model reads two
// tool definitions instead of hundreds.
//
// Nothing about what a call may do changes. The endpoint's MCP server
// still has every tool it offers (syncTools publishes them as in mode
// "all"); only tools/list answers otherwise, and:
//
//   - call_tool {name, arguments} is rewritten, outermost (modeRewrite),
//     into the tools/call of name that a client of mode "all" would send,
//     and that request runs the endpoint's whole middleware chain and
//     handler: telemetry and usage labelled by the inner tool, the
//     guard's and the policy's checks, awaitStart, redaction, validation
//     and the tool's server's timeout in the host. A tool the caller's
//     policy denies is "unknown", as it is to a direct call.
//   - search_tools {query, limit} ranks (package toolsearch) what the
//     endpoint offers (Endpoint.Offer), less what the caller's grant
//     denies, always over the current catalog: the index is rebuilt by
//     syncTools whenever what the endpoint offers changes.
//   - run_code {code} (code mode) is Options.CodeRunner's; each tool call
//     a program makes is dispatched like call_tool's.
//
// The two tools' definitions never change, so a search endpoint sends no
// notifications/tools/list_changed (quietToolsChanged): its clients need
// not re-list, because every search answers from the catalog as it is.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/toolmode"
	"github.com/switchboardmcp/switchboard/toolsearch"
)

// The tools of search and code mode (package toolmode, which the agent
// runner shares).
const (
	SearchToolName = toolmode.SearchTools
	CallToolName   = toolmode.CallTool
	RunCodeName    = toolmode.RunCode
)

// Bounds of search_tools' limit (package toolmode's).
const (
	DefaultSearchLimit = toolmode.DefaultSearchLimit
	MaxSearchLimit     = toolmode.MaxSearchLimit
)

// ErrCodeModeUnavailable is run_code's answer when the gateway has no
// Options.CodeRunner.
var ErrCodeModeUnavailable = errors.New("code mode is not available in this build: use search_tools and call the tools it finds")

// Embeddings blends embeddings into search_tools' ranking
// (Options.Embeddings; [search] in the configuration).
type Embeddings struct {
	// Embedder computes vectors (package llm: Ollama, OpenAI-compatible).
	Embedder toolsearch.Embedder
	// Model names the vectors in Cache.
	Model string
	// Cache keeps the tools' vectors by definition; nil keeps none.
	Cache toolsearch.Cache
}

// CodeBudget bounds one run_code program ([code] in the configuration;
// config.Code.WithDefaults gives the defaults).
type CodeBudget struct {
	CPUTime, WallTime time.Duration
	// Memory and Output are in bytes.
	Memory, Output int
}

// CodeRunner is THE HOOK of code mode: it runs a run_code program. The
// gateway owns everything around it — the run_code tool, the caller's
// tools, the path every call takes — and the runner only the sandbox
// (package codemode). With Options.CodeRunner nil, run_code answers
// [ErrCodeModeUnavailable] as a tool error.
type CodeRunner interface {
	// RunCode runs req.Code within req.Budget and answers its result: the
	// program's return value and console output (the gateway redacts the
	// result as any other), or a tool error (isError) for a program that
	// fails, throws or exceeds its budget. A Go error is for a failure of
	// the runner itself. ctx ends with the run_code request.
	RunCode(ctx context.Context, req CodeRequest) (*mcp.CallToolResult, error)
}

// A CodeToolDefiner is a CodeRunner that gives run_code's definition
// itself (its description tells a model how to write programs for this
// runner): the gateway lists it, named run_code, in place of its own.
// It must not change while the gateway runs (clients list it once).
type CodeToolDefiner interface {
	RunCodeTool() *mcp.Tool
}

// A CodeNamer is a CodeRunner that says how a program calls a tool
// (tools.github.search_issues), and that call typed from the tool's input
// schema: code mode's search_tools gives them with each tool found, as
// "function" and "declaration", so a model writes the call it read.
type CodeNamer interface {
	CodeName(t OfferedTool) (function, declaration string)
}

// CodeRequest is one run_code call, as a CodeRunner gets it.
type CodeRequest struct {
	// Code is the program, as the client sent it.
	Code string
	// Tools are the tools the program may call: those the endpoint offers
	// and the caller's grant allows, named (Tool.Name) as the endpoint's
	// clients call them, with their servers and input schemas (for the
	// program's declarations).
	Tools []OfferedTool
	// Call calls one of Tools by name exactly as call_tool would (policy,
	// validation, redaction, timeouts, telemetry and usage by the tool).
	// A tool's own failure is a result with IsError; an error is a
	// protocol or transport failure (an unknown or denied tool is one).
	// Its ctx should derive from RunCode's.
	Call func(ctx context.Context, name string, arguments json.RawMessage) (*mcp.CallToolResult, error)
	// Budget bounds the program (Options.Code).
	Budget CodeBudget
}

// searchState is what search_tools ranks: the endpoint's offered tools,
// indexed in the same order.
type searchState struct {
	ix    *toolsearch.Index
	tools []OfferedTool
}

// searching reports whether the endpoint lists search_tools in place of
// its tools.
func (e Endpoint) searching() bool { return e.Mode == config.ModeSearch || e.Mode == config.ModeCode }

// indexTools rebuilds what search_tools ranks from what the endpoint
// offers now; with Options.Embeddings, an index with embeddings replaces
// it once they are computed (on a goroutine: a provider must not hold a
// resync), unless the catalog changed meanwhile.
func (ep *endpoint) indexTools(offered []OfferedTool) {
	docs := make([]toolsearch.Doc, len(offered))
	for i, o := range offered {
		docs[i] = toolsearch.Doc{Name: o.Tool.Name, Server: o.Server, Title: o.Tool.Title, Description: o.Tool.Description, InputSchema: o.Tool.InputSchema}
	}
	st := &searchState{ix: toolsearch.New(docs), tools: offered}
	ep.search.Store(st)
	em := ep.g.opts.Embeddings
	if em == nil || em.Embedder == nil || len(docs) == 0 {
		return
	}
	g := ep.g
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		// Bounded: a provider that does not answer leaves search lexical.
		ctx, cancel := context.WithTimeout(g.ctx, embedTimeout)
		defer cancel()
		ix := toolsearch.New(docs)
		if err := ix.Embed(ctx, em.Embedder, em.Model, em.Cache); err != nil {
			if g.ctx.Err() == nil {
				g.log.Warn("search: embedding the tools failed; ranking lexically", "endpoint", ep.Name, "err", g.red.Redact(err.Error()))
			}
			return
		}
		ep.search.CompareAndSwap(st, &searchState{ix: ix, tools: offered})
	}()
}

// embedTimeout bounds computing a catalog's embeddings.
const embedTimeout = 2 * time.Minute

// The definitions of the mode's tools are package toolmode's: the agent
// runner gives its model the same. They do not depend on the catalog: a
// client lists them once.
var (
	searchToolDef = toolmode.SearchToolsDef
	callToolDef   = toolmode.CallToolDef
	runCodeDef    = toolmode.RunCodeDef
)

// modeTools are what the endpoint lists in its mode.
func (ep *endpoint) modeTools() []*mcp.Tool {
	if ep.Mode == config.ModeCode {
		def := runCodeDef
		if d, ok := ep.g.opts.CodeRunner.(CodeToolDefiner); ok {
			if t := d.RunCodeTool(); t != nil {
				c := *t
				c.Name = RunCodeName
				def = &c
			}
		}
		return []*mcp.Tool{def, searchToolDef}
	}
	return []*mcp.Tool{callToolDef, searchToolDef}
}

// innerCall marks a tools/call the gateway made of a call_tool or a
// run_code program: modeMiddleware passes it on as it is, so that an
// upstream tool named search_tools stays callable through call_tool.
type innerCall struct{}

// modeRewrite is the endpoint's outermost middleware: in search mode it
// turns call_tool {name, arguments} into the tools/call of name that a
// client of mode "all" would make, and keeps the chain below it
// (ep.dispatch) for run_code's calls.
func (ep *endpoint) modeRewrite(next mcp.MethodHandler) mcp.MethodHandler {
	ep.dispatch = next
	if ep.Mode != config.ModeSearch {
		// Mode all has no call_tool (an upstream tool of that name is
		// called as it is); code mode lists run_code instead.
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || r.Params == nil || r.Params.Name != CallToolName || ctx.Value(innerCall{}) != nil {
			return next(ctx, method, req)
		}
		name, arguments, err := toolmode.ParseCall(r.Params.Arguments)
		if err != nil {
			return toolError("%v", err), nil
		}
		return ep.callInner(ctx, r, name, arguments)
	}
}

// callInner makes the tools/call of name with arguments that a client of
// mode "all" would make, in place of outer (its session, its transport's
// extra, its _meta and its 2026-07-28 input responses), through the
// endpoint's whole chain. An unknown or denied tool is a tool error, which
// a model can act on.
func (ep *endpoint) callInner(ctx context.Context, outer *mcp.CallToolRequest, name string, arguments json.RawMessage) (mcp.Result, error) {
	p := *outer.Params
	p.Name, p.Arguments = name, arguments
	inner := *outer
	inner.Params = &p
	res, err := ep.dispatch(context.WithValue(ctx, innerCall{}, true), "tools/call", &inner)
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && strings.Contains(je.Message, "unknown tool") {
		return toolError("%s; call %s to find the tools you can call", je.Message, SearchToolName), nil
	}
	return res, err
}

// modeMiddleware answers tools/list with the mode's tools, and
// search_tools and run_code. It runs inside the telemetry, logging and
// redaction and outside awaitStart and the policy, which search_tools
// applies itself to what it ranks.
func (ep *endpoint) modeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	if !ep.searching() {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			return &mcp.ListToolsResult{Tools: ep.modeTools()}, nil
		case "tools/call":
			r, _ := req.(*mcp.CallToolRequest)
			if r == nil || r.Params == nil || ctx.Value(innerCall{}) != nil {
				break
			}
			switch {
			case r.Params.Name == SearchToolName:
				// As tools/list does, it waits for the servers the
				// configuration requires.
				return ep.awaitStart(func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
					return ep.searchTools(ctx, r)
				})(ctx, "tools/list", req)
			case r.Params.Name == RunCodeName && ep.Mode == config.ModeCode:
				return ep.awaitStart(func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
					return ep.runCode(ctx, r)
				})(ctx, "tools/list", req)
			}
		}
		return next(ctx, method, req)
	}
}

// granted is what the caller of req may see of the endpoint's tools under
// its policy: nil for everything.
func (ep *endpoint) granted(ctx context.Context, req mcp.Request) func(OfferedTool) bool {
	if len(ep.Policy) == 0 {
		return nil
	}
	ti := tokenInfo(ctx, req)
	if ti == nil {
		return nil
	}
	gr := GrantFor(ep.Policy, ti)
	return func(o OfferedTool) bool { return gr.Tool(o.Server, o.HostName) }
}

// searchTools answers search_tools.
func (ep *endpoint) searchTools(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	query, limit, err := toolmode.ParseSearch(r.Params.Arguments)
	if err != nil {
		return toolError("%v", err), nil
	}
	st := ep.search.Load()
	if st == nil {
		st = &searchState{ix: toolsearch.New(nil)}
	}
	allow := ep.granted(ctx, r)
	keep := func(i int) bool { return allow == nil || allow(st.tools[i]) }
	hits, err := st.ix.SearchContext(ctx, query, limit, keep)
	if err != nil {
		ep.g.log.Warn("search: the query's embedding failed; ranking lexically", "endpoint", ep.Name, "err", ep.g.red.Redact(err.Error()))
	}
	namer, _ := ep.g.opts.CodeRunner.(CodeNamer)
	if ep.Mode != config.ModeCode {
		namer = nil
	}
	found := make([]toolmode.Found, len(hits))
	for i, h := range hits {
		t := st.tools[h.Index].Tool
		found[i] = toolmode.Found{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
		if namer != nil {
			found[i].Function, found[i].Declaration = namer.CodeName(st.tools[h.Index])
		}
	}
	text, structured, err := toolmode.Answer(query, found)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}, nil
}

// runCode answers run_code through Options.CodeRunner.
func (ep *endpoint) runCode(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	runner := ep.g.opts.CodeRunner
	if runner == nil {
		return toolError("%v", ErrCodeModeUnavailable), nil
	}
	code, err := toolmode.ParseRunCode(r.Params.Arguments)
	if err != nil {
		return toolError("%v", err), nil
	}
	var tools []OfferedTool
	if st := ep.search.Load(); st != nil {
		allow := ep.granted(ctx, r)
		for _, o := range st.tools {
			if allow == nil || allow(o) {
				tools = append(tools, o)
			}
		}
	}
	return runner.RunCode(ctx, CodeRequest{
		Code:   code,
		Tools:  tools,
		Budget: ep.g.opts.Code,
		Call: func(ctx context.Context, name string, arguments json.RawMessage) (*mcp.CallToolResult, error) {
			p := *r.Params
			p.Meta = nil // the program's calls are its own: not the run_code's progress token
			outer := *r
			outer.Params = &p
			res, err := ep.callInner(ctx, &outer, name, arguments)
			if err != nil {
				return nil, err
			}
			ctr, ok := res.(*mcp.CallToolResult)
			if !ok {
				return nil, fmt.Errorf("%s: the call answered %T", name, res)
			}
			return ctr, nil
		},
	})
}

// quietToolsChanged drops notifications/tools/list_changed on an endpoint
// in search or code mode: what it lists never changes (see the file's
// comment).
func (ep *endpoint) quietToolsChanged(next mcp.MethodHandler) mcp.MethodHandler {
	if !ep.searching() {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/tools/list_changed" {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// toolError is a tool result with IsError, saying what went wrong.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
