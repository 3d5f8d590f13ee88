package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestCanaryAtRest: a workflow joins two halves of a secret (neither is
// one alone) into its outputs, a nested workflow's inputs, a gate's
// message; `switchboard runs` and `runs show` in a later process, with no
// serve and no server started, print it redacted; and no table of the
// state database, nor the file's bytes, holds it in any spelling, base64
// of its JSON (as DBOS stores values) included (issue 23 §4).
func TestCanaryAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	canary := interop.NewCanary(t)
	a, b := canary[:12], canary[12:]
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("SWITCHBOARD_CONFIG", "")
	t.Setenv("SWITCHBOARD_SECRETS_BACKEND", "file")
	t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)
	db := filepath.Join(dir, "state.db")
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("switchboard.toml", fmt.Sprintf(`
[state]
database = %s

[[mcp_servers]]
id = "sec"
command = %s
env = { TOKEN = "{{secrets.canary}}" }
`, strconv.Quote(db), strconv.Quote(fixture)))
	write("workflows/halves.yaml", `id: halves
description: Joins two halves
inputs:
  a: {type: string, required: true}
  b: {type: string, required: true}
outputs:
  joined: "{{ .inputs.a }}{{ .inputs.b }}"
  said: "{{ .steps.say.result }}"
  child: "{{ .steps.nested.result.back }}"
steps:
  - id: say
    tool: mcp_sec_echo
    arguments: {text: "{{ .inputs.a }}{{ .inputs.b }}"}
  - id: nested
    workflow: inner
    with: {x: "{{ .inputs.a }}{{ .inputs.b }}"}
  - id: ask
    gate: {message: "Use {{ .inputs.a }}{{ .inputs.b }}?", timeout: 10ms, on_timeout: continue}
`)
	write("workflows/inner.yaml", `id: inner
description: Gives its input back
inputs:
  x: {type: string, required: true}
outputs:
  back: "{{ .inputs.x }}"
steps:
  - id: hold
    tool: mcp_sec_echo
    arguments: {text: held}
`)
	type run struct {
		args           string
		code           int
		stdout, stderr string
	}
	do := func(args ...string) run {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out, errb bytes.Buffer
		code := cli.Main(ctx, args, strings.NewReader(""), &out, &errb)
		r := run{strings.Join(args, " "), code, out.String(), errb.String()}
		t.Logf("switchboard %s → exit %d\n--- stdout\n%s--- stderr\n%s", r.args, r.code, r.stdout, r.stderr)
		return r
	}
	runs := []run{do("workflow", "run", "halves", "--arg", "a="+a, "--arg", "b="+b, "--run-id", "r1")}
	if runs[0].code != 0 {
		t.Fatalf("the run failed")
	}
	// Later processes, no serve: nothing started that would make the
	// secret known to them but the configuration.
	runs = append(runs, do("runs", "show", "r1"), do("runs", "show", "r1", "--json"), do("runs", "--json"))
	for _, r := range runs {
		for stream, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			if leaks := interop.LeaksAtRest(text, canary); len(leaks) > 0 {
				t.Errorf("switchboard %s: %s holds %s", r.args, stream, leaks[0])
			}
		}
	}
	if show := runs[1].stdout; !strings.Contains(show, `"joined":"[REDACTED]"`) || !strings.Contains(show, `"child":"[REDACTED]"`) {
		t.Errorf("runs show prints no redacted outputs:\n%s", show)
	}

	// Every table of the state database, and its file.
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	tables, err := interop.TableRows(context.Background(), sdb, false)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for table, rows := range tables {
		for _, row := range rows {
			n++
			if leaks := interop.LeaksAtRest(row, canary); len(leaks) > 0 {
				t.Errorf("table %s holds %s", table, leaks[0])
			}
		}
	}
	if tables["workflow_status"] == nil || tables["switchboard_run_events"] == nil {
		t.Errorf("%d rows in tables %v: the workflow's are missing", n, len(tables))
	}
	for _, f := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if leaks := interop.LeaksAtRest(string(b), canary); len(leaks) > 0 {
			t.Errorf("%s holds %s", f, leaks[0])
		}
	}
}
