package workflow

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
)

// The durability tests run the engine in a child process (this test
// binary, re-executed with SWB_WF_CHILD set, as the go-sdk's cmd tests
// do), kill it with SIGKILL at a point it reports on stdout, start
// another, and count the calls the fixture server received.

func TestMain(m *testing.M) {
	if mode := os.Getenv("SWB_WF_CHILD"); mode != "" {
		if err := child(mode); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// durableWorkflows are the workflows of the durability tests. c is slow
// (1.5 s), so that the first process is killed while it runs; in steps it
// is not idempotent (unless its tool says so), in steps_idem it is.
func durableWorkflows() map[string]*Workflow {
	steps := func(id string, idempotent bool) *Workflow {
		return &Workflow{ID: id, Steps: []*Step{
			echo("a", "a"),
			echo("b", "b {{.steps.a.result}}", "a"),
			{ID: "c", Kind: StepTool, Tool: "mcp_fx_slow", Arguments: val(map[string]any{"ms": 1500}), Needs: []string{"b"},
				Idempotent: idempotent, OnError: OnErrorContinue, Default: "c's default"},
			echo("d", "d {{.steps.c.result}}", "c"),
		}, Outputs: []Output{{Name: "d", Value: tpl("{{.steps.d.result}}")}}}
	}
	return registry(
		steps("steps", false),
		steps("steps_idem", true),
		&Workflow{ID: "gated", Steps: []*Step{
			echo("a", "a"),
			{ID: "ok", Kind: StepGate, Needs: []string{"a"}, Gate: &Gate{Message: tpl("go on?")}},
			echo("b", "b", "ok"),
		}, Outputs: []Output{{Name: "b", Value: tpl("{{.steps.b.result}}")}}},
	)
}

// child runs an engine: mode "start:WORKFLOW" starts run "r1"; "resume"
// and "observe" let recovery resume it. Either way it prints each event as a line
// "event TYPE STEP" (and " #ATTEMPT" after an attempt > 1) and, when the run waits on a gate in "resume" mode,
// accepts it; it exits when the run ends. In "resume" mode, an
// interrupted step is resolved as SWB_WF_RESOLVE says (retry, skip,
// fail), or, without it, the child exits there.
//
// SWB_WF_HOLD=STEP holds each attempt of STEP once it is recorded as
// started, before its call (printing "marked STEP"), until the process
// ends. SWB_WF_LOCK_AFTER=CALL ("TOOL ARGUMENTS", as the call log has
// it), once that call has returned its result to the engine, locks the
// database so that the step's outcome cannot be recorded, and prints
// "returned CALL". SWB_WF_FIXTURE_ARGS are more arguments of the fixture
// (space-separated), SWB_WF_META its -meta-log.
func child(mode string) error {
	ctx := context.Background()
	args := []string{"-call-log", os.Getenv("SWB_WF_LOG")}
	if m := os.Getenv("SWB_WF_META"); m != "" {
		args = append(args, "-meta-log", m)
	}
	args = append(args, strings.Fields(os.Getenv("SWB_WF_FIXTURE_ARGS"))...)
	var hopts host.Options
	if call := os.Getenv("SWB_WF_LOCK_AFTER"); call != "" {
		hopts.ClientMiddleware = func(string) mcp.Middleware { return lockAfter(call, os.Getenv("SWB_WF_DB")) }
	}
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: os.Getenv("SWB_WF_FIXTURE"),
		Args: args}}, &hopts)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Start(ctx); err != nil {
		return err
	}
	wfs := durableWorkflows()
	if d := os.Getenv("SWB_WF_DIGEST"); d != "" {
		for _, wf := range wfs {
			wf.Digest = d
		}
	}
	opts := &EngineOptions{Database: os.Getenv("SWB_WF_DB"), Host: h, Workflows: wfs}
	if os.Getenv("SWB_WF_EXECUTOR") != "" {
		// An executor of its own, as a serve has: its id first.
		x, err := OpenExecutor(ctx, opts.Database, "serve")
		if err != nil {
			return err
		}
		defer x.Close()
		opts.Executor = x
		fmt.Printf("executor %s\n", x.ID)
	}
	if hold := os.Getenv("SWB_WF_HOLD"); hold != "" {
		opts.StepContext = func(ctx context.Context, ev Event) context.Context {
			if ev.Step == hold {
				fmt.Printf("marked %s\n", hold)
				<-ctx.Done()
			}
			return ctx
		}
	}
	e, err := New(ctx, opts)
	if err != nil {
		return err
	}
	defer e.Close()
	if id, ok := strings.CutPrefix(mode, "start:"); ok {
		if _, err := e.Start(ctx, id, nil, &StartOptions{RunID: "r1"}); err != nil {
			return err
		}
	}
	err = e.Follow(ctx, "r1", 0, func(ev Event) error {
		if ev.Attempt > 1 {
			fmt.Printf("event %s %s #%d\n", ev.Type, ev.Step, ev.Attempt)
		} else {
			fmt.Printf("event %s %s\n", ev.Type, ev.Step)
		}
		if ev.Type == EventGateWaiting && mode == "resume" {
			// The recovered gate may not be waiting yet: Answer sends a
			// durable message it receives when it is.
			if err := e.Answer(ctx, "r1", ev.Step, GateAnswer{Action: "accept"}); err != nil {
				return err
			}
		}
		if ev.Type == EventStepInterrupted && mode == "resume" {
			how := Resolution(os.Getenv("SWB_WF_RESOLVE"))
			if how == "" {
				st, err := e.Get(ctx, "r1")
				if err != nil {
					return err
				}
				fmt.Printf("status %s %s %d\n", st.State, ev.Step, ev.Attempt)
				return errStop
			}
			// As for a gate: the resolution is a durable message.
			if err := e.Resolve(ctx, "r1", ev.Step, how); err != nil {
				return err
			}
		}
		if ev.Type == EventRunFailed {
			fmt.Printf("error %s\n", ev.Error)
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// held keeps lockAfter's connections.
var held []any

// lockAfter is a client middleware that, once the call named call has
// returned, takes the database's write lock (SQLite) or the lock of the
// table of DBOS's step outcomes (PostgreSQL) and keeps it until the
// process dies: the step's outcome cannot be recorded.
func lockAfter(call, database string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			p, ok := req.GetParams().(*mcp.CallToolParams)
			if !ok || method != "tools/call" {
				return res, err
			}
			args, _ := json.Marshal(p.Arguments)
			if p.Name+" "+string(args) != call {
				return res, err
			}
			var conn *pgx.Conn
			var db *sql.DB
			if isPostgres(database) {
				var lerr error
				conn, lerr = pgx.Connect(ctx, database)
				if lerr == nil {
					_, lerr = conn.Exec(ctx, `BEGIN; LOCK TABLE dbos.operation_outputs IN EXCLUSIVE MODE`)
				}
				if lerr != nil {
					fmt.Fprintln(os.Stderr, "child: locking:", lerr)
					os.Exit(1)
				}
			} else {
				st, lerr := store.Open(ctx, database, nil)
				if lerr == nil {
					db = st.DB()
					_, lerr = db.ExecContext(ctx, `BEGIN IMMEDIATE`)
				}
				if lerr != nil {
					fmt.Fprintln(os.Stderr, "child: locking:", lerr)
					os.Exit(1)
				}
			}
			held = append(held, conn, db) // kept from the collector (and its finalizers) until the process dies
			fmt.Printf("returned %s\n", call)
			return res, err
		}
	}
}

type childRig struct {
	fixture, db, log string
	// killAfterCall, when set, delays the kill until the fixture has
	// received a call with this prefix.
	killAfterCall string
	// beforeKill, when set, is called with the lines read just before the
	// kill.
	beforeKill func(lines []string)
}

// waitCall waits until the fixture logged a call starting with prefix
// (the file is all there is to watch).
func (c *childRig) waitCall(t *testing.T, prefix string) {
	wait.For(t, fmt.Sprintf("the fixture to get a call %q", prefix), func() (string, bool) {
		b, _ := os.ReadFile(c.log)
		return string(b), strings.HasPrefix(string(b), prefix) || strings.Contains(string(b), "\n"+prefix)
	})
}

// newChildRig makes a rig whose children use database ("": a new SQLite
// file).
func newChildRig(t *testing.T, database string) *childRig {
	dir := t.TempDir()
	if database == "" {
		database = filepath.Join(dir, "state.db")
	}
	return &childRig{fixture: interop.Build(t, fixturePkg), db: database, log: filepath.Join(dir, "calls.log")}
}

// run starts a child in mode and reads its events until one has the line
// until (then it is killed with SIGKILL) or it exits (until ""). It
// returns the lines read.
func (c *childRig) run(t *testing.T, mode, until string, env ...string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SWB_WF_CHILD="+mode, "SWB_WF_DB="+c.db, "SWB_WF_LOG="+c.log, "SWB_WF_FIXTURE="+c.fixture)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A child stuck past a minute dumps its goroutines (SIGQUIT: Go's
	// runtime prints them to its stderr, the test's) before it is killed:
	// where it hung is in the log.
	timer := time.AfterFunc(60*time.Second, func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		time.AfterFunc(5*time.Second, func() { cmd.Process.Kill() })
	})
	defer timer.Stop()
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if until != "" && sc.Text() == until {
			if c.killAfterCall != "" {
				c.waitCall(t, c.killAfterCall)
			}
			if c.beforeKill != nil {
				c.beforeKill(lines)
			}
			cmd.Process.Kill() // SIGKILL: no deferred Close runs
			break
		}
	}
	err = cmd.Wait()
	if until == "" && err != nil {
		t.Fatalf("child %s: %v; lines %q", mode, err, lines)
	}
	if until != "" && (len(lines) == 0 || lines[len(lines)-1] != until) {
		t.Fatalf("child %s ended before %q: %v; lines %q", mode, until, err, lines)
	}
	return lines
}

