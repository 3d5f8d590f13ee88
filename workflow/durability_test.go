package workflow

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
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
// (1.5 s), so that the first process is killed while it runs.
func durableWorkflows() map[string]*Workflow {
	return registry(
		&Workflow{ID: "steps", Steps: []*Step{
			echo("a", "a"),
			echo("b", "b {{.steps.a.result}}", "a"),
			{ID: "c", Kind: StepTool, Tool: "mcp_fx_slow", Arguments: val(map[string]any{"ms": 1500}), Needs: []string{"b"}},
			echo("d", "d", "c"),
		}, Outputs: []Output{{Name: "d", Value: tpl("{{.steps.d.result}}")}}},
		&Workflow{ID: "gated", Steps: []*Step{
			echo("a", "a"),
			{ID: "ok", Kind: StepGate, Needs: []string{"a"}, Gate: &Gate{Message: tpl("go on?")}},
			echo("b", "b", "ok"),
		}, Outputs: []Output{{Name: "b", Value: tpl("{{.steps.b.result}}")}}},
	)
}

// child runs an engine: mode "start:WORKFLOW" starts run "r1"; "resume"
// and "observe" let recovery resume it. Either way it prints each event as a line
// "event TYPE STEP" and, when the run waits on a gate in "resume" mode,
// accepts it; it exits when the run ends.
func child(mode string) error {
	ctx := context.Background()
	h, err := host.New([]config.Server{{ID: "fx", Transport: config.TransportStdio, Command: os.Getenv("SWB_WF_FIXTURE"),
		Args: []string{"-call-log", os.Getenv("SWB_WF_LOG")}}}, nil)
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
		opts.ExecutorID = x.ID
		fmt.Printf("executor %s\n", x.ID)
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
	return e.Follow(ctx, "r1", 0, func(ev Event) error {
		fmt.Printf("event %s %s\n", ev.Type, ev.Step)
		if ev.Type == EventGateWaiting && mode == "resume" {
			// The recovered gate may not be waiting yet: Answer sends a
			// durable message it receives when it is.
			if err := e.Answer(ctx, "r1", ev.Step, GateAnswer{Action: "accept"}); err != nil {
				return err
			}
		}
		if ev.Type == EventRunFailed {
			fmt.Printf("error %s\n", ev.Error)
		}
		return nil
	})
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(c.log)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, prefix) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fixture never got a call %q", prefix)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
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

func TestKillDuringStep(t *testing.T) { testKillDuringStep(t, "") }

func testKillDuringStep(t *testing.T, database string) {
	c := newChildRig(t, database)
	c.killAfterCall = "slow "
	c.run(t, "start:steps", "event step:started c")
	lines := c.run(t, "resume", "")
	if last := lines[len(lines)-1]; last != "event run:completed " {
		t.Fatalf("resumed run ended with %q; lines %q", last, lines)
	}
	calls := c.calls(t)
	want := map[string]int{`echo {"text":"a"}`: 1, `echo {"text":"b a"}`: 1, `slow {"ms":1500}`: 2, `echo {"text":"d"}`: 1}
	for k, n := range want {
		if calls[k] != n {
			t.Errorf("%s called %d times, want %d (all calls: %v)", k, calls[k], n, calls)
		}
	}
	// The resumed process's events continue the first one's.
	seen := map[string]int{}
	for _, l := range lines {
		seen[l]++
	}
	for l, n := range seen {
		if n > 1 {
			t.Errorf("event %q delivered %d times", l, n)
		}
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
// (its runs are not taken), gone after, adopts the run and finishes it
// with no completed step run again (only the interrupted one).
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
	deadline := time.Now().Add(30 * time.Second)
	for b.Alive(idA) {
		if time.Now().After(deadline) {
			t.Fatalf("executor %s still alive 30 s after its process was killed", idA)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ids, err := e.Adopt(ctx, b.Alive)
	if err != nil || len(ids) != 1 || ids[0] != "r1" {
		t.Fatalf("Adopt after the kill = %v, %v; want [r1]", ids, err)
	}
	var last Event
	if err := e.Follow(ctx, "r1", 0, func(ev Event) error { last = ev; return nil }); err != nil {
		t.Fatal(err)
	}
	if last.Type != EventRunCompleted {
		t.Fatalf("the adopted run ended with %+v", last)
	}
	calls := c.calls(t)
	want := map[string]int{`echo {"text":"a"}`: 1, `echo {"text":"b a"}`: 1, `slow {"ms":1500}`: 2, `echo {"text":"d"}`: 1}
	for k, n := range want {
		if calls[k] != n {
			t.Errorf("%s called %d times, want %d (all calls: %v)", k, calls[k], n, calls)
		}
	}
}
