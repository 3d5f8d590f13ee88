package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
)

// The codes of a --json failure, {"error": {"code": CODE, "message": ...}}:
// stable like every --json field. Each has one exit code (exitCode).
const (
	codeUsage            = "usage"             // a bad flag, argument or command (2)
	codeConfig           = "config"            // the configuration or an agent file has problems, listed in details (2)
	codeUnknownTool      = "unknown_tool"      // no server offers the tool (2)
	codeInvalidArguments = "invalid_arguments" // the arguments fail the tool's input schema; the server was not called (2)
	codeUnknownServer    = "unknown_server"    // no configured server has the id (2)
	codeUnknownPrompt    = "unknown_prompt"    // no server has the prompt (2)
	codeUnknownResource  = "unknown_resource"  // no server can have the URI, or several can (2)
	codeUnknownAgent     = "unknown_agent"     // no agent file has the name (2)
	codeNoAPIKey         = "no_api_key"        // the LLM provider needs a key and has none (2)
	codeProvider         = "provider"          // the LLM provider cannot be reached, or a model call failed (1)
	codeStartFailed      = "start_failed"      // servers failed to start (1)
	codeTimeout          = "timeout"           // a server did not answer in time; the call was cancelled (1)
	codeUnavailable      = "unavailable"       // a server is not connected (1)
	codeServerError      = "server_error"      // a server answered with a protocol error (1)
	codeFailed           = "failed"            // any other failure of the work (1)
	codeInterrupted      = "interrupted"       // Ctrl-C or SIGTERM (130)
)

// exitCode is the exit code of a --json error code.
func exitCode(kind string) int {
	switch kind {
	case codeUsage, codeConfig, codeUnknownTool, codeInvalidArguments, codeUnknownServer,
		codeUnknownPrompt, codeUnknownResource, codeUnknownAgent, codeNoAPIKey:
		return ExitUsage
	case codeInterrupted:
		return ExitInterrupted
	}
	return ExitFailed
}

// Errors the CLI itself finds, branched on by classify.
var (
	errUnknownPrompt   = errors.New("unknown prompt")
	errUnknownResource = errors.New("unknown resource")
)

// notFound is an error of what the CLI did not find (a prompt, the server
// of a resource), matching the sentinel kind (errUnknownPrompt, …) for
// classify.
type notFound struct {
	kind error
	msg  string
}

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == e.kind }

func notFoundErr(kind error, format string, args ...any) error {
	return &notFound{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// classify says what err is, as a --json error code.
func classify(err error) string {
	var se *host.StartError
	var je *jsonrpc.Error
	var le *llm.Error
	switch {
	case errors.Is(err, host.ErrUnknownTool):
		return codeUnknownTool
	case errors.Is(err, host.ErrInvalidArguments):
		return codeInvalidArguments
	case errors.Is(err, host.ErrUnknownServer):
		return codeUnknownServer
	case errors.Is(err, errUnknownPrompt):
		return codeUnknownPrompt
	case errors.Is(err, errUnknownResource):
		return codeUnknownResource
	case errors.Is(err, agent.ErrNotFound):
		return codeUnknownAgent
	case errors.Is(err, host.ErrTimeout):
		return codeTimeout
	case errors.As(err, &se):
		return codeStartFailed
	case errors.Is(err, host.ErrUnavailable):
		return codeUnavailable
	case errors.As(err, &je):
		return codeServerError
	case errors.As(err, &le):
		return codeProvider
	}
	return codeFailed
}

// configErr is the error of a configuration (or agent file) that has
// problems: a usage error listing them, each as fields for --json.
func configErr(err error) error {
	return &exitError{code: ExitUsage, kind: codeConfig, err: fmt.Errorf("configuration:\n%s", indent(err.Error())), details: problemDetails(err)}
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
		out = append(out, errorItem{Code: classify(err), Message: err.Error()})
	}
	return out
}

// errorJSON is a failure as --json writes it on stdout.
type errorJSON struct {
	Error struct {
		Code    string        `json:"code"`
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
		ee = &exitError{code: ExitInterrupted, kind: codeInterrupted, err: errors.New("interrupted")}
	case errors.As(err, &ee):
	default:
		// cobra's own errors: an unknown command, a bad flag.
		ee = &exitError{code: ExitUsage, kind: codeUsage, err: err}
	}
	if ee.err == nil {
		return ee.code
	}
	msg := e.red.Redact(ee.err.Error())
	// An error may quote what a server said (a tool's error result in a
	// failed run).
	e.eprintf("switchboard: %s\n", msg)
	if (e.jsonOut || wantsJSON(args)) && !e.wroteJSON {
		var j errorJSON
		j.Error.Code, j.Error.Message, j.Error.Details = ee.kind, msg, ee.details
		if j.Error.Code == "" {
			j.Error.Code = kindOf(ee)
		}
		// One line: a JSON document, and a JSON line where the command
		// writes lines (run --json).
		b, merr := json.Marshal(j)
		if merr == nil {
			fmt.Fprintln(e.stdout, escapeHidden(e.red.Redact(string(b))))
		}
	}
	return ee.code
}

// kindOf is the --json code of an exitError made without one: what its
// error is, unless that disagrees with its exit code.
func kindOf(ee *exitError) string {
	if k := classify(ee.err); exitCode(k) == ee.code {
		return k
	}
	switch ee.code {
	case ExitUsage:
		return codeUsage
	case ExitInterrupted:
		return codeInterrupted
	}
	return codeFailed
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