func (c *childRig) calls(t *testing.T) map[string]int {
	b, err := os.ReadFile(c.log)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		n[l]++
	}
	return n
}

// TestKillDuringStep: a process killed while a step that is not
// idempotent (c, slow) is in flight: the process that resumes the run does
// not call c again, and the run is interrupted at c's attempt 1, until a
// person resolves it: retry calls c again (attempt 2, then d), skip takes
// c's default (then d), fail fails the run at c. Before, recovery called
// c again at once.
func TestKillDuringStep(t *testing.T) { testKillDuringStep(t, "") }

func testKillDuringStep(t *testing.T, database string) {
	for _, c := range []struct {
		how     Resolution
		last    string
		slow, d int
	}{
		{ResolveRetry, "event run:completed ", 2, 1},
		{ResolveSkip, "event run:completed ", 1, 1},
		{ResolveFail, "error step c: interrupted: step c: attempt 1 was interrupted, and a person chose to fail the run", 1, 0},
	} {
		t.Run(string(c.how), func(t *testing.T) {
			db := subDatabase(t, database, string(c.how))
			r := newChildRig(t, db)
			r.killAfterCall = "slow "
			r.run(t, "start:steps", "event step:started c")
			lines := r.run(t, "resume", "")
			if got, want := lines[len(lines)-2:], []string{"event step:interrupted c", "status interrupted c 1"}; !slices.Equal(got, want) {
				t.Fatalf("resumed run ended with %q, want %q; lines %q", got, want, lines)
			}
			if calls := r.calls(t); calls[`slow {"ms":1500}`] != 1 {
				t.Errorf("c called %d times by the kill and the recovery, want once: %v", calls[`slow {"ms":1500}`], calls)
			}
			lines = r.run(t, "resume", "", "SWB_WF_RESOLVE="+string(c.how))
			if last := lines[len(lines)-1]; last != c.last {
				t.Fatalf("resolved run (%s) ended with %q, want %q; lines %q", c.how, last, c.last, lines)
			}
			calls := r.calls(t)
			want := map[string]int{`echo {"text":"a"}`: 1, `echo {"text":"b a"}`: 1, `slow {"ms":1500}`: c.slow}
			switch c.how {
			case ResolveRetry:
				want[`echo {"text":"d slept 1500 ms"}`] = 1
			case ResolveSkip:
				want[`echo {"text":"d c's default"}`] = 1
			}
			if !maps.Equal(calls, want) {
				t.Errorf("calls = %v, want %v", calls, want)
			}
			// Each event once (the last process prints them all).
			seen := map[string]int{}
			for _, l := range lines {
				seen[l]++
			}
			for l, n := range seen {
				if n > 1 {
					t.Errorf("event %q delivered %d times", l, n)
				}
			}
			if !slices.Contains(lines, "event step:resolved c") {
				t.Errorf("no step:resolved event: %q", lines)
			}
			if retried := slices.Contains(lines, "event step:started c #2"); retried != (c.how == ResolveRetry) {
				t.Errorf("attempt 2 of c started: %v; lines %q", retried, lines)
			}
		})
	}
}

