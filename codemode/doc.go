// Package codemode is code mode: a JavaScript program a model wrote, run
// in a sandbox inside the daemon, where the tools the caller may use are
// async functions: a model that chains three tools writes one short
// program instead of reading three tool results into its context. This
// package is what is said about a program — its tools ([Tool]), how they
// are declared to the model ([Declarations]), its [Budget] and its
// errors — and codemode/sandbox runs it, in goja:
//
//	decl := codemode.Declarations(tools) // what the model reads
//	res, err := sandbox.Run(ctx, code, tools, call, codemode.Budget{})
//	// res.Value: the JSON the program returned; res.Console: its console
//
// The two are apart because goja wraps Go values by reflection, which
// keeps the linker from dropping unused methods (docs/size.md): a binary
// that imports only this package (the agent runner's tool modes, the
// configuration's budgets) does not pay for goja until it links
// codemode/sandbox (a -tags noui build does not).
//
// # The program
//
// The code is the body of an async function: it may await, and what it
// returns (JSON-serialised) is [Result.Value]. Each [Tool] is
// tools.<namespace>.<function>(args), an async function of one argument
// object; it resolves to the tool's structuredContent when the result has
// one, else to its text content joined by newlines, and a result with
// isError (or an error from the [Caller]) is thrown as an Error whose
// message is "tools.<namespace>.<function>: <text>". A name the caller was
// not given throws at once, naming the tools there are. console.log,
// info, warn, error and debug are captured into [Result.Console].
// [Declarations] renders the tools, typed from their JSON Schemas, with a
// header that tells a model this convention.
//
// Every call goes through the [Caller]: the host's or gateway's own path,
// so a program can do nothing with a tool that a direct call could not.
// Calls a program makes together (Promise.all) run concurrently; the
// runtime itself runs on one goroutine (goja is not goroutine-safe), and
// each result is handed back to it in turn through goja's job queue, by a
// small event loop of the sandbox's own (there are no timers to run).
//
// # The sandbox
//
// The engine is github.com/dop251/goja, pure Go, ECMAScript 5.1 with most
// of ES2015+ (no async generators, no modules). A run has a fresh runtime:
// nothing is shared with another run, so what one program does to
// Object.prototype, Promise or the tools object is gone with it. The
// runtime has only the ECMAScript built-ins, tools and console: no
// filesystem, network, process, timers (setTimeout, setInterval,
// queueMicrotask), require, import or import() (a syntax error), and eval
// and the Function constructors (reached as Function or as the
// constructor of any function, async function or generator) throw. The
// tools object and its namespaces are frozen.
//
// # Budgets
//
// A [Budget] bounds CPU time, wall time, memory, output, tool calls and
// stack depth; each spent budget ends the run with a [*BudgetError] naming
// it ("code mode: CPU time budget of 2s spent"), which a program cannot
// catch. Time is enforced with goja's Interrupt, which takes effect
// between JavaScript instructions: a native built-in that runs long (a
// regular expression that backtracks) is not stopped, so Run returns a
// second after the budget is spent and leaves that goroutine to end when
// the built-in does.
//
// goja has no memory limit. Memory is bounded two ways: a watchdog samples
// the Go heap every 2 ms and, when it has grown by more than the budget
// since the run began (and still has after a collection), interrupts the
// run; and the built-ins that make something large in one native step
// (String.prototype.repeat, padStart, padEnd, split(""), replace and
// replaceAll with a long replacement, Array(n), Array.from, the array
// methods and iterators that walk a length, apply, String.raw,
// ArrayBuffer and the typed arrays) check the size first. The heap measure is the process's: other work in the daemon
// (concurrent runs included) counts against a run, and a program that
// allocates fast may pass its budget by a few times before the watchdog
// stops it. See docs/security.md, "Code mode sandbox (codemode)", for
// what holds and what does not.
package codemode
