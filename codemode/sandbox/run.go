package sandbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/codemode"
)

//go:embed prelude.js
var prelude string

// preludeProgram is compiled once, by the first run; each run executes it
// in its own runtime. Not at init: a binary that imports this package
// without running a program (its types, Declarations) must not link goja's
// compiler, whose reflection keeps every exported method (docs/size.md).
func preludeProgram() *goja.Program {
	preludeOnce.Do(func() { prelude1 = goja.MustCompile("prelude.js", prelude, true) })
	return prelude1
}

var (
	preludeOnce sync.Once
	prelude1    *goja.Program
)

// stuckGrace is how long Run waits, once a budget is spent or ctx is
// done, for a program stuck in a native built-in (one Interrupt cannot
// stop) before it returns without it.
const stuckGrace = time.Second

// heapSample is how often the watchdog reads the heap: often enough that a
// loop doubling a string passes the memory budget by at most a doubling or
// two, rarely enough that the reads cost nothing measurable.
const heapSample = 2 * time.Millisecond

// Run runs code, the body of an async function, in a fresh JavaScript
// runtime where tools are reachable as tools.<namespace>.<function>, and
// returns what it returned (see [Declarations] for the convention a model
// is told).
//
// Every call goes through call. The run ends when the program's promise
// settles and no call it made is under way (a call it did not await is
// still made, and what awaits it runs), or with a [*codemode.BudgetError] when a
// budget is spent, a [*codemode.ProgramError] when the program fails, or ctx's
// error when ctx ends. Run returns a non-nil codemode.Result (console output,
// calls so far) with every error but a refused budget or tool list, and
// but a program stuck in a built-in, whose output is left with it.
func Run(ctx context.Context, code string, tools []codemode.Tool, call codemode.Caller, b codemode.Budget) (*codemode.Result, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	b = b.WithDefaults()
	tools = slices.Clone(tools) // the runtime may outlive Run (a stuck built-in)
	specs, err := toolSpecs(tools)
	if err != nil {
		return nil, err
	}
	if call == nil && len(tools) > 0 {
		return nil, errors.New("code mode: tools but no codemode.Caller to call them")
	}
	start := time.Now()
	r := &runner{b: b, tools: tools, call: call, parent: ctx, res: &codemode.Result{}, halt: make(chan struct{})}
	prog, err := compile(code)
	if err != nil {
		return r.res, err
	}

	var cancel context.CancelFunc
	r.ctx, cancel = context.WithCancel(ctx)
	defer cancel()
	wall := time.AfterFunc(b.WallTime, func() {
		r.stop(&codemode.BudgetError{Budget: "wall time", Limit: b.WallTime.String()})
		cancel()
	})
	defer wall.Stop()
	stopCtx := context.AfterFunc(ctx, func() { r.stop(fmt.Errorf("code mode: %w", context.Cause(ctx))) })
	defer stopCtx()

	// The runtime runs on its own goroutine so that Run can return when a
	// budget is spent even if the program is stuck in a native built-in
	// that Interrupt cannot stop (a regular expression that backtracks for
	// hours): after stuckGrace that goroutine is left to end when the
	// built-in returns, and nothing waits for it.
	done := make(chan error, 1)
	watch := make(chan struct{})
	go r.watchHeap(watch)
	go func() {
		defer close(watch)
		done <- r.run(specs, prog)
	}()
	select {
	case err = <-done:
	case <-r.halt:
		select {
		case err = <-done:
		case <-time.After(stuckGrace):
			err = r.stopErr()
			return &codemode.Result{WallTime: time.Since(start)}, fmt.Errorf("%w (the program is stuck in a built-in that cannot be interrupted and is left to end on its own)", err)
		}
	}
	r.res.Console = r.console.String()
	r.res.WallTime = time.Since(start)
	r.res.CPUTime = r.cpu
	return r.res, err
}

// toolSpecs checks the tool list and gives the prelude each tool's place.
func toolSpecs(tools []codemode.Tool) ([]map[string]string, error) {
	specs := make([]map[string]string, len(tools))
	seen := map[string]string{}
	for i, t := range tools {
		ns, fn := codemode.Identifier(t.Namespace), codemode.Identifier(t.Function)
		if t.Name == "" {
			return nil, fmt.Errorf("code mode: tools[%d] (tools.%s.%s) has no name", i, ns, fn)
		}
		if other, ok := seen[ns+"."+fn]; ok {
			return nil, fmt.Errorf("code mode: tools %q and %q both map to tools.%s.%s", other, t.Name, ns, fn)
		}
		seen[ns+"."+fn] = t.Name
		specs[i] = map[string]string{"ns": ns, "fn": fn}
	}
	return specs, nil
}