// TestKillDuringIdempotentStep: a step that may be called again — marked
// idempotent: true, or whose tool declares readOnlyHint or
// idempotentHint — is called again by recovery, as before, and both calls
// of its attempt carry the same idempotency key in their _meta.
func TestKillDuringIdempotentStep(t *testing.T) { testKillDuringIdempotentStep(t, "") }

func testKillDuringIdempotentStep(t *testing.T, database string) {
	for _, c := range []struct{ name, workflow, fixtureArgs string }{
		{"marked", "steps_idem", ""},
		{"idempotentHint", "steps", "-idempotent slow"},
		{"readOnlyHint", "steps", "-read-only slow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := subDatabase(t, database, c.name)
			r := newChildRig(t, db)
			r.killAfterCall = "slow "
			meta := filepath.Join(t.TempDir(), "meta.log")
			env := []string{"SWB_WF_META=" + meta, "SWB_WF_FIXTURE_ARGS=" + c.fixtureArgs}
			r.run(t, "start:"+c.workflow, "event step:started c", env...)
			lines := r.run(t, "resume", "", env...)
			if last := lines[len(lines)-1]; last != "event run:completed " {
				t.Fatalf("resumed run ended with %q; lines %q", last, lines)
			}
			calls := r.calls(t)
			want := map[string]int{`echo {"text":"a"}`: 1, `echo {"text":"b a"}`: 1, `slow {"ms":1500}`: 2, `echo {"text":"d slept 1500 ms"}`: 1}
			if !maps.Equal(calls, want) {
				t.Errorf("calls = %v, want %v", calls, want)
			}
			keys := idempotencyKeys(t, meta)
			if got, want := keys, []string{"r1/a/1", "r1/b/1", "r1/c/1", "r1/c/1", "r1/d/1"}; !slices.Equal(got, want) {
				t.Errorf("idempotency keys of the calls = %q, want %q", got, want)
			}
		})
	}
}

