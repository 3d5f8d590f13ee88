package host

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// changed reports a change to Options.OnChange.
func (h *Host) changed(c Change) {
	if h.opts.OnChange != nil {
		h.opts.OnChange(c)
	}
}

// refreshTools re-reads a server's tools after it announced a change, and
// installs a new catalog. Calls in flight keep the entry they looked up.
func (s *server) refreshTools() {
	session := s.current()
	if session == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	tools, err := s.listTools(ctx, session)
	if err != nil {
		s.log.Warn("re-reading tools after list_changed failed; keeping the old list", "err", s.h.redact(err.Error()))
		return
	}
	s.mu.Lock()
	if s.state != StateReady {
		s.mu.Unlock()
		return
	}
	s.tools = tools
	s.mu.Unlock()
	s.h.catalogMu.Lock()
	s.h.rebuildCatalog()
	s.h.catalogMu.Unlock()
	s.log.Info("tools changed", "tools", len(tools))
	s.h.changed(Change{Server: s.cfg.ID, Kind: ToolsChanged})
}

// logMessage routes a server's log message to the call it belongs to, else
// to Options.Log, else to the logger.
func (s *server) logMessage(ctx context.Context, req *mcp.LoggingMessageRequest) {
	if c := s.route(ctx, func(c *call) bool { return c.opts.Log != nil }); c != nil {
		c.opts.Log(s.cfg.ID, req.Params)
		return
	}
	if f := s.h.opts.Log; f != nil {
		f(s.cfg.ID, req.Params)
		return
	}
	s.log.Info("server log", "level", req.Params.Level, "logger", req.Params.Logger, "data", fmt.Sprint(req.Params.Data))
}

// callMiddleware answers a server's roots/list from the calls in flight
// when they have Roots handlers (the gateway forwards it to its clients,
// see roots); otherwise the SDK answers from the configured roots. It
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
		case "elicitation/create":
			r, ok := req.(*mcp.ElicitRequest)
			if !ok || r.Params == nil {
				break
			}
			if c := s.route(ctx, func(c *call) bool { return c.opts.Elicitation != nil }); c != nil && c.opts.PassThrough {
				return c.opts.Elicitation(ctx, s.cfg.ID, r.Params)
			}
		}
		return next(ctx, method, req)
	}
}

// Subscribe subscribes to updates of a resource of the named server; they
// arrive at Options.OnResourceUpdated. A server that does not offer
// subscriptions (it did not declare resources.subscribe, or does not
// implement resources/subscribe) sends no updates: Subscribe returns nil
// without asking it, and none arrive.
func (h *Host) Subscribe(ctx context.Context, serverID, uri string) error {
	_, err := request(h, ctx, serverID, "resources/subscribe", uri, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		if !declares(cs, canSubscribe) {
			return struct{}{}, nil
		}
		return struct{}{}, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if notImplemented(err) {
		return nil
	}
	return err
}

// Unsubscribe ends a subscription made with Subscribe.
func (h *Host) Unsubscribe(ctx context.Context, serverID, uri string) error {
	_, err := request(h, ctx, serverID, "resources/unsubscribe", uri, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		if !declares(cs, canSubscribe) {
			return struct{}{}, nil
		}
		return struct{}{}, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	if notImplemented(err) {
		return nil
	}
	return err
}

func canSubscribe(c *mcp.ServerCapabilities) bool { return c.Resources != nil && c.Resources.Subscribe }

// declares reports whether the server declared what has looks for; a
// server that sent no capabilities is asked anyway.
func declares(cs *mcp.ClientSession, has func(*mcp.ServerCapabilities) bool) bool {
	init := cs.InitializeResult()
	return init == nil || init.Capabilities == nil || has(init.Capabilities)
}

// completionsCapabilityVersion is the first protocol version with the
// completions capability: an older server offers completion/complete
// without declaring it.
const completionsCapabilityVersion = "2025-03-26"

// Complete asks the named server for completions of a prompt or resource
// template argument. A server that does not offer completions (it declared
// no completions capability under a protocol version that has one, or does
// not implement completion/complete) has none: the result is empty.
func (h *Host) Complete(ctx context.Context, serverID string, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	res, err := request(h, ctx, serverID, "completion/complete", "", func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CompleteResult, error) {
		init := cs.InitializeResult()
		if init != nil && init.ProtocolVersion >= completionsCapabilityVersion && !declares(cs, func(c *mcp.ServerCapabilities) bool { return c.Completions != nil }) {
			return noCompletions(), nil
		}
		return cs.Complete(ctx, p)
	})
	if notImplemented(err) {
		return noCompletions(), nil
	}
	return res, err
}

func noCompletions() *mcp.CompleteResult {
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
}

// SetLoggingLevel sets the log level of every ready server that has logging
// (one that does not implement logging/setLevel is left alone). A session
// of 2026-07-28 or later is not asked: that generation removed the method
// (a level travels with each request, in _meta), and its servers refuse
// it.
func (h *Host) SetLoggingLevel(ctx context.Context, level mcp.LoggingLevel) error {
	_, err := collect(h, ctx, "logging/setLevel",
		func(c *mcp.ServerCapabilities) bool { return c.Logging != nil },
		func(ctx context.Context, s *server, cs *mcp.ClientSession) ([]struct{}, error) {
			if init := cs.InitializeResult(); init != nil && init.ProtocolVersion >= InputRequiredVersion {
				return nil, nil
			}
			return nil, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
		})
	return err
}

// Ping pings the named server. A server that answers that it does not
// implement ping has answered all the same: it is alive, and Ping returns
// nil.
func (h *Host) Ping(ctx context.Context, serverID string) (time.Duration, error) {
	start := time.Now()
	_, err := request(h, ctx, serverID, "ping", "", func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, h.ping(ctx, cs)
	})
	return time.Since(start), err
}

// ping asks whether the server is there. An answer of "method not found"
// is an answer: the server just does not implement ping, which is
// optional, and 2026-07-28 removed it. A ping on a session of that
// generation carries the per-request _meta every request of it must
// (without it a server refuses the request, 400 over HTTP, and a healthy
// server would look dead; the go-sdk v1.8.0 client does not add it to
// ping), so that a conforming server answers -32601.
func (h *Host) ping(ctx context.Context, cs *mcp.ClientSession) error {
	var p *mcp.PingParams
	if init := cs.InitializeResult(); init != nil && init.ProtocolVersion >= InputRequiredVersion {
		p = &mcp.PingParams{Meta: mcp.Meta{
			mcp.MetaKeyProtocolVersion:    init.ProtocolVersion,
			mcp.MetaKeyClientInfo:         h.opts.ClientInfo,
			mcp.MetaKeyClientCapabilities: map[string]any{}, // a ping needs none
		}}
	}
	err := cs.Ping(ctx, p)
	if notImplemented(err) {
		return nil
	}
	return err
}
