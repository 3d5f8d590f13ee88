package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// everythingServerPkg is the go-sdk's conformance fixture: the server the
// official suite's scenarios are written against (test_simple_text,
// test_sampling, test://…).
const everythingServerPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// conformanceRuns are the suite runs the gateway must not lose anything in.
// minDirect pins how many scenarios pass against the everything-server
// directly (docs/conformance.md): fewer means the harness is broken, and a
// superset check against a broken baseline would prove nothing.
var conformanceRuns = []struct {
	name      string
	version   string
	spec      string // --spec-version; "" for every scenario of the suite
	minDirect int
	// stateless: the direct baseline is the everything-server serving
	// Streamable HTTP statelessly, as 2026-07-28 is served.
	stateless bool
	// named: the suite also runs through a named endpoint (issue 26),
	// after the run through /mcp. Only the run of every scenario the
	// newer suite knows, both generations: the others are subsets of it,
	// and each run costs 4 to 10 s of the suite's budget.
	named bool
}{
	// 31 of 32: server-sse-polling only warns (the SDK sends no priming
	// event), and a scenario without a successful check does not pass.
	{"0.1.16", interop.ConformanceStable, "", 31, false, false},
	{"0.2.0-alpha.12/2025-11-25", interop.ConformanceNext, "2025-11-25", 33, false, false},
	// Every scenario 0.2.0-alpha.12 knows, 2026-07-28 and extensions
	// included; the stateful everything-server fails many of them directly.
	{"0.2.0-alpha.12/all", interop.ConformanceNext, "", 41, false, true},
	// 2026-07-28 alone, against the everything-server served as that
	// generation is: statelessly.
	{"0.2.0-alpha.12/2026-07-28", interop.ConformanceNext, "2026-07-28", 40, true, false},
}

const (
	// suiteRunTimeout bounds one run of a whole suite (≈ 2–4 s here; the
	// suite's own per-scenario timeout is 30 s, and a hung scenario must
	// not eat the test binary's whole budget).
	suiteRunTimeout = 5 * time.Minute
	// outDirEnv keeps the suite's results (checks.json per scenario, the
	// suite's output) in this folder instead of a temporary one.
	outDirEnv = "SWITCHBOARD_CONFORMANCE_OUT"
)