// subDatabase is database ("": a new SQLite file) for a subtest: on
// PostgreSQL, another database named with suffix.
func subDatabase(t *testing.T, database, suffix string) string {
	t.Helper()
	if database == "" {
		return ""
	}
	u, err := url.Parse(database)
	if err != nil {
		t.Fatal(err)
	}
	u.Path += "_" + strings.ToLower(suffix)
	return u.String()
}

// idempotencyKeys returns the idempotency keys of the tools/calls in a
// fixture's -meta-log, in order.
func idempotencyKeys(t *testing.T, metaLog string) []string {
	t.Helper()
	b, err := os.ReadFile(metaLog)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for l := range strings.Lines(string(b)) {
		m, ok := strings.CutPrefix(strings.TrimSpace(l), "tools/call ")
		if !ok {
			continue
		}
		var meta map[string]any
		if err := json.Unmarshal([]byte(m), &meta); err != nil {
			t.Fatal(err)
		}
		k, _ := meta[host.MetaKeyIdempotencyKey].(string)
		keys = append(keys, k)
	}
	return keys
}

// TestKillBetweenMarkAndCall: a process killed after the attempt of c was
// recorded as started and before c was called: c was not called, but no
// process can know it; the run is interrupted at c, never called by
// recovery.
func TestKillBetweenMarkAndCall(t *testing.T) {
	r := newChildRig(t, "")
	r.run(t, "start:steps", "marked c", "SWB_WF_HOLD=c")
	lines := r.run(t, "resume", "")
	if got, want := lines[len(lines)-1], "status interrupted c 1"; got != want {
		t.Fatalf("resumed run: %q, want %q; lines %q", got, want, lines)
	}
	if calls := r.calls(t); calls[`slow {"ms":1500}`] != 0 {
		t.Errorf("calls = %v: c was called", calls)
	}
}

