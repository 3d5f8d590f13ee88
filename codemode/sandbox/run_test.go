package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/codemode/sandbox"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// fixture is a real MCP server over in-memory transports: the Caller the
// tests give Run is a client session's CallTool, as a host's would be.
type fixture struct {
	tools    []codemode.Tool
	call     codemode.Caller
	inFlight atomic.Int32
	maxSeen  atomic.Int32
}

type searchIn struct {
	Q     string `json:"q" jsonschema:"the query"`
	Limit int    `json:"limit,omitempty"`
}
type searchOut struct {
	Issues []int `json:"issues"`
}
type getIn struct {
	Number int `json:"number"`
}
type getOut struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{}
	s := mcp.NewServer(&mcp.Implementation{Name: "fx", Version: "1"}, nil)
	// Calls made together are seen together: get_issue records how many
	// were in flight at once.
	track := func() func() {
		n := f.inFlight.Add(1)
		for {
			m := f.maxSeen.Load()
			if n <= m || f.maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		return func() { f.inFlight.Add(-1) }
	}
	mcp.AddTool(s, &mcp.Tool{Name: "mcp_github_search_issues", Description: "Search issues."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
			n := in.Limit
			if n == 0 {
				n = 3
			}
			out := searchOut{}
			for i := 1; i <= n; i++ {
				out.Issues = append(out.Issues, 100+i)
			}
			return nil, out, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "mcp_github_get_issue", Description: "Get one issue."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in getIn) (*mcp.CallToolResult, getOut, error) {
			defer track()()
			// Hold the call until a second is in flight (or a moment
			// passed), so the test can see calls made together overlap.
			deadline := time.Now().Add(200 * time.Millisecond)
			for f.inFlight.Load() < 2 && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			return nil, getOut{Number: in.Number, Title: fmt.Sprintf("issue %d", in.Number)}, nil
		})
	s.AddTool(&mcp.Tool{Name: "mcp_notes_write", Description: "Write a note.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			if strings.Contains(in.Text, "forbidden") {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "notes refuses forbidden words"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "saved: " + in.Text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "mcp_slow_wait", Description: "Wait until cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		parts := strings.SplitN(strings.TrimPrefix(tool.Name, "mcp_"), "_", 2)
		schema, _ := json.Marshal(tool.InputSchema)
		f.tools = append(f.tools, codemode.Tool{Name: tool.Name, Namespace: parts[0], Function: parts[1], Description: tool.Description, InputSchema: schema})
	}
	f.call = func(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	}
	return f
}

func TestRunValueAndConsole(t *testing.T) {
	f := newFixture(t)
	res, err := sandbox.Run(context.Background(), `
		console.log("hello", {a: 1}, [2]);
		console.warn("careful");
		const r = await tools.github.search_issues({q: "bug", limit: 2});
		return {found: r.issues, n: r.issues.length};
	`, f.tools, f.call, codemode.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Value), `{"found":[101,102],"n":2}`; got != want {
		t.Errorf("Value = %s, want %s", got, want)
	}
	if got, want := res.Console, "hello {\"a\":1} [2]\nwarn: careful\n"; got != want {
		t.Errorf("Console = %q, want %q", got, want)
	}
	if res.Calls != 1 {
		t.Errorf("Calls = %d, want 1", res.Calls)
	}
}

func TestRunNoReturn(t *testing.T) {
	res, err := sandbox.Run(context.Background(), `1 + 1;`, nil, nil, codemode.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Value != nil {
		t.Errorf("Value = %s, want nil", res.Value)
	}
}

// A three-tool chain: a search, its results fetched together, a note of
// them written; the fetches overlap.
func TestRunChain(t *testing.T) {
	f := newFixture(t)
	res, err := sandbox.Run(context.Background(), `
		const found = await tools.github.search_issues({q: "crash"});
		const issues = await Promise.all(found.issues.map(n => tools.github.get_issue({number: n})));
		const saved = await tools.notes.write({text: issues.map(i => i.title).join("; ")});
		return saved;
	`, f.tools, f.call, codemode.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Value), `"saved: issue 101; issue 102; issue 103"`; got != want {
		t.Errorf("Value = %s, want %s", got, want)
	}
	if res.Calls != 5 {
		t.Errorf("Calls = %d, want 5", res.Calls)
	}
	if f.maxSeen.Load() < 2 {
		t.Errorf("at most %d get_issue calls were in flight at once; Promise.all's should overlap", f.maxSeen.Load())
	}
}

func TestRunToolError(t *testing.T) {
	f := newFixture(t)
	res, err := sandbox.Run(context.Background(), `
		try {
			await tools.notes.write({text: "forbidden"});
		} catch (e) {
			return "caught: " + e.message;
		}
	`, f.tools, f.call, codemode.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Value), `"caught: tools.notes.write: notes refuses forbidden words"`; got != want {
		t.Errorf("Value = %s, want %s", got, want)
	}
	_, err = sandbox.Run(context.Background(), `await tools.notes.write({text: "forbidden"});`, f.tools, f.call, codemode.Budget{})
	if !errors.Is(err, codemode.ErrProgram) || !strings.Contains(err.Error(), "notes refuses forbidden words") {
		t.Errorf("an uncaught tool error: %v; want a program error with the tool's text", err)
	}
	// A Go error from the Caller (a policy refusal) is thrown the same way.
	deny := func(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("policy denies %s", tool)
	}
	_, err = sandbox.Run(context.Background(), `await tools.github.search_issues({q: "x"});`, f.tools, deny, codemode.Budget{})
	if want := "tools.github.search_issues: policy denies mcp_github_search_issues"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a denied call: %v; want %q", err, want)
	}
}

func TestRunArguments(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ code, want string }{
		{`await tools.github.search_issues("bug")`, "tools.github.search_issues takes one argument object"},
		{`await tools.github.search_issues([1])`, "tools.github.search_issues takes one argument object"},
		{`await tools.github.nope({})`, "there is no tool tools.github.nope; tools.github has: get_issue, search_issues"},
		{`await tools.gitlab.search({})`, "there is no tool tools.gitlab; tools has: github, notes, slow"},
	} {
		_, err := sandbox.Run(context.Background(), tc.code, f.tools, f.call, codemode.Budget{})
		if !errors.Is(err, codemode.ErrProgram) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%q) = %v, want a program error saying %q", tc.code, err, tc.want)
		}
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		code   string
		tools  []codemode.Tool
		budget codemode.Budget
		want   string
	}{
		{code: "return 1", budget: codemode.Budget{CPUTime: -1}, want: "code mode: budget cpu_time: -1ns is negative"},
		{code: "return 1", budget: codemode.Budget{MemoryBytes: 4 << 30}, want: "code mode: budget memory_bytes: 4 GiB is above the bound of 1 GiB"},
		{code: "return 1", tools: []codemode.Tool{{Name: "a", Namespace: "x", Function: "a-b"}, {Name: "b", Namespace: "x", Function: "a.b"}}, want: `code mode: tools "a" and "b" both map to tools.x.a_b`},
		{code: "return (", want: "code mode: syntax error"},
		{code: "}); globalThis.escaped = 1; (async function () {", want: "code mode: syntax error: the program closes the function it is the body of"},
		{code: "}})()", want: "code mode: syntax error"},
	} {
		_, err := sandbox.Run(context.Background(), tc.code, tc.tools, nil, tc.budget)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%q) = %v, want %q", tc.code, err, tc.want)
		}
	}
}

