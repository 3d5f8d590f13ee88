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
		s.log.Warn("re-reading tools after list_changed failed; keeping the old list", "err", s.h.red.Redact(err.Error()))
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

// callMiddleware answers a server's roots/list from the call it belongs to
// when that call has a Roots handler (the gateway forwards it to its own
// client); otherwise the SDK answers from the configured roots. It hands an
// elicitation request of a PassThrough call to the call's handler as it
// came, before the SDK's own checks.
func (s *server) callMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "roots/list":
			if c := s.route(ctx, func(c *call) bool { return c.opts.Roots != nil }); c != nil {
				return c.opts.Roots(ctx, s.cfg.ID)
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
// arrive at Options.OnResourceUpdated.
func (h *Host) Subscribe(ctx context.Context, serverID, uri string) error {
	_, err := request(h, ctx, serverID, "resources/subscribe", uri, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	return err
}

// Unsubscribe ends a subscription made with Subscribe.
func (h *Host) Unsubscribe(ctx context.Context, serverID, uri string) error {
	_, err := request(h, ctx, serverID, "resources/unsubscribe", uri, func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	return err
}

// Complete asks the named server for completions of a prompt or resource
// template argument.
func (h *Host) Complete(ctx context.Context, serverID string, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return request(h, ctx, serverID, "completion/complete", "", func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CompleteResult, error) {
		return cs.Complete(ctx, p)
	})
}

// SetLoggingLevel sets the log level of every ready server that has logging.
func (h *Host) SetLoggingLevel(ctx context.Context, level mcp.LoggingLevel) error {
	_, err := collect(h, ctx, "logging/setLevel",
		func(c *mcp.ServerCapabilities) bool { return c.Logging != nil },
		func(ctx context.Context, s *server, cs *mcp.ClientSession) ([]struct{}, error) {
			return nil, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
		})
	return err
}

// Ping pings the named server.
func (h *Host) Ping(ctx context.Context, serverID string) (time.Duration, error) {
	start := time.Now()
	_, err := request(h, ctx, serverID, "ping", "", func(ctx context.Context, cs *mcp.ClientSession) (struct{}, error) {
		return struct{}{}, cs.Ping(ctx, nil)
	})
	return time.Since(start), err
}
