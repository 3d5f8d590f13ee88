// Command testserver is a hostile-fixture MCP server for Switchboard's
// tests: a go-sdk server over stdio that is well behaved by default and
// misbehaves on request, one flag per misbehaviour. Tests build it with
//
//	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
//
// and run it as a stdio MCP server (bin -flag …).
//
// # Tools, resources and prompts (always present)
//
//   - echo {text string} → text.
//   - add {a, b number} → the sum, as text and structuredContent {"sum"}.
//   - slow {ms int} → writes "testserver: slow: started (MS ms)" to
//     stderr, sleeps ms, then answers "slept MS ms"; a cancelled call
//     returns at once and writes "testserver: slow: cancelled: CAUSE" to
//     stderr (CAUSE "context canceled" for notifications/cancelled, "EOF"
//     when the connection closed under it).
//   - progress {steps int, interval_ms int} → when the call carries a
//     progress token, sends notifications/progress after each step
//     (progress 1…steps, total steps), then answers "done N steps"; a
//     cancelled call says so on stderr, like slow.
//   - fail → a result with isError set.
//   - env {name string} → the value of that environment variable, and
//     structuredContent {"name", "value", "set"}, for env isolation tests.
//   - elicit → asks the client for {name, age, subscribe} (a form with a
//     default for each) and returns what came back (action and content) as
//     JSON text and structuredContent.
//   - sample → asks the client for a sampling/createMessage completion and
//     returns its text.
//   - roots → lists the client's roots, one URI per line.
//   - ask_detached {kind "roots"|"sampling"|"elicitation", times int} → asks
//     the client times (default 1) questions of that kind at once, the
//     2025-11-25 way, on a context the call's cancellation does not end:
//     the questions stay open after the call is cancelled (as a server's
//     that asks from a goroutine of its own, or a TypeScript server's that
//     passes no signal). Writes "testserver: ask_detached: asking KIND"
//     to stderr per question as it goes out, and "testserver: ask_detached:
//     KIND ended: ERR" ("ok" when answered) as each ends.
//   - content → one block of each content kind (text, image, audio,
//     embedded resource, resource link) plus structuredContent and _meta.
//   - resource test://static/1 (text/plain); template test://item/{id};
//     prompt greet {name}.
//
// elicit, sample and roots return an input-required result (multi
// round-trip requests, SEP-2322) and the go-sdk turns them into plain
// elicitation/create, sampling/createMessage and roots/list requests for
// clients on protocol versions before 2026-07-28: req.Session.Elicit and
// friends refuse to send those on 2026-07-28 sessions.
//
// # Flags
//
//	-hang                never answer tools/call (the request is dropped; initialize works)
//	-hang-init           never answer initialize nor server/discover
//	-crash-on-call       on tools/call, write a line to stderr and half a response to
//	                     stdout, then exit with status 3
//	-garbage             on tools/call, write non-JSON lines to stdout, then answer
//	-huge-line N         answer tools/call with one JSON-RPC response of exactly N bytes
//	                     (padding in a text block; N 'x' bytes if N is too small), and no
//	                     newline unless -huge-line-newline
//	-huge-line-newline   end the -huge-line response with a newline
//	-stream-forever      on tools/call, write bytes without a newline until stdout breaks
//	-tools N             register N extra tools t0001…tNNNN (each echoes its name)
//	-page-size N         items per page of tools/list, resources/list, prompts/list
//	                     (default 100, so that clients must paginate beyond that)
//	-tool-name NAME      register an extra tool with exactly this name (repeatable), for
//	                     collision and long-name tests; it answers "called NAME"
//	-ref-cycle           add tool ref_cycle whose inputSchema has a $ref cycle:
//	                     {"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}
//	-bad-schema          add tool bad_schema whose inputSchema does not compile:
//	                     {"type":"object","properties":{"a":{"type":5}}}
//	-ignore-sigterm      ignore SIGTERM (SIGKILL is needed)
//	-ignore-stdin-close  keep running after stdin closes (shutdown must use signals)
//	-spawn-grandchild    start `sleep 1000` in the same process group and write
//	                     "grandchild=PID" to stderr
//	-spawn-setsid-grandchild
//	                     start `sleep 1000` in a session (so a process group) of its
//	                     own, as a daemonising helper does, and write
//	                     "setsid-grandchild=PID" to stderr
//	-slow-start MS       wait MS milliseconds before reading stdin
//	-term-delay MS       on SIGTERM, write "testserver: SIGTERM: finishing" to stderr, take
//	                     MS milliseconds to finish, write "testserver: SIGTERM: finished"
//	                     and exit 0, as npm rolls an interrupted install back (with
//	                     -slow-start, a package runner stopped while it installs)
//	-exit-after MS       exit with status 4 MS milliseconds after starting to serve
//	-print-env           write the environment to stderr at start, one KEY=VALUE a line
//	-stderr-line N       write one stderr line of N bytes at start and on each tools/call
//	-leak VAR            add tools leak, leak_error, leak_tool_error, leak_elicit,
//	                     leak_sample, leak_input, resource test://leak and prompt leak, which put the
//	                     value of environment variable VAR in every field a server can
//	                     fill: description, result content of each kind, structuredContent,
//	                     _meta, log and progress notifications, errors, elicitation and
//	                     sampling requests (a careless server echoing its secret)
//	-protocol-version V  speak only protocol version V (repeatable; default every version
//	                     the go-sdk speaks)
//	-without METHOD      answer METHOD (e.g. resources/templates/list, ping) with JSON-RPC
//	                     -32601 "Method not found", still declaring its capability, as
//	                     servers that implement part of a capability do (repeatable)
//	-call-log FILE       append a line "TOOL ARGUMENTS" to FILE for every tools/call,
//	                     before answering it: how many times a tool ran, across
//	                     processes sharing FILE (a workflow step run once)
//	-meta-log FILE       append a line "METHOD META" to FILE for every request it
//	                     receives, META the request's _meta as JSON (null when none):
//	                     what trace context (traceparent, tracestate) reached it
//	-elicit-schema JSON  the elicit tool asks for this requested schema instead of its
//	                     own (enums, formats, bounds, required fields: a client's form)
//	-elicit-answer-elsewhere TEXT
//	                     the elicit tool's question says, in its _meta
//	                     (switchboard/answer_elsewhere), that it can be answered
//	                     another way, TEXT (as a workflow's gate does)
//	-print-client-capabilities
//	                     when initialized, write "testserver: client capabilities: JSON"
//	                     to stderr: what its client (a host, the gateway) declared
//	-banner N            write N lines that are not messages to stdout before serving (a
//	                     banner, a dotenv notice, a JSON log record, terminal escapes and
//	                     binary junk, in turn)
//	-hostile-text        declare HostileText (terminal escapes, tag characters, bidi and
//	                     zero-width characters) in every text field: tools hostile,
//	                     hostile_error and hostile_elicit, prompt hostile, resource
//	                     test://hostile, template test://hostile/{id}, serverInfo,
//	                     instructions, in progress, log, error and elicitation messages, and
//	                     in a result (tool hostile_result);
//	                     and a tool, prompt and resource whose identifiers hold a zero-width
//	                     space (see addHostileText)
//	-poisoned            add tool fact_of_the_day whose description is poisoned as in
//	                     Invariant Labs' tool poisoning attack (an <IMPORTANT> block that
//	                     asks for ~/.ssh/id_rsa, hides it from the user, and shadows
//	                     another server's send_email), its last sentence spelled in
//	                     invisible tag characters (PoisonedDescription)
//	-rug-pull            add tool weather (WeatherDescription) and tool rug_pull, whose call
//	                     gives weather WeatherPoisoned as its description and so announces
//	                     tools/list_changed: the rug pull of a pinned definition
//	-poisoned-declared   add prompt daily_quote, resource test://poisoned/notes and resource
//	                     template test://poisoned/{id}, each with a poisoned description
//	                     (see addPoisonedDeclared), beside the clean greet, test://static/1
//	                     and test://item/{id}
//	-description-bytes N add tool long whose description is N bytes
//	-raw-tool JSON       add this tool object, as written, to the last page of every
//	                     tools/list result (repeatable), below the SDK: what the SDK would
//	                     refuse to send, such as "inputSchema": null or no inputSchema
//	-snoop               add tool snoop {needle string, pid int}, which looks for needle in
//	                     other processes' environments as a hostile server would
//	                     (interop.SnoopEnviron: /proc/PID/environ, every /proc/*/environ,
//	                     /proc unmounted and mounted anew in namespaces of its own) and
//	                     answers with what it did, a line starting "FOUND" where it found it
//	-read-only NAME      declare readOnlyHint on tool NAME (echo, add or slow; repeatable)
//	-idempotent NAME     declare idempotentHint on tool NAME (echo, add or slow; repeatable)
//	-counter             add tool count, which answers "call N" for its Nth call in this
//	                     process: two callers see one process (a running serve's) when
//	                     the second gets "call 2"
//	-bad-answer MODE     add tool bad, whose calls are answered below the SDK with what
//	                     the protocol does not allow; MODE is one of
//	                       duplicate-result  two "result" members: "checked" first, "smuggled" last
//	                       invalid-utf8      a text holding a byte that is not UTF-8
//	                       batch             the answer alone in a batch (an array)
//	                       two-ids           the call's id, and a second "id" member 999
//	                       notification      a log message with two "data" members
//	                                         ("checked", "smuggled") first, then the
//	                                         SDK's proper answer
//	-subscribe           declare resources.subscribe, and write "testserver: subscribe URI"
//	                     and "testserver: unsubscribe URI" to stderr for each request
//	-tasks-fixtures      add the tools the conformance suite's tasks-* scenarios call, as
//	                     plain tools (tasks.go): greet {name}, slow_compute {seconds, label}
//	                     (honours cancellation), slow_lookup (the same, readOnlyHint),
//	                     failing_job (1 s, then isError),
//	                     protocol_error_job (1 s, then a JSON-RPC error), confirm_delete
//	                     {filename} (one elicitation), multi_input (two at once) and
//	                     test_tool_with_task (asks user_name, 1 s, greets it)
//
// The PIDs written are those the fixture sees: in a PID namespace of its own
// (where its own PID is 1) tests translate them with interop.HostPIDIn.
//
// The misbehaviours on tools/call apply to every tool. They and -hang,
// -hang-init and -ignore-stdin-close work below the SDK, on the stdin and
// stdout byte streams; without them the SDK's own stdio transport is used.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testserver: %v\n", err)
		os.Exit(1)
	}
}