// hostile is a budget small enough to make the hostile tests quick.
var hostile = codemode.Budget{CPUTime: time.Second, WallTime: 3 * time.Second, MemoryBytes: 64 << 20}

// slowAlloc gives a program that allocates step by step the time to pass
// the memory budget before the CPU budget, on a loaded machine too.
var slowAlloc = codemode.Budget{CPUTime: 20 * time.Second, WallTime: 30 * time.Second, MemoryBytes: 64 << 20}

func heapBytes() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestHostile: each program ends with a clear error inside its budget,
// and the heap returns to about where it was.
func TestHostile(t *testing.T) {
	f := newFixture(t)
	before := heapBytes()
	for _, tc := range []struct {
		name, code string
		want       string
		budget     error // ErrBudget or ErrProgram
		b          *codemode.Budget
	}{
		{"endless loop", `for (;;) {}`, "code mode: CPU time budget of 1s spent", codemode.ErrBudget, nil},
		{"endless loop, catching", `for (;;) { try { for (;;) {} } catch (e) {} }`, "code mode: CPU time budget of 1s spent", codemode.ErrBudget, nil},
		{"a wait on a tool that never answers", `await tools.slow.wait({})`, "code mode: wall time budget of 3s spent", codemode.ErrBudget, nil},
		{"a promise nothing settles", `await new Promise(() => {})`, "awaits a promise nothing can settle", codemode.ErrProgram, nil},
		{"deep recursion", `function f(n) { return f(n + 1) + 1 } return f(0)`, "code mode: stack depth budget of 1000 calls spent", codemode.ErrBudget, nil},
		{"4 GB: repeat", `return 'x'.repeat(2 ** 32)`, "code mode: memory budget of 64 MiB spent (String.prototype.repeat of 8.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: padEnd", `return 'x'.padEnd(2 ** 31)`, "code mode: memory budget of 64 MiB spent (String.prototype.padEnd", codemode.ErrBudget, nil},
		{"4 GB: new Array", `const a = new Array(2 ** 32 - 1); return a.fill(0).length`, "code mode: memory budget of 64 MiB spent (new Array of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: Array()", `return Array(2 ** 28).length`, "code mode: memory budget of 64 MiB spent (Array of 4.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: a sparse array's length", `const a = []; a.length = 2 ** 32 - 1; return a.map(x => x).length`, "code mode: memory budget of 64 MiB spent (Array.prototype.map of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: Array.from", `return Array.from({length: 2 ** 28}).length`, "code mode: memory budget of 64 MiB spent (Array.from of 4.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: ArrayBuffer", `return new ArrayBuffer(2 ** 32).byteLength`, "code mode: memory budget of 64 MiB spent (new ArrayBuffer of 4.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: Float64Array", `return new Float64Array(2 ** 29).length`, "code mode: memory budget of 64 MiB spent (new Float64Array of 4.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: a typed array's constructor", `return new (new Uint8Array(1).constructor)(2 ** 32).length`, "code mode: memory budget of 64 MiB spent (new Uint8Array of 4.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: concat of a sparse array", `const a = []; a.length = 2 ** 32 - 1; return [].concat(a).length`, "code mode: memory budget of 64 MiB spent (Array.prototype.concat of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: a sparse array spread", `const a = []; a.length = 2 ** 32 - 1; return Math.max(...a)`, "code mode: memory budget of 64 MiB spent (an array iterator of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: a sparse array in a Set", `const a = []; a.length = 2 ** 32 - 1; return new Set(a).size`, "code mode: memory budget of 64 MiB spent (an array iterator of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: a sparse array in Promise.all", `const a = []; a.length = 2 ** 32 - 1; return (await Promise.all(a)).length`, "code mode: memory budget of 64 MiB spent (an array iterator of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: apply", `return String.fromCharCode.apply(null, {length: 2 ** 32 - 1})`, "code mode: memory budget of 64 MiB spent (Function.prototype.apply of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: Reflect.apply", `return Reflect.apply(Math.max, null, {length: 2 ** 32 - 1})`, "code mode: memory budget of 64 MiB spent (Reflect.apply of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: String.raw", `return String.raw({raw: {length: 2 ** 32 - 1}})`, "code mode: memory budget of 64 MiB spent (String.raw of 64.0 GiB)", codemode.ErrBudget, nil},
		{"4 GB: TypedArray.from", `return Float64Array.from({length: 2 ** 29}).length`, "code mode: memory budget of 64 MiB spent (TypedArray.from of 8.0 GiB)", codemode.ErrBudget, nil},
		// A getter or valueOf that answers small to the check and large to
		// the built-in: each built-in gets what was checked.
		{"4 GB: a count that grows", `let n = 0; return 'x'.repeat({valueOf() { return n++ ? 2 ** 32 : 1 }}).length`, "", nil, nil},
		{"4 GB: a pad that grows", `let n = 0; return 'x'.padEnd({valueOf() { return n++ ? 2 ** 32 : 1 }}).length`, "", nil, nil},
		{"4 GB: a string that grows", `let n = 0; const s = {toString() { return n++ ? 'x'.repeat(2 ** 20) : 'x' }}; return String.prototype.repeat.call(s, 2 ** 20).length`, "", nil, nil},
		{"4 GB: a length that grows, apply", `let n = 0; return Math.max.apply(null, {get length() { return n++ ? 2 ** 32 - 1 : 1 }})`, "", nil, nil},
		{"4 GB: a length that grows, Reflect.apply", `let n = 0; return Reflect.apply(Math.max, null, {get length() { return n++ ? 2 ** 32 - 1 : 1 }})`, "", nil, nil},
		{"4 GB: a length that grows, String.raw", `let n = 0; return String.raw({raw: {get length() { return n++ ? 2 ** 32 - 1 : 1 }}})`, "", nil, nil},
		{"4 GB: a length that grows, Array.from", `let n = 0; return Array.from({get length() { return n++ ? 2 ** 32 - 1 : 1 }}).length`, "", nil, nil},
		{"4 GB: a length that grows, Float64Array", `let n = 0; return new Float64Array({get length() { return n++ ? 2 ** 29 : 1 }}).length`, "", nil, nil},
		{"4 GB: a length that grows, TypedArray.from", `let n = 0; return Float64Array.from({get length() { return n++ ? 2 ** 29 : 1 }}).length`, "", nil, nil},
		{"4 GB: a length that grows, indexOf", `let n = 0; return Array.prototype.indexOf.call({get length() { return n++ ? 2 ** 32 - 1 : 1 }}, 7)`, "", nil, nil},
		{"4 GB: a length that grows, a Proxy", `let n = 0; const p = new Proxy([], {get(t, k) { return k === 'length' ? (n++ ? 2 ** 32 - 1 : 1) : t[k] }}); return p.map(x => x).length`, "", nil, nil},
		{"4 GB: a length that grows, concat", `let n = 0; const p = new Proxy([], {get(t, k) { return k === 'length' ? (n++ ? 2 ** 32 - 1 : 1) : t[k] }}); return [].concat(p).length`, "", nil, nil},
		{"4 GB: spreadable that grows, concat", `let n = 0; return [].concat({[Symbol.isConcatSpreadable]: true, get length() { return n++ ? 2 ** 32 - 1 : 1 }}).length`, "", nil, nil},
		{"4 GB: a string doubling", `let s = 'x'; for (;;) s += s;`, "code mode: memory budget of 64 MiB spent", codemode.ErrBudget, &slowAlloc},
		{"4 GB: pushing", `const a = []; for (;;) a.push({n: a.length, s: 'abcdefgh' + a.length});`, "code mode: memory budget of 64 MiB spent", codemode.ErrBudget, &slowAlloc},
		{"4 GB: shared references stringified", `let a = [1]; for (let i = 0; i < 40; i++) a = [a, a]; return JSON.stringify(a).length`, "budget", codemode.ErrBudget, nil},
		{"4 GB: shared references joined", `let a = [1]; for (let i = 0; i < 40; i++) a = [a, a]; return String(a).length`, "budget", codemode.ErrBudget, nil},
		{"deep nesting stringified", `let a = []; for (let i = 0; i < 100000; i++) a = [a]; return JSON.stringify(a).length`, "code mode: CPU time budget of 1s spent", codemode.ErrBudget, nil},
		{"deep nesting returned", `let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a`, "code mode: CPU time budget of 1s spent", codemode.ErrBudget, nil},
		{"4 GB: console", `for (;;) console.log('x'.repeat(1000))`, "code mode: output budget of 64 KiB spent (console.log)", codemode.ErrBudget, nil},
		{"tool calls", `for (;;) await tools.github.search_issues({q: "x"})`, "code mode: tool calls budget of 50 spent (tools.github.search_issues)", codemode.ErrBudget, nil},
		{"eval", `return eval("1")`, "EvalError: code mode: eval is not available", codemode.ErrProgram, nil},
		{"indirect eval", `return (0, globalThis["ev" + "al"])("1")`, "EvalError: code mode: eval is not available", codemode.ErrProgram, nil},
		{"Function", `return Function("return 1")()`, "EvalError: code mode: the Function constructor is not available", codemode.ErrProgram, nil},
		{"a function's constructor", `return (function () {}).constructor("return 1")()`, "the Function constructor is not available", codemode.ErrProgram, nil},
		{"an async function's constructor", `return (async () => {}).constructor("return 1")()`, "the Function constructor is not available", codemode.ErrProgram, nil},
		{"a generator's constructor", `return (function* () {}).constructor("yield 1")().next()`, "the Function constructor is not available", codemode.ErrProgram, nil},
		{"require", `return require("fs").readFileSync("/etc/passwd", "utf8")`, "ReferenceError: require is not defined", codemode.ErrProgram, nil},
		{"import()", `return await import("fs")`, "code mode: syntax error: program.js: Line 1:34 Unexpected reserved word", codemode.ErrProgram, nil},
		{"import", `import fs from "fs"`, "code mode: syntax error", codemode.ErrProgram, nil},
		{"process", `return process.env`, "ReferenceError: process is not defined", codemode.ErrProgram, nil},
		{"fetch", `return await fetch("http://127.0.0.1/")`, "ReferenceError: fetch is not defined", codemode.ErrProgram, nil},
		{"a socket", `return new WebSocket("ws://127.0.0.1/")`, "ReferenceError: WebSocket is not defined", codemode.ErrProgram, nil},
		{"XMLHttpRequest", `return new XMLHttpRequest()`, "ReferenceError: XMLHttpRequest is not defined", codemode.ErrProgram, nil},
		{"a file", `return Deno.readTextFileSync("/etc/passwd")`, "ReferenceError: Deno is not defined", codemode.ErrProgram, nil},
		{"setTimeout", `await new Promise(r => setTimeout(r, 10))`, "ReferenceError: setTimeout is not defined", codemode.ErrProgram, nil},
		{"setInterval", `setInterval(() => {}, 10)`, "ReferenceError: setInterval is not defined", codemode.ErrProgram, nil},
		{"queueMicrotask", `queueMicrotask(() => {})`, "ReferenceError: queueMicrotask is not defined", codemode.ErrProgram, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := hostile
			if tc.b != nil {
				b = *tc.b
			}
			start := time.Now()
			_, err := sandbox.Run(context.Background(), tc.code, f.tools, f.call, b)
			took := time.Since(start)
			switch {
			case tc.budget == nil:
				// The built-in saw what was checked: a small answer, or
				// a budget error; never a stuck or crashed daemon.
				if err != nil && !errors.Is(err, codemode.ErrBudget) {
					t.Errorf("Run(%q) = %v, want a result or a budget error", tc.code, err)
				}
			case !errors.Is(err, tc.budget) || !strings.Contains(err.Error(), tc.want):
				t.Errorf("Run(%q) = %v, want an error (%v) saying %q", tc.code, err, tc.budget, tc.want)
			}
			// Within its budget: the wall time, with a margin for a
			// loaded machine.
			if limit := b.WallTime + time.Second; took > limit {
				t.Errorf("Run(%q) took %v, beyond %v", tc.code, took, limit)
			}
			t.Logf("%v after %v", err, took.Round(time.Millisecond))
		})
	}
	after := heapBytes()
	t.Logf("heap: %d KiB before, %d KiB after", before>>10, after>>10)
	if grown := after - before; grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB over the hostile programs; want it back within 16 MiB", grown>>20)
	}
}

