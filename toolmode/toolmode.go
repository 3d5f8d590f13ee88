// Package toolmode defines the tools a model is given in place of many:
// search_tools and call_tool (search mode), search_tools and run_code
// (code mode). The gateway's search and code endpoints list them to
// clients, and the agent runner gives them to its model, so both say the
// same thing: one definition of each tool, one reading of its arguments
// with the same errors, one shape of search_tools' answer.
//
// The package holds words and shapes only. Ranking is package toolsearch's,
// the sandbox package codemode's; what a call may do is decided by whoever
// answers it (the gateway's middleware chain, the agent's host).
package toolmode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools' names.
const (
	SearchTools = "search_tools"
	CallTool    = "call_tool"
	RunCode     = "run_code"
)

// Bounds of search_tools' limit: a few definitions are what a model
// needs to choose; more would bring back the context search mode saves.
const (
	DefaultSearchLimit = 8
	MaxSearchLimit     = 50
)

// The definitions. They do not depend on the tools behind them, so a
// client lists them once. They are shared: copy one before changing it
// (the agent appends its program's declarations to run_code's).
var (
	SearchToolsDef = &mcp.Tool{
		Name:  SearchTools,
		Title: "Search tools",
		Description: "Find the tools for a task among the many available (they are not listed). " +
			"Describe what you want to do in a few words, e.g. \"create a GitHub issue\" or \"read a log file\"; " +
			"the answer lists the best matches, each with its name, title, description and inputSchema (JSON Schema). " +
			"Then call the one that fits with " + CallTool + ", passing its exact name and arguments that match its inputSchema " +
			"(with " + RunCode + ", call it from your program as its function names it). " +
			"If nothing fits, search again with other words. Results always reflect the current tools.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What you want to do, in a few words"},` +
			`"limit":{"type":"integer","minimum":1,"maximum":` + fmt.Sprint(MaxSearchLimit) + `,"description":"How many tools to return (default ` + fmt.Sprint(DefaultSearchLimit) + `)"}` +
			`},"required":["query"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}
	CallToolDef = &mcp.Tool{
		Name:  CallTool,
		Title: "Call a tool",
		Description: "Call a tool found with " + SearchTools + ": name is the tool's exact name from the search results, " +
			"arguments an object matching that tool's inputSchema. The answer is the tool's own result. " +
			"Search first: tool names are not guessable.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The tool's name, as ` + SearchTools + ` gave it"},` +
			`"arguments":{"type":"object","description":"The tool's arguments, matching its inputSchema"}` +
			`},"required":["name"],"additionalProperties":false}`),
	}
	RunCodeDef = &mcp.Tool{
		Name:  RunCode,
		Title: "Run code that calls tools",
		Description: "Run a JavaScript program that calls tools and combines their results, instead of calling them one by one. " +
			"In the program each tool is an async function of one arguments object: " +
			"`const r = await tools.<namespace>.<function>({...})`; " + SearchTools + " finds tools not declared here and names each one's function. " +
			"The program has no filesystem, network, timers or modules, and a time and memory budget. " +
			"The answer is the program's return value and its console output.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"code":{"type":"string","description":"The body of an async JavaScript function; what it returns is the result"}` +
			`},"required":["code"],"additionalProperties":false}`),
	}
)

// An ArgumentError is a call of one of the tools with arguments it cannot
// use; its text, for the model, says what to send.
type ArgumentError struct{ Msg string }

func (e *ArgumentError) Error() string { return e.Msg }

func argErr(format string, args ...any) error {
	return &ArgumentError{Msg: fmt.Sprintf(format, args...)}
}

// orEmpty reads absent arguments as {}.
func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return json.RawMessage(`{}`)
	}
	return b
}

// MaxQueryBytes bounds search_tools' query: a few words find a tool, and
// ranking costs time with every word (a query comes from outside).
const MaxQueryBytes = 1024

// ParseSearch reads search_tools' arguments: the query, and the limit
// (DefaultSearchLimit when absent).
func ParseSearch(arguments json.RawMessage) (query string, limit int, err error) {
	var in struct {
		Query string `json:"query"`
		Limit *int   `json:"limit"`
	}
	if err := json.Unmarshal(orEmpty(arguments), &in); err != nil {
		return "", 0, argErr("%s: arguments must be an object with query (a string) and limit (a number): %v", SearchTools, err)
	}
	if strings.TrimSpace(in.Query) == "" {
		return "", 0, argErr("%s: query is empty: say in a few words what you want to do", SearchTools)
	}
	if len(in.Query) > MaxQueryBytes {
		return "", 0, argErr("%s: query is %d bytes, more than %d: say in a few words what you want to do", SearchTools, len(in.Query), MaxQueryBytes)
	}
	limit = DefaultSearchLimit
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxSearchLimit {
			return "", 0, argErr("%s: limit must be between 1 and %d, not %d", SearchTools, MaxSearchLimit, *in.Limit)
		}
		limit = *in.Limit
	}
	return in.Query, limit, nil
}

// ParseCall reads call_tool's arguments: the tool's name and its
// arguments (nil when absent).
func ParseCall(arguments json.RawMessage) (name string, args json.RawMessage, err error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(orEmpty(arguments), &in); err != nil || in.Name == "" {
		return "", nil, argErr("%s: arguments must be an object with name (a string, the tool's name from %s) and arguments (an object)", CallTool, SearchTools)
	}
	return in.Name, in.Arguments, nil
}

// ParseRunCode reads run_code's arguments: the program.
func ParseRunCode(arguments json.RawMessage) (code string, err error) {
	var in struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(orEmpty(arguments), &in); err != nil || strings.TrimSpace(in.Code) == "" {
		return "", argErr("%s: arguments must be an object with code, the JavaScript program (a non-empty string)", RunCode)
	}
	return in.Code, nil
}

// Found is one tool in search_tools' answer.
type Found struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema"`
	// Function is how a run_code program calls the tool
	// ("tools.github.search_issues"), and Declaration that call typed
	// from the input schema ("tools.github.search_issues(args: { q:
	// string }): Promise<ToolResult>"); code mode sets them.
	Function    string `json:"function,omitempty"`
	Declaration string `json:"declaration,omitempty"`
}

// Answer is search_tools' answer for query: the text the model reads
// (the JSON of {"tools": found}, or, when nothing was found, a sentence
// saying to try other words) and the JSON for structured content.
func Answer(query string, found []Found) (text string, structured json.RawMessage, err error) {
	if found == nil {
		found = []Found{}
	}
	// Not escaped for HTML: a model reads "Promise<ToolResult>", not
	// "Promise\u003cToolResult\u003e".
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Tools []Found `json:"tools"`
	}{found}); err != nil {
		return "", nil, err
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	if len(found) == 0 {
		return fmt.Sprintf("No tool matches %q. Try other words: what the tool does, the service it works on.", query), b, nil
	}
	return string(b), b, nil
}
