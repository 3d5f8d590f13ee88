//go:build linux || darwin || freebsd || netbsd || openbsd

package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// terminal is the switchboard binary run on a pseudo-terminal: stdin,
// stdout and stderr, as a user's shell would.
type terminal struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd

	mu     sync.Mutex
	out    bytes.Buffer // everything written to the terminal, echoed input included
	seen   int          // how much of out expect has consumed
	change chan struct{}
	done   chan struct{}
}

func startTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	return startTerminalEnv(t, nil, args...)
}

// startTerminalEnv is startTerminal with variables set on top of its
// environment.
func startTerminalEnv(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	dir := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "SWITCHBOARD_SECRETS_BACKEND=env", "TERM=dumb"}
	cmd.Env = append(cmd.Env, env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatalf("starting on a pseudo-terminal: %v", err)
	}
	tm := &terminal{t: t, ptmx: ptmx, cmd: cmd, change: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			select {
			case tm.change <- struct{}{}:
			default:
			}
			if err != nil {
				return // EIO once the child has exited and closed its side
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
		<-tm.done
	})
	return tm
}

// expect waits until the terminal shows want after what was expected
// before, and consumes up to it.
func (tm *terminal) expect(want string) {
	tm.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		tm.mu.Lock()
		rest := tm.out.String()[tm.seen:]
		i := strings.Index(rest, want)
		if i >= 0 {
			tm.seen += i + len(want)
		}
		tm.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-tm.change:
		case <-tm.done:
			tm.mu.Lock()
			rest = tm.out.String()[tm.seen:]
			tm.mu.Unlock()
			if !strings.Contains(rest, want) {
				tm.t.Fatalf("the program ended without showing %q; after the last expected text it showed:\n%s", want, rest)
			}
		case <-deadline:
			tm.t.Fatalf("the terminal did not show %q within 60s; after the last expected text it showed:\n%s", want, rest)
		}
	}
}

// send types line and Enter.
func (tm *terminal) send(line string) {
	tm.t.Helper()
	if _, err := tm.ptmx.Write([]byte(line + "\r")); err != nil {
		tm.t.Fatalf("typing %q: %v", line, err)
	}
}

// exit waits for the program to end and returns its exit code.
func (tm *terminal) exit() int {
	tm.t.Helper()
	err := tm.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		tm.t.Fatalf("waiting for the program: %v", err)
	}
	return 0
}