// compile makes code the body of an async function. The body is parsed
// inside the wrapper and refused unless the wrapper is all there is, so a
// program cannot close the function early and run at the top level. The
// wrapper keeps the program's line numbers.
func compile(code string) (*goja.Program, error) {
	src := "(async function () {" + code + "\n})()"
	file, err := parser.ParseFile(nil, "program.js", src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, &codemode.ProgramError{Message: "syntax error: " + err.Error()}
	}
	if len(file.Body) != 1 {
		return nil, &codemode.ProgramError{Message: "syntax error: the program closes the function it is the body of"}
	}
	if _, ok := file.Body[0].(*ast.ExpressionStatement); !ok {
		return nil, &codemode.ProgramError{Message: "syntax error: the program closes the function it is the body of"}
	}
	prog, err := goja.CompileAST(file, false)
	if err != nil {
		return nil, &codemode.ProgramError{Message: "syntax error: " + err.Error()}
	}
	return prog, nil
}

type runner struct {
	b      codemode.Budget
	tools  []codemode.Tool
	call   codemode.Caller
	ctx    context.Context // the tool calls': ends with the wall-time budget
	parent context.Context // Run's
	res    *codemode.Result

	vm        *goja.Runtime
	stringify goja.Callable
	parse     goja.Callable
	pending   []*pendingCall
	console   strings.Builder
	output    int
	cpu       time.Duration

	mu      sync.Mutex
	stopped error         // the first reason the run was stopped
	halt    chan struct{} // closed with the first stop
}

type pendingCall struct {
	tool            int
	args            json.RawMessage
	resolve, reject func(any) error
}

// stop records why the run ends (the first reason wins) and interrupts the
// runtime; safe from any goroutine.
func (r *runner) stop(err error) {
	r.mu.Lock()
	if r.stopped == nil {
		r.stopped = err
		close(r.halt)
	}
	vm := r.vm
	r.mu.Unlock()
	if vm != nil {
		vm.Interrupt(err)
	}
}

func (r *runner) stopErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped == nil && r.ctx.Err() != nil {
		// Done before the reason was recorded: the caller's ctx, or
		// else the wall-time budget, which is what cancels r.ctx.
		if r.parent.Err() != nil {
			return fmt.Errorf("code mode: %w", context.Cause(r.parent))
		}
		return &codemode.BudgetError{Budget: "wall time", Limit: r.b.WallTime.String()}
	}
	return r.stopped
}

// run is the event loop: one VM turn, then the tool calls that turn asked
// for, run together, each settled on this goroutine as it comes back.
func (r *runner) run(specs []map[string]string, prog *goja.Program) error {
	vm := goja.New()
	vm.SetMaxCallStackSize(r.b.MaxStackDepth)
	r.mu.Lock()
	r.vm = vm
	stopped := r.stopped
	r.mu.Unlock()
	if stopped != nil {
		return stopped
	}
	var promise *goja.Promise
	err := r.turn(func() error {
		f, err := vm.RunProgram(preludeProgram())
		if err != nil {
			return err
		}
		setup, _ := goja.AssertFunction(f)
		kept, err := setup(goja.Undefined(), vm.GlobalObject(),
			vm.ToValue(r.callTool), vm.ToValue(r.guard), vm.ToValue(r.emit), vm.ToValue(specs),
			vm.ToValue(isProxy), vm.ToValue(isBuffer))
		if err != nil {
			return err
		}
		o := kept.ToObject(vm)
		r.stringify, _ = goja.AssertFunction(o.Get("stringify"))
		r.parse, _ = goja.AssertFunction(o.Get("parse"))
		v, err := vm.RunProgram(prog)
		if err != nil {
			return err
		}
		promise, _ = v.Export().(*goja.Promise)
		return nil
	})
	if err != nil {
		return err
	}
	if promise == nil {
		return &codemode.ProgramError{Message: "the program did not run as an async function"}
	}
	for {
		// A call the program made without awaiting it is still made
		// (and what it runs when it settles, run) before the run ends,
		// as Node would before it exits: a model that writes
		// tools.notes.write({...}); return "done" means the write.
		if promise.State() == goja.PromiseStateRejected {
			return &codemode.ProgramError{Message: "uncaught " + r.describe(promise.Result())}
		}
		if len(r.pending) == 0 {
			if promise.State() == goja.PromiseStateFulfilled {
				return r.turn(func() error { return r.finish(promise.Result()) })
			}
			return &codemode.ProgramError{Message: "the program awaits a promise nothing can settle (there are no timers, and no tool call is under way)"}
		}
		batch := r.pending
		r.pending = nil
		type answer struct {
			p   *pendingCall
			res *mcp.CallToolResult
			err error
		}
		answers := make(chan answer, len(batch))
		for _, p := range batch {
			go func() {
				res, err := r.callSafely(p)
				answers <- answer{p, res, err}
			}()
		}
		for range batch {
			var a answer
			select {
			case a = <-answers:
			case <-r.ctx.Done():
				return r.stopErr()
			case <-r.halt: // the memory budget, spent while calls are under way
				return r.stopErr()
			}
			if err := r.turn(func() error { return r.settle(a.p, a.res, a.err) }); err != nil {
				return err
			}
		}
	}
}

