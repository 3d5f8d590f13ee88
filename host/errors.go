package host

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrUnknownTool: no offered tool has that name.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrUnknownServer: no configured server has that id.
	ErrUnknownServer = errors.New("unknown server")
	// ErrInvalidArguments: the arguments failed the tool's input schema; the
	// call never reached the server. The *schema.ValidationError is wrapped
	// too.
	ErrInvalidArguments = errors.New("invalid arguments")
	// ErrTimeout: the server did not answer within its timeout; the call was
	// cancelled upstream.
	ErrTimeout = errors.New("timed out")
	// ErrUnavailable: the server is not connected (it failed, or its
	// connection was lost).
	ErrUnavailable = errors.New("server unavailable")
	// ErrClosed: the host was closed.
	ErrClosed = errors.New("host closed")
)

// CallError is the error of a call that did not produce a result.
type CallError struct {
	Server   string
	Tool     string        // the server's own tool name; empty for non-tool requests
	Method   string        // the MCP method, e.g. "tools/call"
	Target   string        // what the request is about: a resource URI, a prompt name
	Duration time.Duration // how long the request ran
	Timeout  time.Duration // the timeout that applied
	Err      error
}

func (e *CallError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %q", e.Server)
	if e.Tool != "" {
		fmt.Fprintf(&b, ": tool %q", e.Tool)
	} else if e.Method != "" {
		fmt.Fprintf(&b, ": %s", e.Method)
		if e.Target != "" {
			fmt.Fprintf(&b, " %s", e.Target)
		}
	}
	if errors.Is(e.Err, ErrTimeout) {
		d := e.Timeout
		if d == 0 {
			d = e.Duration.Round(time.Millisecond)
		}
		fmt.Fprintf(&b, ": no answer within %s", d)
		if msg := strings.TrimPrefix(e.Err.Error(), ErrTimeout.Error()); msg != "" {
			b.WriteString(msg)
		}
		b.WriteString(" (timed out; the call was cancelled)")
		return b.String()
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *CallError) Unwrap() error { return e.Err }

// ServerError is a server's failure to start.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return fmt.Sprintf("server %q: %v", e.Server, e.Err) }
func (e *ServerError) Unwrap() error { return e.Err }

// StartError names every server that failed to start.
type StartError struct {
	Failed []*ServerError
}

// Error names every failed server, one a line; a server's error of several
// lines (a child's last stderr lines) is indented under its first.
func (e *StartError) Error() string {
	if len(e.Failed) == 1 {
		return "starting MCP servers: " + indentLines(e.Failed[0].Error(), "  ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "starting MCP servers: %d servers failed:", len(e.Failed))
	for _, f := range e.Failed {
		b.WriteString("\n  ")
		b.WriteString(indentLines(f.Error(), "    "))
	}
	return b.String()
}

// indentLines indents every line of s but the first.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// oneLine is s on one line, for a log record: a text handler would quote a
// value of several lines with its newlines escaped.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}

func (e *StartError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f
	}
	return errs
}