// TestTampering: what one run does to the built-ins and the tools object
// touches neither later runs nor the Go side.
func TestTampering(t *testing.T) {
	f := newFixture(t)
	for _, code := range []string{
		`Object.prototype.issues = [666]; Object.prototype.toJSON = function () { return "owned" }; return 1`,
		`Array.prototype.map = function () { return ["owned"] }; Array.prototype.push = null; return 1`,
		`Promise.prototype.then = function () { throw new Error("owned") }; Promise = null; return 1`,
		`JSON.parse = () => "owned"; JSON.stringify = () => "owned"; return 1`,
		`tools.github = null; tools.github.search_issues = null; return 1`,
		`Object.defineProperty(tools, "github", {value: {}})`,
		`Object.setPrototypeOf(tools.github, {})`,
		`Object.prototype.then = function (r) { r("owned") }; return await tools.github.search_issues({q: "x"})`,
		`String.prototype.repeat = () => "owned"; Array = null; Proxy = null; Reflect = null; globalThis.console = null; return 1`,
		`delete globalThis.tools; globalThis.tools = {}; return 1`,
	} {
		// The tampering run may fail; it must not break what follows.
		res, err := sandbox.Run(context.Background(), code, f.tools, f.call, hostile)
		t.Logf("%s: %v %v", code, resValue(res), err)
		res, err = sandbox.Run(context.Background(), `
			const r = await tools.github.search_issues({q: "x", limit: 2});
			console.log([1, 2].map(x => x * 2));
			return {r, s: 'ab'.repeat(2), j: JSON.parse('{"k":1}'), t: typeof Promise.prototype.then};
		`, f.tools, f.call, codemode.Budget{})
		if err != nil {
			t.Fatalf("after %q: %v", code, err)
		}
		if got, want := string(res.Value), `{"r":{"issues":[101,102]},"s":"abab","j":{"k":1},"t":"function"}`; got != want {
			t.Errorf("after %q: Value = %s, want %s", code, got, want)
		}
		if got, want := res.Console, "[2,4]\n"; got != want {
			t.Errorf("after %q: Console = %q, want %q", code, got, want)
		}
	}
}

