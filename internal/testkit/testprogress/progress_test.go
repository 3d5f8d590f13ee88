package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFixture runs the real go test -race -json on testdata/fixture, a
// module with a package of each kind (passing, failing, panicking, not
// compiling, without tests, timing out, racing), and checks that the summary says what go
// test says, shows failed tests' output whole and hides passing tests'.
func TestFixture(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	// The hang package blocks until -timeout kills its test binary.
	cmd := exec.Command(goBin, "test", "-race", "-json", "-count=1", "-timeout=5s", "./...")
	cmd.Dir = "testdata/fixture"
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	events, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("go test -json on the fixture: %v, want exit status 1\n%s", err, stderr.Bytes())
	}

	var out bytes.Buffer
	counts, err := Summarize(bytes.NewReader(events), &out, &Options{Every: -1})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Logf("summary:\n%s", got)

	want := Counts{Packages: 7, PackagesFailed: 5, BuildsFailed: 1, Passed: 6, Failed: 5, Skipped: 1}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if counts.OK() {
		t.Error("counts.OK() = true with failures")
	}
	for _, s := range []string{
		"ok  \texample.com/fixture/pass\t",
		"?   \texample.com/fixture/notests\t[no test files]\n",
		// A build error, whole, and the package's verdict.
		"broken.go:5:13: cannot use \"not a number\"",
		"FAIL\texample.com/fixture/broken [build failed]\n",
		// A failed test's log and error, a failed subtest's, the verdict.
		"FAILING-LOG: shown with the failure",
		"FAILING-ERROR",
		"--- FAIL: TestFails",
		"SUB-FAILING-ERROR",
		"--- FAIL: TestParent/fails",
		"FAIL\texample.com/fixture/fail\t",
		// A panic: the log before it and the stack.
		"PANIC-LOG: before the panic",
		"panic: KABOOM",
		"FAIL\texample.com/fixture/panics\t",
		// A test that never ended: its log, the timeout and its stack.
		"HANG-LOG: before blocking",
		"panic: test timed out after 5s",
		"hang_test.go:9",
		"FAIL\texample.com/fixture/hang\t",
		// A data race: the report and the failure it causes.
		"WARNING: DATA RACE\nWrite at ",
		"race_test.go:",
		"race detected during execution of test",
		"FAIL\texample.com/fixture/race\t",
		"7 packages: 2 ok, 5 failed (1 did not build)\ntests: 6 passed, 5 failed, 1 skipped\n",
		// Every skipped test, with its reason, before the counts.
		"skipped:\n  example.com/fixture/pass TestSkipped: pass_test.go:14: SKIP-REASON\n7 packages:",
		// What a passing test of a failing package wrote itself.
		"STRAY-OUTPUT: shown when the package fails",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("the summary lacks %q", s)
		}
	}
	for _, s := range []string{"PASSING-LOG", "PASSING-SUB-LOG", "PASSING-STRAY-OUTPUT", "=== RUN   TestPasses", `"Action"`} {
		if strings.Contains(got, s) {
			t.Errorf("the summary shows %q, from a test that passed or raw JSON", s)
		}
	}
	// The closing line is the one CI reads: "tests: N passed, N failed, N skipped".
	if lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n"); lines[len(lines)-1] != "tests: 6 passed, 5 failed, 1 skipped" {
		t.Errorf("last line %q", lines[len(lines)-1])
	}
}

// TestOnePackageAtATime: a package's line is written when it ends, not
// when go test does.
func TestOnePackageAtATime(t *testing.T) {
	r, w := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan Counts)
	go func() {
		c, _ := Summarize(r, outW, &Options{Every: -1})
		outW.Close()
		done <- c
	}()
	lines := bufio.NewScanner(outR)
	io.WriteString(w, `{"Action":"start","Package":"example.com/a"}
{"Action":"run","Package":"example.com/a","Test":"TestA"}
{"Action":"output","Package":"example.com/a","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"example.com/a","Test":"TestA","Elapsed":0.5}
{"Action":"output","Package":"example.com/a","Output":"PASS\n"}
{"Action":"output","Package":"example.com/a","Output":"ok  \texample.com/a\t0.512s\n"}
{"Action":"pass","Package":"example.com/a","Elapsed":0.512}
{"Action":"start","Package":"example.com/b"}
`)
	// The pipe is still open: b is running.
	if !lines.Scan() || lines.Text() != "ok  \texample.com/a\t0.512s" {
		t.Fatalf("first line %q, want a's ok line", lines.Text())
	}
	io.WriteString(w, "not json, passed on\n")
	if !lines.Scan() || lines.Text() != "not json, passed on" {
		t.Fatalf("line %q, want the non-JSON line", lines.Text())
	}
	w.Close() // go test stopped with b running
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	want := []string{
		"FAIL\texample.com/b\t(no result: go test stopped before it ended)",
		"2 packages: 1 ok, 1 failed",
		"tests: 1 passed, 0 failed, 0 skipped",
	}
	if diff := cmp.Diff(want, rest); diff != "" {
		t.Errorf("after go test stopped (-want +got):\n%s", diff)
	}
	if c := <-done; c.OK() {
		t.Errorf("counts %+v: OK with a package that never ended", c)
	}
}