// TestKillAfterCallBeforeRecord: a process killed once c's call has
// returned to the engine but before DBOS recorded the step's outcome (the
// database locked meanwhile): recovery does not call c again; the run is
// interrupted at c.
func TestKillAfterCallBeforeRecord(t *testing.T) { testKillAfterCallBeforeRecord(t, "") }

func testKillAfterCallBeforeRecord(t *testing.T, database string) {
	r := newChildRig(t, database)
	const call = `slow {"ms":1500}`
	r.run(t, "start:steps", "returned "+call, "SWB_WF_LOCK_AFTER="+call)
	lines := r.run(t, "resume", "")
	if got, want := lines[len(lines)-1], "status interrupted c 1"; got != want {
		t.Fatalf("resumed run: %q, want %q; lines %q", got, want, lines)
	}
	if calls := r.calls(t); calls[call] != 1 {
		t.Errorf("calls = %v: c called %d times, want once", calls, calls[call])
	}
}

func TestKillDuringGate(t *testing.T) { testKillDuringGate(t, "") }

func testKillDuringGate(t *testing.T, database string) {
	c := newChildRig(t, database)
	c.run(t, "start:gated", "event gate:waiting ok")
	lines := c.run(t, "resume", "")
	if last := lines[len(lines)-1]; last != "event run:completed " {
		t.Fatalf("resumed run ended with %q; lines %q", last, lines)
	}
	calls := c.calls(t)
	if calls[`echo {"text":"a"}`] != 1 || calls[`echo {"text":"b"}`] != 1 || len(calls) != 2 {
		t.Errorf("calls = %v, want a and b once each", calls)
	}
}

// TestDefinitionChanged: a run whose workflow changed while it waited is
// reported as failed with ErrDefinition at recovery, not resumed.
func TestDefinitionChanged(t *testing.T) {
	c := newChildRig(t, "")
	c.run(t, "start:gated", "event gate:waiting ok")
	lines := c.run(t, "observe", "", "SWB_WF_DIGEST=changed")
	if got := lines[len(lines)-1]; !strings.HasPrefix(got, "error definition: ") || !strings.Contains(got, "changed since the run started") {
		t.Errorf("last line = %q, want the definition error; lines %q", got, lines)
	}
	if calls := c.calls(t); calls[`echo {"text":"b"}`] != 0 {
		t.Errorf("calls = %v: the changed run went on", calls)
	}
}

func TestAdoptDeadExecutor(t *testing.T) { testAdoptDeadExecutor(t, "") }

