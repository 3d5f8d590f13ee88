package host

import (
	"regexp"
	"strings"
	"sync"

	"github.com/switchboardmcp/switchboard/secret"
)

// Upstream session ids. A Streamable HTTP server names a session by the
// Mcp-Session-Id it assigns, and whoever holds the id can use the session:
// it is a credential. The go-sdk's errors quote it ("failed to connect
// (session ID: …)" on the 404 of an expired session, "standalone SSE
// request failed (session ID: …)", "mismatching session IDs …"), and a
// legacy SSE server puts its session in the query of the endpoint the
// client posts to (?sessionid=…), which a transport error quotes. The host
// keeps them out of what it writes: every id its sessions get is
// remembered (the last maxSessionIDs), and redact replaces them, and the
// places where those texts put an id, wherever the host redacts (redactErr,
// serverFailure, the logger). A debug line names a session by a short
// prefix of its id.

// maxSessionIDs bounds the ids remembered: a server whose sessions expire
// every few minutes must not grow the host forever. An id older than that
// is still caught where the go-sdk's texts quote it.
const maxSessionIDs = 64

// sessionIDPatterns are where texts put a session id, whatever it is; each
// keeps its first group (and the second's glue) and replaces the id.
var sessionIDPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// "session ID: X" (the go-sdk), "Mcp-Session-Id: X" (a header dump).
	// Brackets are not part of it, so that an id already replaced by
	// [REDACTED] stays as it is.
	{regexp.MustCompile(`(?i)(session[ _-]?id:\s*)[^\s"'()\[\]]+`), "${1}" + secret.Redacted},
	// `mismatching session IDs "X" and "Y"` (the go-sdk).
	{regexp.MustCompile(`(?i)(session[ _-]?ids\s+)"[^"]*"(\s+and\s+)"[^"]*"`), "${1}" + secret.Redacted + "${2}" + secret.Redacted},
	// A legacy SSE endpoint: ?sessionid=X (the go-sdk), ?sessionId=X,
	// ?session_id=X.
	{regexp.MustCompile(`(?i)([?&]session_?id=)[^&#\s"']+`), "${1}" + secret.Redacted},
}

// sessionIDs is the set of upstream session ids the host has seen.
type sessionIDs struct {
	mu  sync.RWMutex
	ids []string // oldest first
}

// minSessionID is the shortest id replaced wherever it appears: a shorter
// one ("1") would garble unrelated text, and is no credential anyway (the
// specification asks for globally unique, cryptographically secure ids).
// The patterns still catch it where the go-sdk's texts quote it.
const minSessionID = 8

// add remembers id ("" for a transport without sessions).
func (s *sessionIDs) add(id string) {
	if len(id) < minSessionID {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, known := range s.ids {
		if known == id {
			return
		}
	}
	if len(s.ids) == maxSessionIDs {
		s.ids = append(s.ids[:0], s.ids[1:]...)
	}
	s.ids = append(s.ids, id)
}

// scrub returns text without session ids.
func (s *sessionIDs) scrub(text string) string {
	s.mu.RLock()
	for _, id := range s.ids {
		if strings.Contains(text, id) {
			text = strings.ReplaceAll(text, id, secret.Redacted)
		}
	}
	s.mu.RUnlock()
	if !strings.Contains(strings.ToLower(text), "session") {
		return text
	}
	for _, p := range sessionIDPatterns {
		text = p.re.ReplaceAllString(text, p.repl)
	}
	return text
}

// shortID names a session in a debug line: enough to tell sessions apart,
// not enough to use one.
func shortID(id string) string {
	if len(id) <= 4 {
		return "…"
	}
	return id[:4] + "…"
}

// redact returns s without any secret the redactor holds or session id.
func (h *Host) redact(s string) string { return h.sessions.scrub(h.red.Redact(s)) }

// noteSession remembers the id of a session just opened to s.
func (s *server) noteSession(id string) {
	if id == "" {
		return
	}
	s.h.sessions.add(id)
	s.log.Debug("session opened", "session", shortID(id))
}
