package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the files a script compares with cmp (help.txtar's golden) to the actual output")

// TestMain makes the test binary double as the switchboard command: the
// scripts run it as `switchboard ...` (a real process, so exit codes, stdio
// and the child processes it starts are the real ones).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"switchboard": func() {
			// As cmd/switchboard: SIGINT and SIGTERM end what runs
			// gracefully (kill -INT in a script).
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
	})
}

// TestScripts runs testdata/script/*.txtar. Besides the standard commands,
// a script has:
//
//	envsubst FILE...              replace $NAME and ${NAME} in FILE in place
//	exitcode N PROG [ARGS...]     run PROG, expecting exit status N
//	fakellm [TURN...]             start a fake OpenAI-compatible LLM provider
//	                              (llmtest) answering each model call with the
//	                              next TURN: a text, or call:TOOL:ARGS (a tool
//	                              call with JSON arguments); sets FAKELLM_URL
//	                              and FAKELLM_KEY
//	fakeregistry                  start a fake MCP registry (registrytest) serving
//	                              registry/testdata/registry.json; sets REGISTRY_URL
//	publish FILE                  publish FILE (a server.json) to that registry as
//	                              its server's latest version
//	fakellm-tools                 print, for each request the last fakellm got,
//	                              "N: TOOL TOOL …", the tools it offered the model
//	waitfor FILE REGEXP           wait (bounded) until a line of FILE matches REGEXP
//	                              (a background command's output, written by sh -c '… 2>FILE')
//
// and the variables NODE_DIR (the folder of the Node.js the interop
// peers run on), SCRIPT_BIN (the folder of the switchboard command), FIXTURE (the testserver binary), EVERYTHING_NODE and
// EVERYTHING_JS (server-everything's command line), TS_NODE,
// TS_RESOURCES_ONLY and TS_SDK (interop.TSResourcesOnly's), EXAMPLES (the
// repository's examples folder, to copy from). HOME,
// XDG_CONFIG_HOME and XDG_STATE_HOME point inside the script's work folder
// so that no real user config is read; XDG_RUNTIME_DIR (where serve's local
// socket goes) is a short folder of the script's own.
func TestScripts(t *testing.T) {
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	everything := interop.Everything(t)
	tsResourcesOnly := interop.TSResourcesOnly(t)
	examples, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                filepath.Join("testdata", "script"),
		RequireUniqueNames: true,
		UpdateScripts:      *update,
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			xdg := filepath.Join(e.WorkDir, ".xdg")
			for _, d := range []string{home, xdg} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			e.Setenv("HOME", home)
			e.Setenv("XDG_CONFIG_HOME", xdg)
			e.Setenv("XDG_STATE_HOME", filepath.Join(e.WorkDir, ".state"))
			// Not in WorkDir: a socket's path is bounded to ~100 bytes.
			rt, err := os.MkdirTemp("", "sbrt")
			if err != nil {
				return err
			}
			e.Defer(func() { os.RemoveAll(rt) })
			e.Setenv("XDG_RUNTIME_DIR", rt)
			e.Setenv("FIXTURE", fixture)
			// For configs that name it as a bare command found on PATH
			// (files with ${…} of their own cannot go through envsubst).
			e.Setenv("FIXTURE_DIR", filepath.Dir(fixture))
			e.Setenv("EVERYTHING_NODE", everything[0])
			e.Setenv("EVERYTHING_JS", everything[1])
			e.Setenv("TS_NODE", tsResourcesOnly[0])
			e.Setenv("TS_RESOURCES_ONLY", tsResourcesOnly[1])
			e.Setenv("TS_SDK", tsResourcesOnly[2])
			e.Setenv("EXAMPLES", examples)
			e.Values[fakeKey{}] = &fakeHolder{}
			e.Values[registryKey{}] = &registryHolder{}
			e.Setenv("NODE_DIR", filepath.Dir(everything[0]))
			// The folder testscript puts the switchboard command in, for a
			// script that narrows PATH.
			e.Setenv("SCRIPT_BIN", filepath.SplitList(e.Getenv("PATH"))[0])
			// The CA bundle Node.js trusts besides its own, where this
			// machine's npm registry access needs one.
			e.Setenv("NODE_EXTRA_CA_CERTS", os.Getenv("NODE_EXTRA_CA_CERTS"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"addr":          cmdAddr,
			"envsubst":      cmdEnvsubst,
			"http":          cmdHTTP,
			"setmatch":      cmdSetmatch,
			"exitcode":      cmdExitcode,
			"fakellm":       cmdFakeLLM,
			"fakellm-tools": cmdFakeLLMTools,
			"fakeregistry":  cmdFakeRegistry,
			"publish":       cmdPublish,
			"waitfor":       cmdWaitfor,
		},
	})
}

