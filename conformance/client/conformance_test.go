package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// The scenarios of the official conformance suite that the client must pass,
// per pinned suite version. docs/conformance.md has the full lists, the
// scenarios left out and why.
var required = []struct {
	version   string
	scenarios []string
}{
	{interop.ConformanceStable, []string{
		"initialize",
		"tools_call",
		"elicitation-sep1034-client-defaults",
		"sse-retry",
		// OAuth: every scenario the go-sdk's client passes, and client
		// credentials (secret and private_key_jwt), which it does not.
		"auth/metadata-default",
		"auth/metadata-var1",
		"auth/metadata-var2",
		"auth/metadata-var3",
		"auth/basic-cimd",
		"auth/scope-from-www-authenticate",
		"auth/scope-from-scopes-supported",
		"auth/scope-omitted-when-undefined",
		"auth/scope-step-up",
		"auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic",
		"auth/token-endpoint-auth-post",
		"auth/token-endpoint-auth-none",
		"auth/pre-registration",
		"auth/2025-03-26-oauth-endpoint-fallback",
		"auth/resource-mismatch",
		"auth/offline-access-scope",
		"auth/offline-access-not-supported",
		"auth/client-credentials-basic",
		"auth/client-credentials-jwt",
	}},
	{interop.ConformanceNext, []string{
		"request-metadata",
		"sep-2322-client-request-state",
		"http-standard-headers",
		"http-custom-headers",
		"http-invalid-tool-headers",
		"json-schema-ref-no-deref",
		"json-schema-2020-12-preservation",
		// OAuth scenarios new in 0.2 (those of 0.1.16 run there), and the
		// one 0.1.16 fails for both clients.
		"auth/2025-03-26-oauth-metadata-backcompat",
		"auth/authorization-server-migration",
		"auth/iss-supported",
		"auth/iss-not-advertised",
		"auth/iss-supported-missing",
		"auth/iss-wrong-issuer",
		"auth/iss-unexpected",
		"auth/iss-normalized",
		"auth/metadata-issuer-mismatch",
	}},
}

// timingSensitive scenarios run alone: sse-retry warns, and a warning fails
// a client scenario, when the client reconnects more than 200 ms after the
// server's 500 ms retry hint, which a busy 2-core machine can cause.
var timingSensitive = map[string]bool{"sse-retry": true}

const (
	// clientTimeout is the suite's own bound on one client run (its default).
	clientTimeout = 30 * time.Second
	// suiteTimeout bounds one suite run: the client's timeout plus Node's
	// start-up and the scenario server's, on a loaded CI machine.
	suiteTimeout = clientTimeout + 60*time.Second
)

// TestConformance runs the official conformance suite against the client,
// one subtest per scenario that must pass.
func TestConformance(t *testing.T) {
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/conformance/client")
	// The suite splits --command on spaces.
	if strings.ContainsAny(bin, " \t\n") {
		t.Fatalf("the client's path %q contains blanks, which the suite's --command cannot carry; set %s to a path without them", bin, interop.CacheEnv)
	}
	for _, r := range required {
		t.Run(r.version, func(t *testing.T) {
			for _, s := range r.scenarios {
				t.Run(s, func(t *testing.T) {
					if !timingSensitive[s] {
						t.Parallel()
					}
					res := runSuite(t, r.version, bin, s)
					if err := res.verdict(); err != nil {
						t.Errorf("conformance %s, scenario %s: %v\n%s", r.version, s, err, res.report())
					}
				})
			}
		})
	}
}

// TestConformanceVerdict checks that a client doing nothing fails: the suite
// itself exits 0 for it (no check failed, none was made), so the verdict
// must also require successful checks.
func TestConformanceVerdict(t *testing.T) {
	noop, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("need the true command: %v", err)
	}
	res := runSuite(t, interop.ConformanceStable, noop, "initialize")
	if err := res.verdict(); err == nil {
		t.Errorf("verdict for a client that does nothing = nil, want an error\n%s", res.report())
	} else {
		t.Logf("verdict for a client that does nothing: %v", err)
	}
}

// check is one entry of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO; 0.2.x adds SKIPPED
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// suiteResult is what one `conformance client --scenario` run left behind.
type suiteResult struct {
	err       error  // the suite's exit status
	output    []byte // its stdout and stderr
	checks    []check
	checksErr error // why checks.json could not be read
}

// runSuite runs one scenario of the suite at version against the client
// command and collects its exit status, output and checks.json.
func runSuite(t *testing.T, version, command, scenario string) suiteResult {
	t.Helper()
	argv := interop.Conformance(t, version)
	dir := t.TempDir()
	argv = append(argv, "client",
		"--command", command,
		"--scenario", scenario,
		"--timeout", strconv.FormatInt(clientTimeout.Milliseconds(), 10),
		"-o", dir)
	ctx, cancel := context.WithTimeout(t.Context(), suiteTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// Node ≥ 22 first on PATH, for the suite and anything it spawns; the
	// client gets this environment too.
	cmd.Env = interop.Env(t)
	// Output pipes held open by a stray grandchild must not hang the test.
	cmd.WaitDelay = 10 * time.Second
	var res suiteResult
	res.output, res.err = cmd.CombinedOutput()
	if ctx.Err() != nil {
		res.err = fmt.Errorf("%w (suite killed after %s)", res.err, suiteTimeout)
	}
	res.checks, res.checksErr = readChecks(dir)
	return res
}

// readChecks reads the one checks.json the suite wrote under dir (in a
// folder named for the scenario and the time).
func readChecks(dir string) ([]check, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "checks.json" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("found %d checks.json files under the results folder, want 1", len(files))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var checks []check
	if err := json.Unmarshal(data, &checks); err != nil {
		return nil, fmt.Errorf("%s: %w", files[0], err)
	}
	return checks, nil
}

// verdict applies the suite's rule for a client scenario (a FAILURE or a
// WARNING check, a client that timed out or exited non-zero fails it, and
// then the suite exits non-zero) and adds one of our own: at least one
// check succeeded, so that a client that never talked to the scenario's
// server does not pass.
func (r suiteResult) verdict() error {
	var errs []error
	if r.err != nil {
		errs = append(errs, fmt.Errorf("suite exited with %v", r.err))
	}
	if r.checksErr != nil {
		return errors.Join(append(errs, fmt.Errorf("no checks: %w", r.checksErr))...)
	}
	n := map[string]int{}
	for _, c := range r.checks {
		n[c.Status]++
	}
	if n["FAILURE"] > 0 || n["WARNING"] > 0 {
		errs = append(errs, fmt.Errorf("%d checks failed, %d warned", n["FAILURE"], n["WARNING"]))
	}
	if n["SUCCESS"] == 0 {
		errs = append(errs, fmt.Errorf("no check succeeded (of %d)", len(r.checks)))
	}
	return errors.Join(errs...)
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// report is the suite's output with the failed and warned checks first.
func (r suiteResult) report() string {
	var b strings.Builder
	for _, c := range r.checks {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			msg := c.ErrorMessage
			if msg == "" {
				msg = c.Description
			}
			fmt.Fprintf(&b, "%s %s: %s\n", c.Status, c.ID, msg)
		}
	}
	b.WriteString("suite output:\n")
	b.Write(ansi.ReplaceAll(r.output, nil))
	return b.String()
}
