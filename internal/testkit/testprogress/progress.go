package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, and the
// build-output and build-fail events the go command adds for packages that
// do not compile).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// Options configure a summary; nil means the defaults.
type Options struct {
	// Verbose writes every line of output as it comes, like go test -v.
	Verbose bool
	// Every is how long a quiet spell lasts before a line saying which
	// packages are still running; 0 means a minute, negative never.
	Every time.Duration
}

// Counts are what a summary saw.
type Counts struct {
	Packages, PackagesFailed, BuildsFailed int
	Passed, Failed, Skipped                int // tests, subtests included
}

// OK says that nothing failed.
func (c Counts) OK() bool { return c.PackagesFailed == 0 && c.BuildsFailed == 0 && c.Failed == 0 }

// summary turns a stream of test events into go test's own short report,
// a package at a time as each ends.
type summary struct {
	opts Options
	now  func() time.Time

	mu        sync.Mutex // guards what follows, and writes to w
	w         io.Writer
	start     time.Time
	pkgs      map[string]*pkgState
	counts    Counts
	skipped   []string // "pkg TestX: reason", in the order they ended
	lastWrite time.Time
}

// pkgState is what is kept of a package until it ends: its lines, each
// with the test that printed it ("" for the package's own); a test's log
// is dropped as soon as it passes or is skipped, since go test shows only
// failing tests' logs.
type pkgState struct {
	started time.Time
	lines   []line
	inRace  bool // within a race detector's report
}

// testingOwn says whether a line of output is the testing package's: its
// === and --- lines, and t.Log's lines, indented (nested subtests' more).
func testingOwn(text string) bool {
	return strings.HasPrefix(text, "=== ") || strings.HasPrefix(text, "--- ") || strings.HasPrefix(text, "    ")
}

// raceRule opens and closes a race detector's report.
const raceRule = "==================\n"

type line struct {
	test, text string
}

