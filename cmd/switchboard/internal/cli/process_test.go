//go:build unix

package cli_test

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/version"
)

// The tests here run the real switchboard binary (cmd/switchboard), for
// what only it has: its signal handling and its build information.

// binaryEnv is an environment for the binary that reads no user config.
func binaryEnv(t *testing.T) []string {
	dir := t.TempDir()
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "SWITCHBOARD_SECRETS_BACKEND=env"}
}

func fixtureConfig(t *testing.T) string {
	t.Helper()
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	cfg := filepath.Join(t.TempDir(), "sb.toml")
	write(t, cfg, "[[mcp_servers]]\nid = \"fx\"\ncommand = "+quote(fixture)+"\n")
	return cfg
}

// TestInterrupt: Ctrl-C (SIGINT) during a call exits 130 and says so once
// — not "cancelled: context canceled" after a first message, and not
// exit 1 — and with --json the error object says "interrupted".
func TestInterrupt(t *testing.T) {
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	cfg := fixtureConfig(t)
	for _, asJSON := range []bool{false, true} {
		args := []string{"-v", "--config", cfg, "call", "mcp_fx_slow", "--arg", "ms=600000"}
		if asJSON {
			args = append(args, "--json")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = binaryEnv(t)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The call is in flight once the server says it started (logged
		// at -v); then Ctrl-C.
		var lines []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.Contains(sc.Text(), "slow: started") {
				break
			}
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("--json %v: exit %v, want status 130; stderr:\n%s", asJSON, err, strings.Join(lines, "\n"))
		}
		// The CLI's own messages (the log lines at -v are key=value).
		var said []string
		for _, l := range lines {
			if strings.HasPrefix(l, "switchboard: ") {
				said = append(said, l)
			}
		}
		if len(said) != 1 || said[0] != "switchboard: interrupted" {
			t.Errorf("--json %v: the CLI said %q, want just \"switchboard: interrupted\"", asJSON, said)
		}
		wantOut := ""
		if asJSON {
			wantOut = `{"error":{"code":"interrupted","message":"interrupted"}}` + "\n"
		}
		if stdout.String() != wantOut {
			t.Errorf("--json %v: stdout %q, want %q", asJSON, stdout.String(), wantOut)
		}
	}
}

// TestVersion: `switchboard version` and --version print the module's
// version and commit from the binary's build information, --json their
// fields, and the gateway (serve --stdio) tells its clients the same
// version; it said 0.1.0-dev, whatever the build.
func TestVersion(t *testing.T) {
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := version.FromBuildInfo(bi)
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = binaryEnv(t)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("switchboard %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	line := "switchboard " + want.String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if got := run("", args...); got != line {
			t.Errorf("switchboard %s = %q, want %q", args[0], got, line)
		}
	}
	var j struct {
		Version, Module, Commit, Go string
		Modified                    bool
	}
	if err := json.Unmarshal([]byte(run("", "version", "--json")), &j); err != nil {
		t.Fatal(err)
	}
	if j.Version != want.Short() || j.Module != want.Version || j.Commit != want.Commit || j.Modified != want.Modified || j.Go != want.Go {
		t.Errorf("version --json = %+v, want %+v (version %q)", j, want, want.Short())
	}

	// The gateway's serverInfo.
	cfg := fixtureConfig(t)
	cmd := exec.Command(bin, "--config", cfg, "serve", "--stdio")
	cmd.Env = binaryEnv(t)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`+"\n")
	done := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		done <- l
	}()
	var resp struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	select {
	case l := <-done:
		if err := json.Unmarshal([]byte(l), &resp); err != nil {
			t.Fatalf("initialize answer %q: %v", l, err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("serve --stdio did not answer initialize within 60s")
	}
	if resp.Result.ServerInfo.Version != want.Short() {
		t.Errorf("the gateway's serverInfo.version = %q, want %q", resp.Result.ServerInfo.Version, want.Short())
	}
}