// TestRaceReportKept: the race detector writes its reports to the test
// binary's stderr unframed, and test2json gives each to the test it last
// saw start, with parallel tests often one that passes: the report is
// shown all the same (go test without -json always shows it), and the rest
// of that passing test's output is not.
func TestRaceReportKept(t *testing.T) {
	in := `{"Action":"start","Package":"example.com/p"}
{"Action":"output","Package":"example.com/p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"example.com/p","Test":"TestA","Output":"=== PAUSE TestA\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"    p_test.go:20: B-LOG\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"==================\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"WARNING: DATA RACE\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"Write at 0x00c000094198 by goroutine 9:\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"  example.com/p.TestA.func1()\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"==================\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"    p_test.go:21: B-LOG-AFTER\n"}
{"Action":"output","Package":"example.com/p","Test":"TestB","Output":"--- PASS: TestB (0.00s)\n"}
{"Action":"pass","Package":"example.com/p","Test":"TestB"}
{"Action":"output","Package":"example.com/p","Test":"TestA","Output":"    testing.go:1617: race detected during execution of test\n"}
{"Action":"output","Package":"example.com/p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Package":"example.com/p","Test":"TestA"}
{"Action":"output","Package":"example.com/p","Output":"FAIL\n"}
{"Action":"output","Package":"example.com/p","Output":"FAIL\texample.com/p\t0.1s\n"}
{"Action":"fail","Package":"example.com/p","Elapsed":0.1}
`
	var out bytes.Buffer
	if _, err := Summarize(strings.NewReader(in), &out, &Options{Every: -1}); err != nil {
		t.Fatal(err)
	}
	want := "=== RUN   TestA\n=== PAUSE TestA\n" +
		"==================\nWARNING: DATA RACE\nWrite at 0x00c000094198 by goroutine 9:\n  example.com/p.TestA.func1()\n==================\n" +
		"    testing.go:1617: race detected during execution of test\n--- FAIL: TestA (0.00s)\nFAIL\nFAIL\texample.com/p\t0.1s\n" +
		"1 packages: 0 ok, 1 failed\ntests: 1 passed, 1 failed, 0 skipped\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// TestVerbose: -v writes every output line as it comes, and a package's
// line once.
func TestVerbose(t *testing.T) {
	in := `{"Action":"start","Package":"example.com/a"}
{"Action":"output","Package":"example.com/a","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"example.com/a","Test":"TestA","Output":"    a_test.go:9: a log\n"}
{"Action":"output","Package":"example.com/a","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"example.com/a","Test":"TestA"}
{"Action":"output","Package":"example.com/a","Output":"ok  \texample.com/a\t0.1s\n"}
{"Action":"pass","Package":"example.com/a","Elapsed":0.1}
`
	var out bytes.Buffer
	if _, err := Summarize(strings.NewReader(in), &out, &Options{Verbose: true, Every: -1}); err != nil {
		t.Fatal(err)
	}
	want := "=== RUN   TestA\n    a_test.go:9: a log\n--- PASS: TestA (0.00s)\nok  \texample.com/a\t0.1s\n" +
		"1 packages: 1 ok\ntests: 1 passed, 0 failed, 0 skipped\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("-v output (-want +got):\n%s", diff)
	}
}

// TestQuietSpell: after a minute without a line, one line says what is
// going on; not before, and not again until the next quiet minute.
func TestQuietSpell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := io.Pipe()
		var out lockedBuffer
		done := make(chan struct{})
		go func() {
			Summarize(r, &out, nil)
			close(done)
		}()
		defer func() { w.Close(); <-done }() // also after a t.Fatal

		time.Sleep(61 * time.Second) // the go command builds: no event yet; a line at 60s
		synctest.Wait()
		if got, want := out.String(), "... 1m0s in: building\n"; got != want {
			t.Fatalf("after a quiet minute: %q, want %q", got, want)
		}
		io.WriteString(w, `{"Action":"start","Package":"example.com/slow"}`+"\n")
		time.Sleep(50 * time.Second) // slow started at 61s
		synctest.Wait()
		if got := out.String(); strings.Count(got, "\n") != 1 {
			t.Fatalf("a line before the next quiet minute:\n%s", got)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got, want := out.String(), "... 1m0s in: building\n... 2m0s in: running example.com/slow (59s)\n"; got != want {
			t.Fatalf("after two quiet minutes:\n%s\nwant:\n%s", got, want)
		}
		io.WriteString(w, `{"Action":"output","Package":"example.com/slow","Output":"ok  \texample.com/slow\t65s\n"}
{"Action":"pass","Package":"example.com/slow","Elapsed":65}
`)
		time.Sleep(59 * time.Second) // the ok line restarted the quiet spell
		synctest.Wait()
		if got := out.String(); strings.Count(got, "...") != 2 {
			t.Fatalf("a progress line within a minute of the last line:\n%s", got)
		}
	})
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