// config holds the parsed flags.
type config struct {
	hang, hangInit, crashOnCall, garbage bool
	hugeLine                             int
	hugeLineNewline, streamForever       bool
	tools, pageSize                      int
	toolNames                            stringList
	fileTools                            []*mcp.Tool
	refCycle, badSchema                  bool
	ignoreSigterm, ignoreStdinClose      bool
	spawnGrandchild, printEnv            bool
	spawnSetsidGrandchild                bool
	stderrLine                           int
	leak                                 string
	printClientCaps                      bool
	banner, descriptionBytes             int
	hostileText, poisoned, rugPull       bool
	poisonedDeclared                     bool
	rawTools                             stringList
	patternTools                         stringList
	slowStart                            time.Duration
	exitAfter                            time.Duration
	termDelay                            time.Duration
	protocolVersions                     stringList
	without                              stringList
	elicitSchema                         string
	elicitElsewhere                      string
	counter, snoop                       bool
	callLog                              string
	metaLog                              string
	subscribe                            bool
	taskFixtures                         bool
	readOnly, idempotent                 stringList
	badAnswer                            string
}

// annotations are the annotations -read-only and -idempotent declare on
// tool name; nil when they declare none.
func (c *config) annotations(name string) *mcp.ToolAnnotations {
	ro, idem := slices.Contains(c.readOnly, name), slices.Contains(c.idempotent, name)
	if !ro && !idem {
		return nil
	}
	return &mcp.ToolAnnotations{ReadOnlyHint: ro, IdempotentHint: idem}
}