// TestGatewayConformance runs the official conformance suite's server
// scenarios against the go-sdk everything-server twice: served over
// Streamable HTTP by itself, and through the gateway (stdio upstream, tool
// names unprefixed), at its default endpoint (/mcp) and at a named one
// (/e/conformance/mcp, issue 26). Every scenario that passes directly must
// pass through both: the gateway loses nothing, nor does a named endpoint.
func TestGatewayConformance(t *testing.T) {
	bin := interop.Build(t, everythingServerPkg)
	direct := startConformanceServer(t, bin, false)
	directStateless := startConformanceServer(t, bin, true)
	gw, named := serveConformanceGateway(t, bin)

	for _, run := range conformanceRuns {
		t.Run(run.name, func(t *testing.T) {
			scenarios := listServerScenarios(t, run.version, run.spec)
			base := direct
			if run.stateless {
				base = directStateless
			}
			// The named endpoint's run follows the default one's: both
			// share one upstream (as endpoints do), and under 2025-11-25
			// an upstream's elicitation or sampling request during the
			// calls of two clients at once cannot say whose it is.
			var d, g, n suiteRun
			var wg sync.WaitGroup
			wg.Go(func() { d = runServerSuite(t, run.version, run.spec, base.url, "direct") })
			wg.Go(func() {
				g = runServerSuite(t, run.version, run.spec, gw, "gateway")
				if run.named {
					n = runServerSuite(t, run.version, run.spec, named, "named")
				}
			})
			wg.Wait()
			base.checkAlive(t)

			var table strings.Builder
			fmt.Fprintf(&table, "%-46s %-8s %-8s %-8s\n", "scenario", "direct", "gateway", map[bool]string{true: "named"}[run.named])
			var lost, lostNamed []string
			nd, ng, nn := 0, 0, 0
			for _, s := range scenarios {
				dv, gv, nv := d.verdict(s), g.verdict(s), n.verdict(s)
				if !run.named {
					nv.outcome = ""
				}
				fmt.Fprintf(&table, "%-46s %-8s %-8s %-8s\n", s, dv.outcome, gv.outcome, nv.outcome)
				if dv.outcome == pass {
					nd++
				}
				if gv.outcome == pass {
					ng++
				}
				if nv.outcome == pass {
					nn++
				}
				if dv.outcome == pass && gv.outcome != pass {
					lost = append(lost, s)
				}
				if run.named && dv.outcome == pass && nv.outcome != pass {
					lostNamed = append(lostNamed, s)
				}
			}
			fmt.Fprintf(&table, "passed: direct %d of %d, through the gateway %d of %d", nd, len(scenarios), ng, len(scenarios))
			if run.named {
				fmt.Fprintf(&table, ", through a named endpoint %d of %d", nn, len(scenarios))
			}
			table.WriteString("\n")
			t.Logf("conformance %s\n%s", run.name, table.String())
			if nd < run.minDirect {
				t.Errorf("only %d scenarios passed directly, want at least %d: the baseline is broken\n%s", nd, run.minDirect, d.output)
			}
			for _, s := range lost {
				t.Errorf("scenario %s passes directly but fails through the gateway: %s\n%s", s, g.verdict(s).why, g.report(s))
			}
			if len(lost) > 0 {
				t.Logf("suite output through the gateway:\n%s", g.output)
			}
			if run.named {
				checkTaskScenarios(t, scenarios, map[string]suiteRun{"the gateway": g, "a named endpoint": n})
			}
			for _, s := range lostNamed {
				t.Errorf("scenario %s passes directly but fails through a named endpoint: %s\n%s", s, n.verdict(s).why, n.report(s))
			}
			if len(lostNamed) > 0 {
				t.Logf("suite output through a named endpoint:\n%s", n.output)
			}
		})
	}
}

// conformanceServer is the everything-server serving Streamable HTTP itself.
type conformanceServer struct {
	url    string
	exited chan struct{} // closed when the process has been reaped
	out    *bytes.Buffer
}

// checkAlive fails the test if the server has exited: a results run against
// its port may then have reached another process that took it.
func (s *conformanceServer) checkAlive(t *testing.T) {
	t.Helper()
	select {
	case <-s.exited:
		t.Fatalf("the everything-server exited during the run; its results are not its own:\n%s", s.out)
	default:
	}
}

// conformanceStartTimeout bounds the everything-server's start: it is a Go
// binary and binds at once, but CI machines are busy.
const conformanceStartTimeout = 30 * time.Second