// turn runs f on the runtime with the CPU budget's clock running, and
// turns the runtime's uncatchable errors into the budget they spent.
func (r *runner) turn(f func() error) error {
	left := r.b.CPUTime - r.cpu
	cpuErr := &codemode.BudgetError{Budget: "CPU time", Limit: r.b.CPUTime.String()}
	if left <= 0 {
		return cpuErr
	}
	t := time.AfterFunc(left, func() { r.stop(cpuErr) })
	start := time.Now()
	err := f()
	t.Stop()
	r.cpu += time.Since(start)
	var interrupted *goja.InterruptedError
	var overflow *goja.StackOverflowError
	switch {
	case err == nil:
		if s := r.stopErr(); s != nil {
			return s
		}
		return nil
	case errors.As(err, &interrupted):
		if e, ok := interrupted.Value().(error); ok {
			return e
		}
		return r.stopErr()
	case errors.As(err, &overflow):
		return &codemode.BudgetError{Budget: "stack depth", Limit: fmt.Sprintf("%d calls", r.b.MaxStackDepth)}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return &codemode.ProgramError{Message: "uncaught " + r.describe(ex.Value())}
	}
	return err
}

// describe renders a thrown value: an Error by its stack, else as text.
func (r *runner) describe(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		if s := o.Get("stack"); s != nil && !goja.IsUndefined(s) && s.String() != "" {
			return s.String()
		}
	}
	if v == nil {
		return "undefined"
	}
	return v.String()
}

func (r *runner) finish(v goja.Value) error {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	j, err := r.stringify(goja.Undefined(), v)
	if err != nil {
		return err
	}
	if goja.IsUndefined(j) {
		return &codemode.ProgramError{Message: "the program returned a value JSON cannot hold (a function or a symbol)"}
	}
	s := j.String()
	if err := r.spend(len(s), "the returned value"); err != nil {
		return err
	}
	r.res.Value = json.RawMessage(s)
	return nil
}

// spend counts n bytes of output against the budget.
func (r *runner) spend(n int, what string) error {
	r.output += n
	if r.output > r.b.OutputBytes {
		return &codemode.BudgetError{Budget: "output", Limit: codemode.BytesString(int64(r.b.OutputBytes)), Detail: what}
	}
	return nil
}

// emit is console.<level> from the prelude.
func (r *runner) emit(level, line string) {
	if level == "warn" || level == "error" {
		line = level + ": " + line
	}
	if err := r.spend(len(line)+1, "console."+level); err != nil {
		r.stop(err)
		panic(r.vm.NewGoError(err))
	}
	r.console.WriteString(line)
	r.console.WriteByte('\n')
}

// guard is the prelude's check before a built-in makes something of
// about n bytes.
func (r *runner) guard(n float64, what string) {
	if n > float64(r.b.MemoryBytes) {
		err := &codemode.BudgetError{Budget: "memory", Limit: codemode.BytesString(r.b.MemoryBytes), Detail: what + " of " + approxBytes(n)}
		r.stop(err)
		panic(r.vm.NewGoError(err))
	}
}

func approxBytes(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	}
	return fmt.Sprintf("%.0f bytes", n)
}

// isProxy tells the prelude a Proxy from what it stands for (Array.isArray
// cannot).
func isProxy(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && o.ExportType() == reflect.TypeFor[goja.Proxy]() // not a package variable: see preludeProgram
}

