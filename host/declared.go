package host

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/toolscan"
)

// What the host cleaned in what a server declared (clean.go), and what it
// skipped on the server's stdout, reported in the server's status
// (ServerStatus.Warnings) and logged.

// noteKinds are the listings whose notes a status shows, in that order.
var noteKinds = []string{"server", "tools", "prompts", "resources", "resource templates"}

// maxNotes bounds the notes kept and logged per listing: a server with
// 20,000 tools, each with a long description, gets 20 and a count.
const maxNotes = 20

// setNotes records what cleaning changed in a server's latest listing of
// kind, and logs it when it differs from the previous listing's, so that
// a restart or a re-listing does not repeat it.
func (s *server) setNotes(kind string, notes []string) {
	if len(notes) > maxNotes {
		more := len(notes) - maxNotes
		notes = append(notes[:maxNotes:maxNotes], fmt.Sprintf("and %d more %s cleaned", more, kind))
	}
	s.mu.Lock()
	old := s.notes[kind]
	if s.notes == nil {
		s.notes = map[string][]string{}
	}
	s.notes[kind] = notes
	s.mu.Unlock()
	if slices.Equal(old, notes) {
		return
	}
	for _, n := range notes {
		s.log.Warn("cleaned what the server declared", "what", n)
	}
}

// warningsLocked are the server's own warnings for its status: what
// cleaning changed, and stdout lines skipped. s.mu is held.
func (s *server) warningsLocked() []string {
	var out []string
	for _, k := range noteKinds {
		out = append(out, s.notes[k]...)
	}
	if n := s.stdoutSkipped.Load(); n > 0 {
		out = append(out, fmt.Sprintf("stdout: %d lines that were not JSON-RPC messages skipped (the first %d logged)", n, maxStdoutLogged))
	}
	if n := s.refused.Load(); n > 0 {
		out = append(out, fmt.Sprintf("refused %d messages the protocol does not allow (the first %d logged)", n, maxRefusedLogged))
	}
	return out
}

// maxRefusedLogged bounds how many refused messages of one server are
// logged; the rest are counted in its status.
const maxRefusedLogged = 10

// refusedMessage logs a message of the server's that the protocol does
// not allow (transport's RefusedMessage: a repeated member name, bytes
// that are not UTF-8, a batch): the request it answered has failed with
// the reason, anything else in it was dropped. The first maxRefusedLogged
// of the server's are logged, the rest counted.
func (s *server) refusedMessage(err error) {
	n := s.refused.Add(1)
	if n > maxRefusedLogged {
		return
	}
	s.log.Warn("refused a message from the server; the request it answers fails, a notification or request in it is dropped",
		"reason", s.h.redact(err.Error()))
	if n == maxRefusedLogged {
		s.log.Warn("further refused messages are counted, not logged (see its status)")
	}
}

// maxStdoutLogged bounds how many skipped stdout lines of one server are
// logged (the rest are counted), and stdoutLogBytes how much of each.
const (
	maxStdoutLogged = 10
	stdoutLogBytes  = 256
)

// stdoutLine logs a line of the server's stdout that was not a message
// (transport.Command.SkippedLine): the first maxStdoutLogged of the
// server's lifetime, cleaned and cut, then that the rest are counted.
func (s *server) stdoutLine(line []byte) {
	n := s.stdoutSkipped.Add(1)
	if n > maxStdoutLogged {
		return
	}
	// Redacted whole before it is cut, so that no part of a secret
	// survives at the cut; the logger redacts again what remains.
	text, _ := s.h.lim.clean(string(line), len(line), true)
	text = s.h.redact(text)
	if len(text) > stdoutLogBytes {
		text = cut(text, stdoutLogBytes)
	}
	s.log.Info("server stdout: skipped a line that is not a JSON-RPC message", "line", text, "bytes", len(line))
	if n == maxStdoutLogged {
		s.log.Info("server stdout: further lines that are not messages are counted, not logged (see its status)")
	}
}

// cleanedPrompts scans and cleans a listing of a server's prompts (scanned
// as listed, scan.go), leaving out those that cannot be offered, and
// records what changed and what the scan found.
func (s *server) cleanedPrompts(ps []*mcp.Prompt) []*mcp.Prompt {
	return cleanListing(s, "prompts", FindingPrompt, "prompt", ps, s.h.lim.cleanPrompt,
		func(p *mcp.Prompt) string { return p.Name }, func(p *mcp.Prompt) string { return shownName(p.Name, s.h.lim) }, promptTexts)
}