func resValue(r *codemode.Result) string {
	if r == nil {
		return "<nil>"
	}
	return string(r.Value)
}

func TestRunContextCancelled(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sandbox.Run(ctx, `for (;;) {}`, f.tools, f.call, hostile)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestStuckBuiltin: a regular expression that backtracks runs natively,
// where Interrupt cannot reach; Run returns at the CPU budget (and a
// second's grace) without it, and the runtime's goroutine ends when the
// match does (here a few seconds later).
func TestStuckBuiltin(t *testing.T) {
	b := codemode.Budget{CPUTime: 200 * time.Millisecond, WallTime: time.Minute}
	start := time.Now()
	_, err := sandbox.Run(context.Background(), `return /^(?=(a+)+$)/.test('a'.repeat(25) + 'b')`, nil, nil, b)
	took := time.Since(start)
	if want := "code mode: CPU time budget of 200ms spent (the program is stuck in a built-in that cannot be interrupted"; !errors.Is(err, codemode.ErrBudget) || !strings.Contains(err.Error(), want) {
		t.Errorf("a backtracking regular expression: %v, want %q", err, want)
	}
	if limit := b.CPUTime + 2*time.Second; took > limit {
		t.Errorf("Run took %v, beyond %v", took, limit)
	}
	t.Logf("%v after %v", err, took.Round(time.Millisecond))
}

// TestGuardedBuiltins: the built-ins the prelude wraps still do their
// work on ordinary input.
func TestGuardedBuiltins(t *testing.T) {
	res, err := sandbox.Run(context.Background(), `
		const a = [3, 1, 2];
		let n = 0;
		for (const x of a) n += x;
		const nested = [1, [2, [3]]];
		const cyclic = [1]; cyclic.push(cyclic);
		return [
			n, [...a], Math.max(...a), Math.max.apply(null, a), Reflect.apply(Math.min, null, a),
			new Set(a).size, Array.from(a.entries()), a.concat([4], 5), [...a].sort(), a.map(x => x * 2),
			'ab'.repeat(2), 'x'.padStart(3, '-'), 'x'.padEnd(3, '-'), 'abc'.split(''), 'a-b'.replace('-', '+'),
			'a-b-c'.replaceAll('-', '<>'), String.raw({raw: ['a', 'b']}, 1), Array(3).length, new Array(2, 3),
			Array.from({length: 2}, (_, i) => i), String(nested), nested.join('/'), String(cyclic),
			JSON.stringify({b: 1, a: [1, {c: 2}]}, ['a', 'c']), JSON.stringify({a: 1}, (k, v) => (k === 'a' ? 2 : v)),
			JSON.stringify([1], null, 2), Array.from(new Uint8Array([1, 2])), Array.from(Float64Array.from([1.5])),
			new ArrayBuffer(8).byteLength, [1, 2] instanceof Array, new Uint8Array(1) instanceof Uint8Array,
			Reflect.construct(Date, [0]).getTime(),
		];
	`, nil, nil, codemode.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	want := `[6,[3,1,2],3,3,1,3,[[0,3],[1,1],[2,2]],[3,1,2,4,5],[1,2,3],[6,2,4],"abab","--x","x--",["a","b","c"],"a+b","a<>b<>c","a1b",3,[2,3],[0,1],"1,2,3","1/2,3","1,",` +
		`"{\"a\":[1,{\"c\":2}]}","{\"a\":2}","[\n  1\n]",[1,2],[1.5],8,true,true,0]`
	if got := string(res.Value); got != want {
		t.Errorf("Value =\n%s\nwant\n%s", got, want)
	}
}

// TestRunCallsNotAwaited: a call the program did not await is made before
// the run ends, and what it runs when it settles runs too.
func TestRunCallsNotAwaited(t *testing.T) {
	f := newFixture(t)
	var made atomic.Int32
	call := func(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
		made.Add(1)
		return f.call(ctx, tool, args)
	}
	res, err := sandbox.Run(context.Background(), `
		tools.notes.write({text: "later"}).then(r => console.log(r));
		return "done";
	`, f.tools, call, codemode.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `"done"` || res.Console != "saved: later\n" || made.Load() != 1 || res.Calls != 1 {
		t.Errorf("Value %s, Console %q, %d calls made (Result.Calls %d); want \"done\", \"saved: later\\n\", 1 (1)", res.Value, res.Console, made.Load(), res.Calls)
	}
}

// TestRunLeavesNoGoroutines: a run's goroutines (its runtime's, the heap
// watchdog, its calls') end with it, whether it finished, failed or spent
// a budget.
func TestRunLeavesNoGoroutines(t *testing.T) {
	f := newFixture(t)
	before := runtime.NumGoroutine()
	b := codemode.Budget{CPUTime: 200 * time.Millisecond, WallTime: 500 * time.Millisecond}
	for _, code := range []string{
		`return await Promise.all([1, 2].map(n => tools.github.get_issue({number: n})))`,
		`for (;;) {}`,
		`await Promise.all([tools.slow.wait({}), tools.github.get_issue({number: 1})])`,
		`throw new Error("no")`,
	} {
		if _, err := sandbox.Run(context.Background(), code, f.tools, f.call, b); err != nil {
			t.Logf("%.60q: %v", code, err)
		}
	}
	wait.Goroutines(t, before)
}