// startConformanceServer starts bin serving Streamable HTTP (stateful, or
// stateless as 2026-07-28 is served) on a free
// port of 127.0.0.1 (the suite's dns-rebinding scenario needs a loopback
// URL) and waits until it accepts connections. The server cannot bind port
// 0 and say which port it got, so a port is picked and, when another
// process takes it first (the server then exits at once), picked again.
func startConformanceServer(t *testing.T, bin string, stateless bool) *conformanceServer {
	t.Helper()
	var errs []error
	for range 5 {
		port, err := freeLoopbackPort()
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s, err := tryStartConformanceServer(t, bin, addr, stateless)
		if err == nil {
			return s
		}
		errs = append(errs, err)
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatalf("starting the everything-server: %v", errors.Join(errs...))
	return nil
}

func tryStartConformanceServer(t *testing.T, bin, addr string, stateless bool) (*conformanceServer, error) {
	cmd := exec.Command(bin, "-http="+addr, "-stateless="+strconv.FormatBool(stateless))
	s := &conformanceServer{url: "http://" + addr + "/mcp", exited: make(chan struct{}), out: new(bytes.Buffer)}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	listening := make(chan struct{})
	var mu sync.Mutex
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(pr)
		var once sync.Once
		for sc.Scan() {
			mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "listening at "+addr) {
				once.Do(func() { close(listening) })
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		cmd.Wait()
		pw.Close()
		<-readDone
		close(s.exited)
	}()
	stop := func() {
		cmd.Process.Kill()
		<-s.exited
	}
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return s.out.String()
	}
	deadline := time.NewTimer(conformanceStartTimeout)
	defer deadline.Stop()
	select {
	case <-listening:
	case <-s.exited:
		return nil, fmt.Errorf("%s exited before listening: %s", bin, output())
	case <-deadline.C:
		stop()
		return nil, fmt.Errorf("%s did not say it listens within %s: %s", bin, conformanceStartTimeout, output())
	}
	// It logs the line before it binds: dial until the port answers, or
	// the server exits because the port was taken.
	if err := interop.WaitAccepting(addr, s.exited, deadline.C); err != nil {
		stop()
		return nil, fmt.Errorf("%s: %v: %s", bin, err, output())
	}
	t.Cleanup(stop)
	return s, nil
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serveConformanceGateway starts a gateway over bin (stdio) with tool and
// prompt names left as the server has them, serves it on 127.0.0.1 and
// returns its Streamable HTTP endpoints: the default one, and a named one
// choosing every tool by glob. Closing it is checked for leaked
// goroutines (see serve).
//
// Beside it, the gateway serves the tools of the tasks scenarios (the
// testserver's -tasks-fixtures, plain tools) with the task modes those
// scenarios expect, and keeps tasks in memory: the tasks are the
// gateway's own (gateway/tasks.go).
func serveConformanceGateway(t *testing.T, bin string) (def, named string) {
	t.Helper()
	tasks := fixture(t, "tasks", "-tasks-fixtures")
	tasks.ToolsAllowlist = taskFixtureTools
	tasks.ToolTasks = map[string]string{"greet": config.TaskNever, "confirm_delete": config.TaskAlways, "multi_input": config.TaskAlways,
		"failing_job": config.TaskRequired, "test_tool_with_task": config.TaskRequired}
	_, base := serveWith(t,
		[]config.Server{{ID: "everything", Transport: config.TransportStdio, Command: bin}, tasks},
		&host.Options{ToolNameFormat: "{tool}"},
		&gateway.Options{Endpoints: []gateway.Endpoint{{}, {Name: "conformance", Path: "/e/conformance/mcp", Tools: []string{"*"}}},
			Tasks: newMemTasks(), TaskWait: 300 * time.Millisecond},
		&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}})
	return base + "/mcp", base + "/e/conformance/mcp"
}

// taskFixtureTools are the tools the tasks scenarios call.
var taskFixtureTools = []string{"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"}

// checkTaskScenarios: through the gateway and a named endpoint, every
// tasks-* scenario passes but tasks-status-notifications, which can only
// skip (its one check is SKIPPED whatever the server does).
func checkTaskScenarios(t *testing.T, scenarios []string, runs map[string]suiteRun) {
	t.Helper()
	n := 0
	for _, s := range scenarios {
		if !strings.HasPrefix(s, "tasks-") {
			continue
		}
		n++
		want := pass
		if s == "tasks-status-notifications" {
			want = skip
		}
		for label, r := range runs {
			if v := r.verdict(s); v.outcome != want {
				t.Errorf("scenario %s through %s: %s (%s), want %s\n%s", s, label, v.outcome, v.why, want, r.report(s))
			}
		}
	}
	if n != 10 {
		t.Errorf("the suite lists %d tasks-* scenarios, want 10", n)
	}
}

