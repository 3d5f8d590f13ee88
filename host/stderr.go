package host

// A stdio child's stderr: logged line by line, each line bounded, and its
// tail kept to explain the child's death in an error.

import (
	"bytes"
	"fmt"
	"log/slog"
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

// explain adds the tail of a stdio child's stderr to err, which is usually
// where the real reason is.
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
	// terminal escapes: the error reaches terminals.
	raw, _ = s.h.lim.cleanText(raw, len(raw))
	tail := strings.TrimSpace(s.h.red.Redact(raw))
	if tail == "" {
		return err
	}
	if i := strings.LastIndexByte(tail, '\n'); i >= 0 && len(tail)-i < 200 {
		// Keep the last few lines only.
		lines := strings.Split(tail, "\n")
		if len(lines) > 5 {
			lines = lines[len(lines)-5:]
		}
		tail = strings.Join(lines, "\n")
	}
	return fmt.Errorf("%w\nstderr: %s", err, tail)
}

// lineLogger logs a child's stderr line by line, each line bounded.
type lineLogger struct {
	log *slog.Logger
	red *secret.Redactor
	mu  sync.Mutex
	buf []byte
	cut bool // the current line was longer than the bound
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
	}
}