func newSummary(w io.Writer, opts *Options, now func() time.Time) *summary {
	s := &summary{w: w, now: now, pkgs: map[string]*pkgState{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Every == 0 {
		s.opts.Every = time.Minute
	}
	s.start = now()
	s.lastWrite = s.start
	return s
}

// Summarize reads `go test -json` from r and writes to w, as each package
// ends, go test's line for it ("ok  pkg  12.3s", "?  pkg  [no test
// files]") and, for a package that failed, the output of its failed tests
// and its own, ending in "FAIL pkg": what go test without -json prints,
// but with a line every opts.Every of silence naming the packages still
// running. Build errors are written as they come; a line that is not JSON
// is passed on unchanged. It ends with the skipped tests, each with its
// reason, and a line of counts, and returns the counts.
func Summarize(r io.Reader, w io.Writer, opts *Options) (Counts, error) {
	s := newSummary(w, opts, time.Now)
	done := make(chan struct{})
	defer close(done)
	if s.opts.Every > 0 {
		go s.tick(done)
	}
	sc := bufio.NewScanner(r)
	// A test's output line can be long (a JSON document, a data race's
	// stacks); test2json cuts lines, but a non-JSON line is not.
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		s.handle(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return s.counts, err
	}
	return s.finish(), nil
}

func (s *summary) handle(b []byte) {
	var ev event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil {
		s.mu.Lock()
		s.write(string(b) + "\n")
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev.Action {
	case "build-output":
		s.write(ev.Output)
		return
	case "build-fail":
		s.counts.BuildsFailed++
		return
	}
	if ev.Package == "" {
		return
	}
	p := s.pkgs[ev.Package]
	if p == nil {
		p = &pkgState{started: s.now()}
		s.pkgs[ev.Package] = p
	}
	switch ev.Action {
	case "output":
		if s.opts.Verbose {
			s.write(ev.Output)
		}
		test := ev.Test
		// The race detector writes its reports straight to the test
		// binary's stderr, unframed, so test2json gives them to whichever
		// test it last saw start: with parallel tests, often one that
		// passes. A report is kept as the package's own output, as go test
		// without -json always shows it.
		switch {
		case ev.Output == "WARNING: DATA RACE\n":
			p.inRace = true
			if n := len(p.lines); n > 0 && p.lines[n-1].text == raceRule {
				p.lines[n-1].test = ""
			}
			test = ""
		case p.inRace:
			test = ""
			p.inRace = ev.Output != raceRule
		}
		p.lines = append(p.lines, line{test, ev.Output})
	case "pass", "skip", "fail":
		if ev.Test == "" {
			s.endPackage(ev, p)
			return
		}
		switch ev.Action {
		case "pass":
			s.counts.Passed++
		case "skip":
			s.counts.Skipped++
			s.skipped = append(s.skipped, ev.Package+" "+ev.Test+skipReason(p.lines, ev.Test))
		case "fail":
			s.counts.Failed++
		}
		if ev.Action != "fail" {
			// go test without -json hides a passing test's log, but shows
			// what the code under test wrote to stdout or stderr itself,
			// should the package fail.
			p.lines = slices.DeleteFunc(p.lines, func(l line) bool { return l.test == ev.Test && testingOwn(l.text) })
			for i := range p.lines {
				if p.lines[i].test == ev.Test {
					p.lines[i].test = ""
				}
			}
		}
	}
}

// skipReason is ": " and the last line a skipped test logged (t.Skip's
// message), or "" when it logged none.
func skipReason(lines []line, test string) string {
	for _, l := range slices.Backward(lines) {
		if l.test == test && strings.HasPrefix(l.text, "    ") {
			return ": " + strings.TrimSpace(l.text)
		}
	}
	return ""
}

// endPackage writes a package's report: go test's own last line for it
// when it passed, and when it failed the output of its failed tests, of the
// tests it was running when it died (a panic, a timeout) and its own.
func (s *summary) endPackage(ev event, p *pkgState) {
	delete(s.pkgs, ev.Package)
	s.counts.Packages++
	if ev.Action != "fail" {
		if s.opts.Verbose {
			return // already written
		}
		last := ""
		for _, l := range p.lines {
			if l.test == "" && (strings.HasPrefix(l.text, "ok") || strings.HasPrefix(l.text, "?")) {
				last = l.text
			}
		}
		if last == "" {
			last = fmt.Sprintf("ok  \t%s\t%.3fs\n", ev.Package, ev.Elapsed)
		}
		s.write(last)
		return
	}
	s.counts.PackagesFailed++
	if s.opts.Verbose {
		return
	}
	out := p.failureOutput()
	if !strings.Contains(out, "FAIL\t"+ev.Package) {
		// A package that died before go test could say so.
		out += fmt.Sprintf("FAIL\t%s\t%.3fs\n", ev.Package, ev.Elapsed)
	}
	s.write(out)
}

// failureOutput is what go test shows of a failed package: its own output
// and that of the tests that did not pass or skip (failed, or running when
// it died); passing tests' logs are already gone.
func (p *pkgState) failureOutput() string {
	var b strings.Builder
	for _, l := range p.lines {
		b.WriteString(l.text)
	}
	return b.String()
}

// finish writes the packages that never ended (go test was interrupted),
// the tests skipped, each with its reason, and the counts.
func (s *summary) finish() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(s.pkgs)) {
		s.counts.Packages++
		s.counts.PackagesFailed++
		if !s.opts.Verbose {
			s.write(s.pkgs[name].failureOutput())
		}
		s.write(fmt.Sprintf("FAIL\t%s\t(no result: go test stopped before it ended)\n", name))
	}
	if len(s.skipped) > 0 {
		s.write(fmt.Sprintf("skipped:\n  %s\n", strings.Join(s.skipped, "\n  ")))
	}
	c := s.counts
	pkgs := fmt.Sprintf("%d packages: %d ok", c.Packages, c.Packages-c.PackagesFailed)
	if c.PackagesFailed > 0 {
		pkgs += fmt.Sprintf(", %d failed", c.PackagesFailed)
		if c.BuildsFailed > 0 {
			pkgs += fmt.Sprintf(" (%d did not build)", c.BuildsFailed)
		}
	}
	s.write(fmt.Sprintf("%s\ntests: %d passed, %d failed, %d skipped\n", pkgs, c.Passed, c.Failed, c.Skipped))
	return c
}

// tick writes, after each quiet spell of opts.Every, which packages are
// running and for how long, or that none is (the go command is building
// test binaries, which with -race takes minutes).
func (s *summary) tick(done <-chan struct{}) {
	t := time.NewTicker(s.opts.Every / 4)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		now := s.now()
		if now.Sub(s.lastWrite) >= s.opts.Every {
			doing := "building"
			if len(s.pkgs) > 0 {
				var running []string
				for _, name := range slices.Sorted(maps.Keys(s.pkgs)) {
					running = append(running, fmt.Sprintf("%s (%s)", name, now.Sub(s.pkgs[name].started).Round(time.Second)))
				}
				doing = "running " + strings.Join(running, ", ")
			}
			s.write(fmt.Sprintf("... %s in: %s\n", now.Sub(s.start).Round(time.Second), doing))
		}
		s.mu.Unlock()
	}
}

// write writes text; s.mu is held. A failed write (a closed pipe) is
// ignored: the exit status still tells what happened.
func (s *summary) write(text string) {
	io.WriteString(s.w, text)
	s.lastWrite = s.now()
}