// cmdEnvsubst replaces $NAME and ${NAME} in files in place: testscript does
// not expand variables in the files of the archive. An unset variable fails
// the script, so that a typo does not become an empty path.
func cmdEnvsubst(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: envsubst FILE...")
	}
	for _, f := range args {
		var missing []string
		out := os.Expand(ts.ReadFile(f), func(k string) string {
			v := ts.Getenv(k)
			if v == "" {
				missing = append(missing, k)
			}
			return v
		})
		if len(missing) > 0 {
			ts.Fatalf("envsubst %s: unset: %s", f, strings.Join(missing, ", "))
		}
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(out), 0o666))
	}
}

// cmdExitcode runs a command and checks its exit status exactly, since
// `! exec` cannot tell a usage error (2) from a failure (1). Its stdout and
// stderr are kept for the stdout and stderr commands.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdFakeLLM starts a fake Chat Completions server for the rest of the
// script, scripted with one answer per argument.
func cmdFakeLLM(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: fakellm [TEXT...]")
	}
	f := llmtest.NewOpenAI(nil)
	ts.Defer(f.Close)
	for i, a := range args {
		if rest, ok := strings.CutPrefix(a, "call:"); ok {
			tool, callArgs, _ := strings.Cut(rest, ":")
			f.Script(llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", i+1), Name: tool, Arguments: json.RawMessage(callArgs)}}})
			continue
		}
		f.Script(llmtest.Turn{Text: a})
	}
	ts.Setenv("FAKELLM_URL", f.URL)
	ts.Setenv("FAKELLM_KEY", f.APIKey)
	ts.Value(fakeKey{}).(*fakeHolder).f = f
}

// fakeKey keys a script's fakeHolder in its testscript values.
type fakeKey struct{}

// fakeHolder holds a script's last fakellm, for fakellm-tools.
type fakeHolder struct{ f *llmtest.Fake }

// cmdFakeLLMTools prints the tools each request to the script's fakellm
// offered the model, as the OpenAI wire format carries them.
func cmdFakeLLMTools(ts *testscript.TestScript, neg bool, args []string) {
	f := ts.Value(fakeKey{}).(*fakeHolder).f
	if neg || len(args) > 0 || f == nil {
		ts.Fatalf("usage: fakellm-tools (after fakellm)")
	}
	for i, r := range f.Requests() {
		var body struct {
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		ts.Check(r.Decode(&body))
		line := fmt.Sprintf("%d:", i+1)
		for _, t := range body.Tools {
			line += " " + t.Function.Name
		}
		fmt.Fprintln(ts.Stdout(), line)
	}
}

// cmdWaitfor waits until a line of a file matches a regular expression:
// for the output of a background command (serve), which testscript holds
// back until it exits. It polls, bounded: a file has no event to wait on.
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	wait.Within(ts, waitforTimeout, fmt.Sprintf("a line of %s to match %q", args[0], args[1]), func() (string, bool) {
		b, _ := os.ReadFile(ts.MkAbs(args[0]))
		return string(b), re.Match(b)
	})
}

// waitforTimeout bounds waitfor: a serve's servers start within it.
const waitforTimeout = time.Minute

// cmdAddr sets $NAME to the host:port a serve's log says it serves MCP at.
func cmdAddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: addr LOGFILE NAME")
	}
	m := regexp.MustCompile(`serving MCP at http://([^/\s]+)/mcp`).FindSubmatch([]byte(ts.ReadFile(args[0])))
	if m == nil {
		ts.Fatalf("addr: %s names no address", args[0])
	}
	ts.Setenv(args[1], string(m[1]))
}

// cmdSetmatch sets NAME to the first submatch of REGEXP in FILE (cp
// stdout FILE keeps a command's output), failing when there is none.
func cmdSetmatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: setmatch FILE REGEXP NAME")
	}
	m := regexp.MustCompile(args[1]).FindStringSubmatch(ts.ReadFile(args[0]))
	if len(m) < 2 {
		ts.Fatalf("setmatch: %s has no match of %s", args[0], args[1])
	}
	ts.Setenv(args[2], m[1])
}

// cmdHTTP sends a request to the management API as a client of it does
// (the CSRF header; a body from FILE as application/json) and writes the
// status on a line, then the body, to stdout. Each -H 'Name: value' before
// the method adds a header (a raw MCP request's).
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	var hdr [][2]string
	for len(args) >= 2 && args[0] == "-H" {
		k, v, ok := strings.Cut(args[1], ":")
		if !ok {
			ts.Fatalf("http: -H %q: want 'Name: value'", args[1])
		}
		hdr = append(hdr, [2]string{k, strings.TrimSpace(v)})
		args = args[2:]
	}
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: http [-H 'Name: value']... METHOD URL [BODYFILE]")
	}
	var body io.Reader
	if len(args) == 3 {
		body = strings.NewReader(ts.ReadFile(args[2]))
	}
	req, err := http.NewRequest(args[0], args[1], body)
	ts.Check(err)
	req.Header.Set("Switchboard-CSRF", "1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range hdr {
		req.Header.Set(h[0], h[1])
	}
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "%d\n%s", resp.StatusCode, b)
}
