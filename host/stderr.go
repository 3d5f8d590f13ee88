package host

// A stdio child's stderr: logged line by line, each line bounded, and its
// tail kept to explain the child's death in an error.

import (
	"bytes"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"github.com/switchboardmcp/switchboard/secret"
)

const (
	// stderrTailBytes is how much of a child's stderr is kept to explain its
	// death in an error.
	stderrTailBytes = 4 << 10
	// stderrLineBytes bounds one logged line of a child's stderr.
	stderrLineBytes = 4 << 10
)

const (
	// tailLines and tailLineBytes bound what of a child's stderr an error
	// quotes: the last few lines say why it died; a stack trace or an
	// environment dump would bury the rest of the message.
	tailLines     = 5
	tailLineBytes = 300
)

// explain adds the last lines of a stdio child's stderr to err, which is
// usually where the real reason is, each on a line of its own after
// "stderr: ". Lines that only echo the child's environment (KEY=VALUE for
// a variable it was given, as a server that prints its environment
// writes) are left out: they are not the reason, and PATH alone can fill
// the message.
func (s *server) explain(err error) error {
	if s.stderr == nil {
		return err
	}
	raw := s.stderr.String()
	if len(raw) >= stderrTailBytes {
		// The buffer dropped older bytes: its first line may begin inside
		// a secret, where the redactor cannot recognise it. Drop that line.
		if i := strings.IndexByte(raw, '\n'); i >= 0 {
			raw = raw[i+1:]
		} else {
			raw = ""
		}
	}
	// The child may print the secrets it was given (its environment), and
	// terminal escapes: the error reaches terminals. Redacted whole before
	// it is cut, so that no cut can split a secret.
	raw, _ = s.h.lim.cleanText(raw, len(raw))
	tail := s.h.red.Redact(raw)
	var env map[string]bool
	if p := s.envKeys.Load(); p != nil {
		env = *p
	}
	var lines []string
	for _, line := range strings.Split(tail, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if k, _, ok := strings.Cut(line, "="); ok && (env[k] || shellVars[k]) {
			continue
		}
		if jsStackFrame().MatchString(line) {
			continue // the error above it says more
		}
		if len(line) > tailLineBytes {
			line = strings.ToValidUTF8(line[:tailLineBytes], "") + "…"
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return err
	}
	lines = lines[max(0, len(lines)-tailLines):]
	return fmt.Errorf("%w\nstderr: %s", err, strings.Join(lines, "\nstderr: "))
}

// jsStackFrame matches a line of a JavaScript stack trace ("at f
// (file.js:1:2)"), which fills the last lines of a Node server's crash.
var jsStackFrame = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^at .+:\d+:\d+\)?( \{)?$`) })

// shellVars are the variables a shell sets in its own environment, which
// a child run through sh prints with the ones it was given.
var shellVars = map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}

// envKeys are the names of the variables of env (KEY=VALUE entries).
func envKeys(env []string) *map[string]bool {
	m := make(map[string]bool, len(env))
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok {
			m[k] = true
		}
	}
	return &m
}

// lineLogger logs a child's stderr line by line, each line bounded.
type lineLogger struct {
	log *slog.Logger
	red *secret.Redactor
	mu  sync.Mutex
	buf []byte
	cut bool // the current line was longer than the bound
	// lines, when set, is given each line too (the server's history).
	lines func(string)
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.keep(p)
			break
		}
		l.keep(p[:i])
		l.flush()
		p = p[i+1:]
	}
	return n, nil
}

// keep adds p to the current line, within the bound.
func (l *lineLogger) keep(p []byte) {
	room := stderrLineBytes - len(l.buf)
	if len(p) > room {
		l.cut = true
	}
	if room > 0 {
		l.buf = append(l.buf, p[:min(room, len(p))]...)
	}
}

func (l *lineLogger) flush() {
	if l.cut {
		if l.red != nil {
			// A secret may straddle the cut, where the redactor cannot see
			// it whole: drop what could be its beginning. With no secret
			// registered MaxLen is 0 and nothing is dropped.
			l.buf = l.buf[:len(l.buf)-min(len(l.buf), max(0, l.red.MaxLen()-1))]
		}
		l.buf = append(l.buf, " [cut]"...)
	}
	l.cut = false
	line := strings.TrimRight(string(l.buf), "\r")
	l.buf = l.buf[:0]
	if line != "" {
		l.log.Info("server stderr", "line", line)
		if l.lines != nil {
			l.lines(line)
		}
	}
}
