package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/llm"
)

// classify says what err is (its --json error code and exit code): its
// kind in the daemon's table (daemon.KindOf), as the REST API and the web
// UI say it; the CLI adds the kinds of the packages above the daemon, an
// agent not found and an LLM provider's failure.
func classify(err error) daemon.Kind {
	var le *llm.Error
	switch {
	case errors.Is(err, agent.ErrNotFound):
		return daemon.KindUnknownAgent
	case errors.As(err, &le):
		return daemon.KindProvider
	}
	return daemon.KindOf(err)
}

// configErr is the error of a configuration (or agent file) that has
// problems: a usage error listing them, each as fields for --json.
func configErr(err error) error {
	return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("configuration:\n%s", indent(err.Error())), details: problemDetails(err)}
}

// problemJSON is one problem of a file, as --json reports it.
type problemJSON struct {
	File    string `json:"file"` // "" when not known
	Line    int    `json:"line"` // 0 when not known
	Path    string `json:"path"` // the field path, e.g. mcp_servers[0].command; "" for the file as a whole
	Message string `json:"message"`
}

// problemDetails lists the problems in err: each *config.Problem with its
// fields, anything else as a message alone.
func problemDetails(err error) []problemJSON {
	out := []problemJSON{}
	add := func(p *config.Problem) {
		out = append(out, problemJSON{File: p.Pos.File, Line: p.Pos.Line, Path: p.Field, Message: p.Msg})
	}
	var walk func(error)
	walk = func(err error) {
		switch u := err.(type) {
		case *config.Problem:
			add(u)
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		default:
			ps := config.Problems(err)
			for _, p := range ps {
				add(p)
			}
			if len(ps) == 0 {
				out = append(out, problemJSON{Message: err.Error()})
			}
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// errorItem is one error in a listing's "errors": a server that did not
// answer while the others did.
type errorItem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorList is err's errors, one item each (a joined error is several).
func errorList(err error) []errorItem {
	var out []errorItem
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, errorList(e)...)
		}
	} else if err != nil {
		out = append(out, errorItem{Code: string(classify(err)), Message: err.Error()})
	}
	return out
}

// errorJSON is a failure as --json writes it on stdout.
type errorJSON struct {
	Error struct {
		Code    daemon.Kind   `json:"code"`
		Message string        `json:"message"`
		Details []problemJSON `json:"details,omitempty"`
	} `json:"error"`
}

// exit reports err, the command's failure, and returns the exit code: the
// message once on stderr and, with --json, an error object on stdout
// unless the command already wrote its own document there (a tool's
// isError result, validate's report, a run's events). When ctx ended
// (Ctrl-C), whatever the command failed with was that: the exit code is
// 130 and the message says so, once, instead of "context canceled".
func (e *env) exit(ctx context.Context, err error, args []string) int {
	var ee *exitError
	switch {
	case ctx.Err() != nil:
		ee = &exitError{kind: daemon.KindInterrupted, err: errors.New("interrupted")}
	case errors.As(err, &ee):
	default:
		// cobra's own errors: an unknown command, a bad flag.
		ee = &exitError{kind: daemon.KindUsage, err: err}
	}
	if ee.err == nil {
		return ee.kind.Exit()
	}
	msg := e.red.Redact(ee.err.Error())
	// An error may quote what a server said (a tool's error result in a
	// failed run).
	e.eprintf("switchboard: %s\n", msg)
	if (e.jsonOut || wantsJSON(args)) && !e.wroteJSON {
		var j errorJSON
		j.Error.Code, j.Error.Message, j.Error.Details = ee.kind, msg, ee.details
		// One line: a JSON document, and a JSON line where the command
		// writes lines (run --json).
		b, merr := json.Marshal(j)
		if merr == nil {
			fmt.Fprintln(e.stdout, escapeHidden(e.red.Redact(string(b))))
		}
	}
	return ee.kind.Exit()
}

// wantsJSON reports whether args ask for --json, for a failure cobra
// found before it parsed that flag (an unknown flag earlier in args).
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || strings.HasPrefix(a, "--json=") && a != "--json=false" {
			return true
		}
	}
	return false
}