func (s *server) cleanedResources(rs []*mcp.Resource) []*mcp.Resource {
	return cleanListing(s, "resources", FindingResource, "resource", rs, s.h.lim.cleanResource,
		func(r *mcp.Resource) string { return r.URI }, func(r *mcp.Resource) string { return shown(r.URI) }, resourceTexts)
}

func (s *server) cleanedTemplates(ts []*mcp.ResourceTemplate) []*mcp.ResourceTemplate {
	return cleanListing(s, "resource templates", FindingTemplate, "resource template", ts, s.h.lim.cleanTemplate,
		func(t *mcp.ResourceTemplate) string { return t.URITemplate }, func(t *mcp.ResourceTemplate) string { return shown(t.URITemplate) }, templateTexts)
}

func cleanListing[T any](s *server, kind, findingKind, one string, items []*T, clean func(*T) (*T, string, string),
	id, shownID func(*T) string, texts func(*T) []toolscan.Text) []*T {
	out := items[:0:0]
	var notes []string
	sc := declScan{kind: findingKind}
	for _, it := range items {
		if it == nil {
			continue
		}
		// Scanned before cleaning, which deletes what hides an
		// instruction.
		held := s.scanDeclared(&sc, id(it), shownID(it), texts(it))
		c, note, refused := clean(it)
		if refused == "" {
			refused = held
		}
		if refused != "" {
			notes = append(notes, fmt.Sprintf(`%s "%s" not offered: %s`, one, shown(id(it)), refused))
			continue
		}
		if note != "" {
			notes = append(notes, note)
		}
		out = append(out, c)
	}
	s.setNotes(kind, notes)
	s.setDeclScan(sc)
	return out
}

// Beyond what servers declare, what they send during calls also reaches
// terminals, models and the gateway's clients: error messages, progress
// messages, log messages, elicitation questions. Each is cleaned the same
// way where the host receives it. Tool results and sampling requests are
// content, passed on as they are.

// cleanRequests cleans what a server asks or tells unasked, through the
// go-sdk (the progress taps clean what they route themselves).
func (s *server) cleanRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ElicitRequest:
			if p := s.h.lim.cleanElicit(r.Params); p != r.Params {
				cp := *r
				cp.Params = p
				req = &cp
			}
		case *mcp.LoggingMessageRequest:
			if p := s.h.lim.cleanLog(r.Params); p != r.Params {
				cp := *r
				cp.Params = p
				req = &cp
			}
		}
		return next(ctx, method, req)
	}
}

// cleanElicit cleans an elicitation question: its message and the titles
// and descriptions of the form it asks for, which a user reads.
func (l *limits) cleanElicit(p *mcp.ElicitParams) *mcp.ElicitParams {
	if p == nil {
		return nil
	}
	msg, _ := l.cleanText(p.Message, l.desc)
	var sc schemaChange
	schema := l.cleanSchema(p.RequestedSchema, 0, &sc)
	if msg == p.Message && !sc.changed {
		return p
	}
	cp := *p
	cp.Message, cp.RequestedSchema = msg, schema
	return &cp
}

// cleanLog cleans a server's log message: its logger's name, and its data
// when that is text (structured data is JSON for whoever shows it).
func (l *limits) cleanLog(p *mcp.LoggingMessageParams) *mcp.LoggingMessageParams {
	if p == nil {
		return nil
	}
	logger, _ := l.cleanLine(p.Logger)
	text, isText := p.Data.(string)
	cleaned := text
	if isText {
		// Not cut: log data is not shown to models, and a stack trace is
		// worth its length (the message bound holds).
		cleaned, _ = l.clean(text, len(text), false)
	}
	if logger == p.Logger && cleaned == text {
		return p
	}
	cp := *p
	cp.Logger = logger
	if isText {
		cp.Data = cleaned
	}
	return &cp
}

// cleanProgress cleans a progress notification's message: one line,
// within the description bound.
func (l *limits) cleanProgress(p *mcp.ProgressNotificationParams) *mcp.ProgressNotificationParams {
	msg, _ := l.clean(p.Message, l.desc, true)
	if msg == p.Message {
		return p
	}
	cp := *p
	cp.Message = msg
	return &cp
}