// testAdoptDeadExecutor: a process with an executor of its own (a serve
// replica) is killed in the middle of a run; another engine on the
// database, with its own executor, sees the first one alive until then
// (its runs are not taken), gone after, adopts the run, which is
// interrupted at the step in flight (c, not idempotent), and finishes it
// once a person retries c, with no completed step run again.
func testAdoptDeadExecutor(t *testing.T, database string) {
	if database != "" {
		// A serve's store has opened it before the executor: made here.
		createDatabase(t, database)
	}
	c := newChildRig(t, database)
	c.killAfterCall = "slow "
	ctx := context.Background()
	var b *Executor
	var idA string
	var e *Engine
	c.beforeKill = func(lines []string) {
		idA, _ = strings.CutPrefix(lines[0], "executor ")
		var err error
		if b, err = OpenExecutor(ctx, c.db, "serve"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		if !b.Alive(idA) {
			t.Errorf("executor %s is alive, and Alive says it is gone", idA)
		}
		h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: c.fixture,
			Args: []string{"-call-log", c.log}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if e, err = New(ctx, &EngineOptions{Database: c.db, Host: h, Workflows: durableWorkflows(), ExecutorID: b.ID}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		if ids, err := e.Adopt(ctx, b.Alive); err != nil || len(ids) != 0 {
			t.Errorf("Adopt while the executor lives = %v, %v; want nothing", ids, err)
		}
	}
	// Two machines, as far as files go: each process its own state
	// folder (where lock files were kept for PostgreSQL before).
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	lines := c.run(t, "start:steps", "event step:started c", "SWB_WF_EXECUTOR=1", "XDG_STATE_HOME="+t.TempDir())
	if !strings.HasPrefix(lines[0], "executor serve-") || e == nil {
		t.Fatalf("the child's lines: %q", lines)
	}
	// The lock goes when the server (or the kernel) sees the process
	// gone: no event says when.
	wait.For(t, fmt.Sprintf("executor %s to be dead after its process was killed", idA), func() (bool, bool) {
		alive := b.Alive(idA)
		return alive, !alive
	})
	ids, err := e.Adopt(ctx, b.Alive)
	if err != nil || len(ids) != 1 || ids[0] != "r1" {
		t.Fatalf("Adopt after the kill = %v, %v; want [r1]", ids, err)
	}
	// c, not idempotent, was in flight: the adopted run is interrupted
	// there, and a person retries it.
	var last Event
	interrupted := false
	if err := e.Follow(ctx, "r1", 0, func(ev Event) error {
		last = ev
		if ev.Type == EventStepInterrupted {
			interrupted = true
			return e.Resolve(ctx, "r1", ev.Step, ResolveRetry)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if last.Type != EventRunCompleted || !interrupted {
		t.Fatalf("the adopted run ended with %+v (interrupted at c: %v)", last, interrupted)
	}
	calls := c.calls(t)
	want := map[string]int{`echo {"text":"a"}`: 1, `echo {"text":"b a"}`: 1, `slow {"ms":1500}`: 2, `echo {"text":"d slept 1500 ms"}`: 1}
	for k, n := range want {
		if calls[k] != n {
			t.Errorf("%s called %d times, want %d (all calls: %v)", k, calls[k], n, calls)
		}
	}
}

// TestTwoAdopters: the process running a run is killed while c (not
// idempotent) is in flight, and two engines, each with an executor of its
// own, adopt the run at once. c is not called again by either: the run is
// interrupted at c once, and a person's retry is called once; every
// event is stored once.
func TestTwoAdopters(t *testing.T) {
	r := newChildRig(t, "")
	r.killAfterCall = "slow "
	r.run(t, "start:steps", "event step:started c", "SWB_WF_EXECUTOR=1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	engines := make([]*Engine, 2)
	alive := make([]func(string) bool, 2)
	for i := range engines {
		x, err := OpenExecutor(ctx, r.db, "serve")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: r.fixture, Args: []string{"-call-log", r.log}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
		e, err := New(ctx, &EngineOptions{Database: r.db, Host: h, Workflows: durableWorkflows(), Executor: x})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		engines[i], alive[i] = e, x.Alive
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	adopted := make([][]string, 2)
	for i, e := range engines {
		wg.Go(func() {
			<-start
			var err error
			if adopted[i], err = e.Adopt(ctx, alive[i]); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if !slices.Contains(append(adopted[0], adopted[1]...), "r1") {
		t.Fatalf("adopted %v, want r1 by one at least", adopted)
	}
	st := waitFor(t, engines[0], "r1", func(st *RunStatus) bool { return st.State == RunInterrupted || st.State.Ended() })
	if st.State != RunInterrupted || st.Interrupted.Step != "c" || st.Interrupted.Attempt != 1 {
		t.Fatalf("the adopted run: %s %+v, want interrupted at c's attempt 1", st.State, st.Interrupted)
	}
	if err := engines[1].Resolve(ctx, "r1", "c", ResolveRetry); err != nil {
		t.Fatal(err)
	}
	if st, err := engines[0].Wait(ctx, "r1"); err != nil || st.State != RunCompleted {
		t.Fatalf("the run: %+v, %v", st, err)
	}
	want := map[string]int{`echo {"text":"a"}`: 1, `echo {"text":"b a"}`: 1, `slow {"ms":1500}`: 2, `echo {"text":"d slept 1500 ms"}`: 1}
	if calls := r.calls(t); !maps.Equal(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
	evs, err := engines[0].Events(ctx, "r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := map[EventType]int{}
	for _, ev := range evs {
		n[ev.Type]++
	}
	if n[EventStepInterrupted] != 1 || n[EventStepResolved] != 1 || n[EventRunCompleted] != 1 {
		t.Errorf("events by type %v, want one interrupted, one resolved, one run:completed", n)
	}
}