// formSchema is a form with every kind of field MCP allows.
const formSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","description":"Your name","minLength":2},
	"age":{"type":"integer","description":"Your age","minimum":0,"maximum":150,"default":36},
	"email":{"type":"string","format":"email"},
	"colour":{"type":"string","enum":["red","green","blue"],"enumNames":["Red","Green","Blue"]},
	"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"s"},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]}},
	"subscribe":{"type":"boolean","default":true}},
	"required":["name","colour"]}`

// TestElicitationTerminal: on a terminal, a server's elicitation question
// is a form built from the schema it asks with — required fields first,
// each answer checked before the next (a missing answer, a value outside
// the choices, a bound, a format), defaults taken on Enter, choices by
// number, value or title — and the answer reaches the server (issue 13
// §2: it was declined silently). "n" declines; Ctrl-D cancels.
func TestElicitationTerminal(t *testing.T) {
	fixture := interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver")
	cfg := filepath.Join(t.TempDir(), "sb.toml")
	write(t, cfg, "[[mcp_servers]]\nid = \"fx\"\ncommand = "+quote(fixture)+"\nargs = [\"-elicit-schema\", "+quote(formSchema)+"]\n")

	t.Run("accept", func(t *testing.T) {
		tm := startTerminal(t, "--config", cfg, "call", "mcp_fx_elicit")
		tm.expect(`Server "fx" asks: Please fill in the form.`)
		tm.expect("Answer? [Y/n]")
		tm.send("")
		tm.expect("colour *")
		tm.expect("one of: 1) Red (red)  2) Green (green)  3) Blue (blue) (required): ")
		tm.send("")
		tm.expect("an answer is required")
		tm.send("purple")
		tm.expect("not one of the choices")
		tm.send("2")
		tm.expect("Name (name) * — Your name")
		tm.expect("text (required): ")
		tm.send("A")
		tm.expect("minLength")
		tm.send("Ada")
		tm.expect("age — Your age")
		tm.expect("a whole number from 0 to 150 [36]: ")
		tm.send("200")
		tm.expect("maximum")
		tm.send("x")
		tm.expect("not a whole number")
		tm.send("")
		tm.expect("an email address (Enter to skip): ")
		tm.send("nope")
		tm.expect("not an email address")
		tm.send("ada@example.com")
		tm.expect("one of: 1) Small (s)  2) Large (l) [Small]: ")
		tm.send("large")
		tm.expect("yes or no [yes]: ")
		tm.send("n")
		tm.expect("any of, comma-separated: 1) a  2) b  3) c (Enter to skip): ")
		tm.send("a, 3")
		tm.expect(`{"action":"accept","content":{"age":36,"colour":"green","email":"ada@example.com","name":"Ada","size":"l","subscribe":false,"tags":["a","c"]}}`)
		if code := tm.exit(); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
	t.Run("decline", func(t *testing.T) {
		tm := startTerminal(t, "--config", cfg, "call", "mcp_fx_elicit")
		tm.expect("Answer? [Y/n]")
		tm.send("n")
		tm.expect(`{"action":"decline","content":null}`)
		if code := tm.exit(); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		tm := startTerminal(t, "--config", cfg, "call", "mcp_fx_elicit")
		tm.expect("Answer? [Y/n]")
		tm.send("")
		tm.expect("(required): ")
		if _, err := tm.ptmx.Write([]byte{4}); err != nil { // Ctrl-D
			t.Fatal(err)
		}
		tm.expect("(cancelled)")
		tm.expect(`{"action":"cancel","content":null}`)
		if code := tm.exit(); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
}

// TestElicitationTerminalEverything: the form of the reference server
// everything's trigger-elicitation-request (every field kind the spec has:
// formats, titled and untitled enums, single and multiple, legacy
// enumNames, defaults), answered on a terminal, reaches the server.
func TestElicitationTerminalEverything(t *testing.T) {
	ev := interop.Everything(t)
	cfg := filepath.Join(t.TempDir(), "sb.toml")
	write(t, cfg, "[[mcp_servers]]\nid = \"everything\"\ncommand = "+quote(ev[0])+"\nargs = ["+quote(ev[1])+", \"stdio\"]\n")
	tm := startTerminal(t, "--config", cfg, "call", "mcp_everything_trigger-elicitation-request")
	tm.expect("Answer? [Y/n]")
	tm.send("y")
	for _, step := range []struct{ prompt, answer string }{
		{"text (required): ", "Ada Lovelace"},
		{"a date (YYYY-MM-DD) (Enter to skip): ", "1815-12-10"},
		{"yes or no (Enter to skip): ", "yes"},
		{"an email address (Enter to skip): ", "ada@example.com"},
		{"text [It was a dark and stormy night.]: ", ""},
		{"a URI (Enter to skip): ", ""},
		{"[42]: ", "7"},
		{"one of: 1) Cats (pet-1)", "dogs"},
		{"[3.14]: ", ""},
		{"any of, comma-separated: 1) Tuna (fish-1)", "1, Trout"},
		{"one of: 1) Superman (hero-1)", "3"},
		{"any of, comma-separated: 1) Guitar", ""},
		{"one of: 1) Monica", "Joey"},
	} {
		tm.expect(step.prompt)
		tm.send(step.answer)
	}
	tm.expect("User provided the requested information")
	// The server prints the answer with its keys in order.
	for _, want := range []string{`"birthdate": "1815-12-10"`, `"check": true`, `"email": "ada@example.com"`, `"integer": 7`,
		`"legacyTitledEnum": "pet-2"`, `"name": "Ada Lovelace"`, `"fish-1",`, `"fish-3"`, `"titledSingleSelectEnum": "hero-3"`,
		`"untitledSingleSelectEnum": "Joey"`} {
		tm.expect(want)
	}
	if code := tm.exit(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// quote is s as a TOML basic string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}
