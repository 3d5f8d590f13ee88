//go:build unix

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestPollableStdin: with stdin a pipe, pollableStdin makes it non-blocking
// and reads through it see the data and then EOF; with stdin a regular
// file, stdin is left as it is. It runs itself as the child whose stdin is
// examined.
func TestPollableStdin(t *testing.T) {
	if os.Getenv("SWITCHBOARD_STDIN_CHILD") == "1" {
		f := pollableStdin()
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 0, syscall.F_GETFL, 0)
		if errno != 0 {
			os.Stdout.WriteString("fcntl failed\n")
			os.Exit(1)
		}
		data, err := io.ReadAll(f)
		os.Stdout.WriteString(strings.Join([]string{
			"same=" + boolStr(f == os.Stdin),
			"nonblock=" + boolStr(flags&syscall.O_NONBLOCK != 0),
			"read=" + strings.TrimSpace(string(data)),
			"err=" + boolStr(err != nil),
		}, " ") + "\n")
		os.Exit(0)
	}
	run := func(t *testing.T, stdin func(*exec.Cmd)) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPollableStdin$")
		cmd.Env = append(os.Environ(), "SWITCHBOARD_STDIN_CHILD=1")
		stdin(cmd)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		line, _ := bufio.NewReader(strings.NewReader(string(out))).ReadString('\n')
		return strings.TrimSpace(line)
	}
	t.Run("pipe", func(t *testing.T) {
		got := run(t, func(c *exec.Cmd) { c.Stdin = strings.NewReader("hello\n") }) // exec feeds it through a pipe
		if want := "same=false nonblock=true read=hello err=false"; got != want {
			t.Errorf("child said %q, want %q", got, want)
		}
	})
	t.Run("file", func(t *testing.T) {
		path := t.TempDir() + "/in"
		if err := os.WriteFile(path, []byte("from a file\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got := run(t, func(c *exec.Cmd) { c.Stdin = f })
		if want := "same=true nonblock=false read=from a file err=false"; got != want {
			t.Errorf("child said %q, want %q", got, want)
		}
	})
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