// listServerScenarios asks the suite for its server scenarios (`list
// --server`, the pending ones included).
func listServerScenarios(t *testing.T, version, spec string) []string {
	t.Helper()
	argv := append(interop.Conformance(t, version), "list", "--server")
	if spec != "" {
		argv = append(argv, "--spec-version", spec)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = interop.Env(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance %s list --server: %v\n%s", version, err, out)
	}
	var names []string
	for line := range strings.Lines(string(out)) {
		if m := listedScenario.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance %s list --server: no scenarios in\n%s", version, out)
	}
	return names
}

var listedScenario = regexp.MustCompile(`^\s+- (\S+)`)

// suiteRun is what one run of a whole server suite left behind.
type suiteRun struct {
	err    error
	output []byte
	checks map[string][]suiteCheck // by scenario
	errs   map[string]error        // scenarios whose checks.json is unreadable
}

// suiteCheck is one entry of a scenario's checks.json.
type suiteCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO; 0.2.x adds SKIPPED
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// resultDir is the suite's folder for one scenario's results:
// server-<scenario>-<ISO time with ':' and '.' as '-'>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$`)

// runServerSuite runs every server scenario of the suite (--suite all, one
// suite process) against url and reads each scenario's checks.json.
func runServerSuite(t *testing.T, version, spec, url, label string) suiteRun {
	t.Helper()
	dir := t.TempDir()
	if keep := os.Getenv(outDirEnv); keep != "" {
		dir = filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_"), label)
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argv := append(interop.Conformance(t, version), "server", "--url", url, "--suite", "all", "-o", dir)
	if spec != "" {
		argv = append(argv, "--spec-version", spec)
	}
	ctx, cancel := context.WithTimeout(t.Context(), suiteRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = interop.Env(t)
	cmd.WaitDelay = 10 * time.Second
	var r suiteRun
	r.output, r.err = cmd.CombinedOutput()
	r.output = ansi.ReplaceAll(r.output, nil)
	if ctx.Err() != nil {
		t.Fatalf("conformance %s against %s: killed after %s\n%s", version, label, suiteRunTimeout, r.output)
	}
	if keep := os.Getenv(outDirEnv); keep != "" {
		os.WriteFile(filepath.Join(dir, "output.txt"), r.output, 0o644)
	}
	r.checks, r.errs = map[string][]suiteCheck{}, map[string]error{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err == nil {
			var cs []suiteCheck
			if err = json.Unmarshal(data, &cs); err == nil {
				r.checks[m[1]] = cs
				continue
			}
		}
		r.errs[m[1]] = err
	}
	return r
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

type outcome string

const (
	pass outcome = "PASS"
	fail outcome = "FAIL"
	skip outcome = "SKIP" // not applicable: only INFO or SKIPPED checks
)

type verdict struct {
	outcome outcome
	why     string
}

// verdict applies the interop kit's rule for a server scenario: it passes
// with at least one successful check and no failed one (warnings allowed);
// with no successful, failed or warning check it is not applicable.
func (r suiteRun) verdict(scenario string) verdict {
	if err, ok := r.errs[scenario]; ok {
		return verdict{fail, fmt.Sprintf("unreadable checks.json: %v", err)}
	}
	cs, ok := r.checks[scenario]
	if !ok {
		return verdict{fail, "the suite left no results for it"}
	}
	n := map[string]int{}
	for _, c := range cs {
		n[c.Status]++
	}
	switch {
	case n["FAILURE"] > 0:
		return verdict{fail, fmt.Sprintf("%d checks failed", n["FAILURE"])}
	case n["SUCCESS"] > 0:
		return verdict{pass, ""}
	case n["WARNING"] > 0:
		return verdict{fail, fmt.Sprintf("no check succeeded, %d warned", n["WARNING"])}
	}
	return verdict{skip, ""}
}

// report lists a scenario's failed and warned checks.
func (r suiteRun) report(scenario string) string {
	var b strings.Builder
	for _, c := range r.checks[scenario] {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			msg := c.ErrorMessage
			if msg == "" {
				msg = c.Description
			}
			fmt.Fprintf(&b, "\t%s %s: %s\n", c.Status, c.ID, msg)
		}
	}
	return b.String()
}