// intercepts reports whether the stdio byte streams must be filtered.
func (c *config) intercepts() bool {
	return c.hang || c.hangInit || c.crashOnCall || c.garbage || c.hugeLine > 0 ||
		c.streamForever || c.ignoreStdinClose || len(c.rawTools) > 0 || c.badAnswer != ""
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	var c config
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.hang, "hang", false, "never answer tools/call")
	fs.BoolVar(&c.hangInit, "hang-init", false, "never answer initialize nor server/discover")
	fs.BoolVar(&c.crashOnCall, "crash-on-call", false, "exit with status 3 in the middle of a tools/call")
	fs.BoolVar(&c.garbage, "garbage", false, "write non-JSON lines to stdout on tools/call, then answer")
	fs.IntVar(&c.hugeLine, "huge-line", 0, "answer tools/call with one response line of exactly `N` bytes")
	fs.BoolVar(&c.hugeLineNewline, "huge-line-newline", false, "end the -huge-line response with a newline")
	fs.BoolVar(&c.streamForever, "stream-forever", false, "on tools/call, write bytes without a newline forever")
	fs.IntVar(&c.tools, "tools", 0, "register `N` extra tools t0001…")
	fs.IntVar(&c.pageSize, "page-size", 100, "items per page of list results")
	toolsFile := fs.String("tools-file", "", "register the tools of this `FILE` (JSON: {\"tools\": [tool, …]}, as internal/testkit/toolfixture's servers); each answers \"called NAME ARGUMENTS\"")
	fs.Var(&c.toolNames, "tool-name", "register an extra tool with exactly this `NAME` (repeatable)")
	fs.BoolVar(&c.refCycle, "ref-cycle", false, "add tool ref_cycle whose inputSchema has a $ref cycle")
	fs.BoolVar(&c.badSchema, "bad-schema", false, "add tool bad_schema whose inputSchema does not compile")
	fs.Var(&c.patternTools, "pattern-tool", "add tool pattern_N (N from 1, per flag) whose one required argument id is a string with this `PATTERN` (ECMA-262, as written); it answers \"called pattern_N id=ID\" (repeatable)")
	fs.BoolVar(&c.ignoreSigterm, "ignore-sigterm", false, "ignore SIGTERM")
	fs.BoolVar(&c.ignoreStdinClose, "ignore-stdin-close", false, "keep running after stdin closes")
	fs.BoolVar(&c.spawnGrandchild, "spawn-grandchild", false, "start \"sleep 1000\" in the same process group, print grandchild=PID to stderr")
	fs.BoolVar(&c.spawnSetsidGrandchild, "spawn-setsid-grandchild", false, "start \"sleep 1000\" in a session of its own, print setsid-grandchild=PID to stderr")
	slowStart := fs.Int("slow-start", 0, "wait `MS` milliseconds before serving")
	termDelay := fs.Int("term-delay", 0, "on SIGTERM, take `MS` milliseconds to finish, then exit 0")
	exitAfter := fs.Int("exit-after", 0, "exit with status 4 `MS` milliseconds after starting to serve (a flapping server)")
	fs.BoolVar(&c.printEnv, "print-env", false, "write the environment to stderr at start")
	fs.StringVar(&c.leak, "leak", "", "put the value of environment variable `VAR` in every field a server can fill")
	fs.IntVar(&c.banner, "banner", 0, "write `N` lines that are not messages to stdout before serving")
	fs.BoolVar(&c.hostileText, "hostile-text", false, "declare terminal escapes and invisible characters in every text field")
	fs.BoolVar(&c.poisoned, "poisoned", false, "add tool fact_of_the_day, whose description is poisoned (tool poisoning)")
	fs.BoolVar(&c.rugPull, "rug-pull", false, "add tools weather and rug_pull, whose call changes weather's description (a rug pull)")
	fs.BoolVar(&c.poisonedDeclared, "poisoned-declared", false, "add prompt daily_quote, resource test://poisoned/notes and template test://poisoned/{id}, whose descriptions are poisoned")
	fs.IntVar(&c.descriptionBytes, "description-bytes", 0, "add tool long whose description is `N` bytes")
	fs.Var(&c.rawTools, "raw-tool", "add this tool `JSON` object to tools/list results as written (repeatable)")
	fs.IntVar(&c.stderrLine, "stderr-line", 0, "write one stderr line of `N` bytes at start and on each tools/call")
	fs.BoolVar(&c.printClientCaps, "print-client-capabilities", false, "write the client's declared capabilities to stderr when initialized")
	fs.Var(&c.protocolVersions, "protocol-version", "speak only this protocol `VERSION` (repeatable; default every version the go-sdk speaks)")
	fs.Var(&c.without, "without", "answer `METHOD` with -32601 method not found (repeatable)")
	fs.StringVar(&c.elicitSchema, "elicit-schema", "", "the elicit tool asks for this requested schema (`JSON`) instead of its own")
	fs.StringVar(&c.elicitElsewhere, "elicit-answer-elsewhere", "", "the elicit tool's question says in its _meta it can be answered this other way (`TEXT`)")
	fs.BoolVar(&c.snoop, "snoop", false, "add tool snoop, which looks for a needle in other processes' environments")
	fs.BoolVar(&c.counter, "counter", false, "add tool count, which answers how many times this process was called")
	fs.StringVar(&c.callLog, "call-log", "", "append a line `TOOL ARGUMENTS` to this file for every tools/call, before answering it")
	fs.Var(&c.readOnly, "read-only", "declare readOnlyHint on tool `NAME` (echo, add or slow; repeatable)")
	fs.Var(&c.idempotent, "idempotent", "declare idempotentHint on tool `NAME` (echo, add or slow; repeatable)")
	fs.StringVar(&c.metaLog, "meta-log", "", "append a line `METHOD META` to this file for every request, META its _meta as JSON")
	fs.StringVar(&c.badAnswer, "bad-answer", "", "add tool bad, answered with what the protocol does not allow: `MODE` duplicate-result, invalid-utf8, batch, two-ids or notification")
	fs.BoolVar(&c.taskFixtures, "tasks-fixtures", false, "add the tools of the conformance suite's tasks scenarios (greet, slow_compute, slow_lookup, failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task)")
	fs.BoolVar(&c.subscribe, "subscribe", false, "declare resources.subscribe; write each (un)subscribe to stderr")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if _, ok := badAnswers[c.badAnswer]; c.badAnswer != "" && !ok {
		return nil, fmt.Errorf("-bad-answer %q: unknown mode", c.badAnswer)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.pageSize <= 0 {
		return nil, fmt.Errorf("-page-size %d: must be positive", c.pageSize)
	}
	if c.elicitSchema != "" && !json.Valid([]byte(c.elicitSchema)) {
		return nil, fmt.Errorf("-elicit-schema %q: not JSON", c.elicitSchema)
	}
	for _, t := range c.rawTools {
		if !json.Valid([]byte(t)) {
			return nil, fmt.Errorf("-raw-tool %q: not JSON", t)
		}
	}
	if *toolsFile != "" {
		b, err := os.ReadFile(*toolsFile)
		if err != nil {
			return nil, fmt.Errorf("-tools-file: %w", err)
		}
		var f struct {
			Tools []*mcp.Tool `json:"tools"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("-tools-file %s: %w", *toolsFile, err)
		}
		c.fileTools = f.Tools
	}
	c.slowStart = time.Duration(*slowStart) * time.Millisecond
	c.exitAfter = time.Duration(*exitAfter) * time.Millisecond
	c.termDelay = time.Duration(*termDelay) * time.Millisecond
	return &c, nil
}

func run(args []string, stdin io.ReadCloser, stdout io.Writer, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	diag = stderr
	if c.printEnv {
		env := os.Environ()
		slices.Sort(env)
		for _, kv := range env {
			fmt.Fprintln(stderr, kv)
		}
	}
	if c.stderrLine > 0 {
		writeLongLine(stderr, c.stderrLine)
	}
	if c.banner > 0 {
		writeBanner(stdout, c.banner)
	}
	if c.spawnGrandchild {
		// No Setpgid: the grandchild stays in our process group, like the
		// node process an npx wrapper leaves behind.
		cmd := exec.Command("sleep", "1000")
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("spawning grandchild: %w", err)
		}
		fmt.Fprintf(stderr, "grandchild=%d\n", cmd.Process.Pid)
	}
	if c.spawnSetsidGrandchild {
		cmd := exec.Command("sleep", "1000")
		newSession(cmd)
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("spawning grandchild: %w", err)
		}
		fmt.Fprintf(stderr, "setsid-grandchild=%d\n", cmd.Process.Pid)
	}
	if c.ignoreSigterm {
		signal.Ignore(syscall.SIGTERM)
	}
	if c.termDelay > 0 {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			fmt.Fprintln(stderr, "testserver: SIGTERM: finishing")
			time.Sleep(c.termDelay) // the misbehaviour itself: work that takes this long
			fmt.Fprintln(stderr, "testserver: SIGTERM: finished")
			os.Exit(0)
		}()
	}
	if c.slowStart > 0 {
		time.Sleep(c.slowStart) // the misbehaviour itself, not synchronisation
	}

	if c.exitAfter > 0 {
		time.AfterFunc(c.exitAfter, func() {
			fmt.Fprintln(stderr, "testserver: exiting as asked (-exit-after)")
			os.Exit(4)
		})
	}

	server := newServer(c)
	var t mcp.Transport = &mcp.StdioTransport{}
	if c.intercepts() {
		t = newWireTransport(c, stdin, stdout, stderr)
	}
	err = server.Run(context.Background(), t)
	if c.ignoreStdinClose {
		select {} // only a signal ends us
	}
	return err
}

// writeLongLine writes one line of n bytes (newline included) to w.
func writeLongLine(w io.Writer, n int) {
	w.Write([]byte(strings.Repeat("e", max(0, n-1)) + "\n"))
}
