package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardmcp/switchboard/secret"
)

// endWithSession runs each request the server sends the host (roots,
// sampling, elicitation, ping) on a context that also ends when the host
// closes the session (closeSession) or itself. A server need not withdraw
// a question when its call ends, and whoever answers it (a gateway's
// client, a person at a terminal) need not answer: the go-sdk's
// ClientSession.Close, which waits for these requests, must not wait on
// them.
func (s *server) endWithSession(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cs, ok := req.GetSession().(*mcp.ClientSession)
		if !ok || cs == nil || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		life, release, err := s.h.inbound.Hold(cs)
		if err != nil {
			return nil, fmt.Errorf("%s: switchboard is closing the connection to server %q", method, s.cfg.ID)
		}
		defer release()
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := context.AfterFunc(life, func() { cancel(context.Cause(life)) })
		defer stop()
		return next(ctx, method, req)
	}
}

// closeSession closes one of the server's sessions, having ended the
// requests it made of the host (endWithSession).
func (s *server) closeSession(cs *mcp.ClientSession) error {
	closed := s.h.inbound.End(cs, fmt.Errorf("switchboard closed the connection to server %q", s.cfg.ID))
	defer closed()
	return cs.Close()
}

// changed tells the watchers that a server's list changed.
func (h *Host) changed(c Change) {
	h.events.publish(Event{Kind: EventCatalog, Server: c.Server, Change: c.Kind})
}

// refreshTools re-reads a server's tools after it announced a change, and
// installs a new catalog. Calls in flight keep the entry they looked up.
func (s *server) refreshTools() {
	ctx, cancel := context.WithTimeout(s.h.ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.relist(ctx, "the server announced tools/list_changed"); err != nil && !errors.Is(err, errNotReady) {
		s.log.Warn("re-reading tools after list_changed failed; keeping the old list", "err", s.h.redact(err.Error()))
	}
}

// errNotReady: the server has no session to list on now.
var errNotReady = errors.New("not ready")

// relist re-reads the server's tools, installs a new catalog and tells the
// watchers; on failure the old list stays. why is the history's reason
// (an announced change is noted even when nothing differs; a refresh
// asked for only when something does).
func (s *server) relist(ctx context.Context, why string) error {
	session := s.current()
	if session == nil {
		return errNotReady
	}
	pins := s.pinChecks.Load() // before the list is pinned: storeTools
	tools, err := s.listTools(ctx, session)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.state != StateReady {
		s.mu.Unlock()
		return errNotReady
	}
	was := s.tools
	repin := s.storeTools(tools, pins)
	s.mu.Unlock()
	if repin {
		defer s.h.recheckPins(s)
	}
	if added, removed, changed := toolsDiff(was, tools); why != refreshAsked || added+removed+changed > 0 {
		s.hist.incident(Incident{Kind: IncidentToolsChanged, Reason: why, Added: added, Removed: removed, Changed: changed})
	}
	s.h.catalogMu.Lock()
	s.h.rebuildCatalog()
	s.h.catalogMu.Unlock()
	s.log.Info("tools changed", "tools", len(tools))
	s.h.changed(Change{Server: s.cfg.ID, Kind: ToolsChanged})
	return nil
}

// logMessage routes a server's log message to the call it belongs to, else
// to the watchers (EventLog) and the logger.
func (s *server) logMessage(ctx context.Context, req *mcp.LoggingMessageRequest) {
	if c := s.route(ctx, func(c *call) bool { return c.opts.Log != nil }); c != nil {
		c.opts.Log(s.cfg.ID, req.Params)
		return
	}
	s.h.events.publish(Event{Kind: EventLog, Server: s.cfg.ID, Log: req.Params})
	s.log.Info("server log", "level", req.Params.Level, "logger", req.Params.Logger, "data", fmt.Sprint(req.Params.Data))
}

// callMiddleware answers a server's roots/list from the calls in flight
// when they have Roots handlers (the gateway forwards it to its clients,
// see roots); otherwise the SDK answers from the client's roots, the
// configured ones or the host's one client's (roots.go). It
// hands an elicitation request of a PassThrough call to the call's handler
// as it came, before the SDK's own checks.
func (s *server) callMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "roots/list":
			if res, err, ok := s.roots(ctx); ok {
				if err != nil {
					return nil, err
				}
				return res, nil
			}
			// Outside a call: the SDK answers from the client's roots,
			// once the host's one client's are known (roots.go).
			s.awaitClientRoots(ctx)
		case "elicitation/create":
			r, ok := req.(*mcp.ElicitRequest)
			if !ok || r.Params == nil {
				break
			}
			if c := s.routeAsk(ctx, r.Params.Meta, func(c *call) bool { return c.opts.Elicitation != nil }); c != nil && c.opts.PassThrough {
				res, err := c.opts.Elicitation(ctx, s.cfg.ID, r.Params)
				if err != nil {
					s.noteUnanswered(ctx, c, r.Params, err)
				}
				return res, err
			}
		}
		return next(ctx, method, req)
	}
}

// completionsCapabilityVersion is the first protocol version with the
// completions capability: an older server offers completion/complete
// without declaring it.
const completionsCapabilityVersion = "2025-03-26"