// isBuffer: an ArrayBuffer or a typed array, whose length is the memory it
// already holds.
func isBuffer(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	if !ok {
		return false
	}
	t := o.ExportType()
	if t == reflect.TypeFor[goja.ArrayBuffer]() {
		return true
	}
	if t == nil || t.Kind() != reflect.Slice {
		return false
	}
	switch t.Elem().Kind() {
	case reflect.Int8, reflect.Uint8, reflect.Int16, reflect.Uint16, reflect.Int32, reflect.Uint32,
		reflect.Int64, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// callTool is a tool function's body: it queues the call and returns its
// promise. It runs on the runtime's goroutine.
func (r *runner) callTool(i int, args goja.Value) *goja.Promise {
	vm := r.vm
	if i < 0 || i >= len(r.tools) {
		panic(vm.NewTypeError("code mode: no such tool"))
	}
	t := r.tools[i]
	where := "tools." + codemode.Identifier(t.Namespace) + "." + codemode.Identifier(t.Function)
	if r.res.Calls >= r.b.MaxCalls {
		err := &codemode.BudgetError{Budget: "tool calls", Limit: fmt.Sprint(r.b.MaxCalls), Detail: where}
		r.stop(err)
		panic(vm.NewGoError(err))
	}
	var raw json.RawMessage
	switch {
	case args == nil || goja.IsUndefined(args) || goja.IsNull(args):
		raw = json.RawMessage("{}")
	default:
		o, ok := args.(*goja.Object)
		if !ok || o.ClassName() == "Array" || o.ClassName() == "Function" {
			panic(vm.NewTypeError(where + " takes one argument object, such as " + where + "({ ... })"))
		}
		j, err := r.stringify(goja.Undefined(), args)
		if err != nil {
			panic(err)
		}
		raw = json.RawMessage(j.String())
	}
	r.res.Calls++
	p, resolve, reject := vm.NewPromise()
	r.pending = append(r.pending, &pendingCall{tool: i, args: raw, resolve: resolve, reject: reject})
	return p
}

// callSafely runs the codemode.Caller, turning its panic into an error.
func (r *runner) callSafely(p *pendingCall) (res *mcp.CallToolResult, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("the call panicked: %v", x)
		}
	}()
	res, err = r.call(r.ctx, r.tools[p.tool].Name, p.args)
	if err == nil && res == nil {
		err = errors.New("no result")
	}
	return res, err
}

// settle resolves or rejects a call's promise, which runs what awaited it.
func (r *runner) settle(p *pendingCall, res *mcp.CallToolResult, err error) error {
	vm := r.vm
	t := r.tools[p.tool]
	where := "tools." + codemode.Identifier(t.Namespace) + "." + codemode.Identifier(t.Function)
	if err != nil {
		return p.reject(vm.NewGoError(fmt.Errorf("%s: %v", where, err)))
	}
	text := resultText(res)
	if res.IsError {
		if text == "" {
			text = "the tool failed"
		}
		return p.reject(vm.NewGoError(fmt.Errorf("%s: %s", where, text)))
	}
	if res.StructuredContent != nil {
		j, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return p.reject(vm.NewGoError(fmt.Errorf("%s: structured content: %v", where, err)))
		}
		v, err := r.parse(goja.Undefined(), vm.ToValue(string(j)))
		if err != nil {
			return err
		}
		return p.resolve(v)
	}
	return p.resolve(text)
}

// resultText joins a result's text content; what is not text is named in
// brackets.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio "+c.MIMEType+"]")
		case *mcp.ResourceLink:
			parts = append(parts, "[resource "+c.URI+"]")
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, "[resource "+c.Resource.URI+"]")
			}
		}
	}
	return strings.Join(parts, "\n")
}

// watchHeap stops the run when the heap has grown by more than the memory
// budget since the run began. The measure is the process's: a reading
// over the budget is checked again after a collection (garbage is not the
// program's use), no more often than every 50 ms.
func (r *runner) watchHeap(done <-chan struct{}) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(sample[0].Value.Uint64())
	}
	base := read()
	var lastGC time.Time
	tick := time.NewTicker(heapSample)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if read()-base <= r.b.MemoryBytes || time.Since(lastGC) < 50*time.Millisecond {
			continue
		}
		runtime.GC()
		lastGC = time.Now()
		if grown := read() - base; grown > r.b.MemoryBytes {
			r.stop(&codemode.BudgetError{Budget: "memory", Limit: codemode.BytesString(r.b.MemoryBytes), Detail: "the heap grew by " + approxBytes(float64(grown))})
			return
		}
	}
}