// route finds the call a server's request belongs to: the call whose
// context carries it (2026-07-28 input requests), or the server's only call
// in flight that has a handler.
func (s *server) route(ctx context.Context, has func(*call) bool) *call {
	if c, ok := ctx.Value(callKey{}).(*call); ok && has(c) {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *call
	for c := range s.inflight {
		if has(c) {
			if found != nil {
				return nil // ambiguous
			}
			found = c
		}
	}
	return found
}

// routeAsk finds the call a server's question belongs to: the call whose
// task it names (task.go), else as route does.
func (s *server) routeAsk(ctx context.Context, meta mcp.Meta, has func(*call) bool) *call {
	if c := s.byTask(meta, has); c != nil {
		return c
	}
	return s.route(ctx, has)
}

// received redacts and cleans a question the go-sdk hands a handler. A
// 2025-11-25 server's request has passed the receiving middleware already
// (doing it again changes nothing); a 2026-07-28 server's input requests,
// inside its input-required result, are answered by the go-sdk from the
// handlers without that middleware.
func (s *server) received(p *mcp.ElicitParams) *mcp.ElicitParams {
	if p == nil {
		return nil
	}
	return s.h.lim.cleanElicit(secret.RedactValue(s.h.red, p))
}

func (s *server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if p := s.received(req.Params); p != req.Params {
		cp := *req
		cp.Params = p
		req = &cp
	}
	var meta mcp.Meta
	if req.Params != nil {
		meta = req.Params.Meta
	}
	c := s.routeAsk(ctx, meta, func(c *call) bool { return c.opts.Elicitation != nil })
	var res *mcp.ElicitResult
	var err error
	switch {
	case c != nil:
		res, err = c.opts.Elicitation(ctx, s.cfg.ID, req.Params)
	case s.h.opts.Elicitation != nil:
		res, err = s.h.opts.Elicitation(ctx, s.cfg.ID, req.Params)
	case answerElsewhere(req.Params) != "":
		// Declining is an answer (a gate fails on it); nobody asked.
		err = errNoAnswerer
	default:
		s.log.Info("declining elicitation: no handler", "message", req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	if err != nil {
		s.noteUnanswered(ctx, c, req.Params, err)
	}
	return res, err
}

// MetaKeyAnswerElsewhere, in the _meta of a server's elicitation request,
// says how else the question can be answered (a workflow's gate: the
// `switchboard runs answer` command), and that it must not be declined
// for want of someone to ask: a call whose client cannot answer it (no
// handler, or a client without elicitation behind the gateway) ends in a
// tool error that names that way, and the server is told that nobody
// could answer rather than that the person declined.
const MetaKeyAnswerElsewhere = "switchboard/answer_elsewhere"

// maxAnswerElsewhereBytes bounds the server's text that reaches the
// call's result.
const maxAnswerElsewhereBytes = 512

// errNoAnswerer is what a server whose question must not be declined is
// told when the call has nobody to ask.
var errNoAnswerer = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "elicitation/create: nobody can answer here (the call has no elicitation handler)"}

// answerElsewhere returns the request's MetaKeyAnswerElsewhere, or "".
func answerElsewhere(p *mcp.ElicitParams) string {
	if p == nil {
		return ""
	}
	v, _ := p.Meta[MetaKeyAnswerElsewhere].(string)
	return v
}

// noteUnanswered records on the call a question it could not answer, when
// the question says how else it can be (see MetaKeyAnswerElsewhere). c is
// the call the question was routed to, nil when none had a handler: then
// the call whose request carries it, or the server's only call in flight.
func (s *server) noteUnanswered(ctx context.Context, c *call, p *mcp.ElicitParams, err error) {
	hint := answerElsewhere(p)
	if hint == "" {
		return
	}
	if c == nil {
		if c = s.route(ctx, func(*call) bool { return true }); c == nil {
			return
		}
	}
	// The server's text reaches models and clients: cleaned and bounded
	// like a description (declared.go), the way within a bound of its own.
	hint, _ = s.h.lim.cleanText(s.h.redact(hint), maxAnswerElsewhereBytes)
	why, _ := s.h.lim.cleanText(s.h.redact(fmt.Sprintf("the question %q could not be answered here (%v); %s", p.Message, err, hint)), s.h.lim.desc)
	c.mu.Lock()
	c.unanswered = why
	c.mu.Unlock()
}

func (c *call) unansweredWhy() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unanswered
}

func (s *server) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	// Redacted here too, for a 2026-07-28 server's input request (see
	// received); sampling requests are content, not cleaned.
	if p := secret.RedactValue(s.h.red, req.Params); p != req.Params {
		cp := *req
		cp.Params = p
		req = &cp
	}
	var meta mcp.Meta
	if req.Params != nil {
		meta = req.Params.Meta
	}
	if c := s.routeAsk(ctx, meta, func(c *call) bool { return c.opts.Sampling != nil }); c != nil {
		return c.opts.Sampling(ctx, s.cfg.ID, req.Params)
	}
	return s.h.opts.Sampling(ctx, s.cfg.ID, req.Params)
}
