package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// request sends one request to one server, bounded by its timeout.
func request[R any](h *Host, ctx context.Context, serverID, method, target string, do func(context.Context, *mcp.ClientSession) (R, error)) (R, error) {
	return requestAs(h, ctx, serverID, method, target, false, do)
}

// requestAs is request on the server's own connection, or on its
// 2026-07-28 one (inputRequired; see generation.go).
func requestAs[R any](h *Host, ctx context.Context, serverID, method, target string, inputRequired bool, do func(context.Context, *mcp.ClientSession) (R, error)) (R, error) {
	var zero R
	s, err := h.server(serverID)
	if err != nil {
		return zero, err
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(s.cfg.Timeout, func() { cancel(ErrTimeout) })
	defer timer.Stop()
	stop := context.AfterFunc(s.life, func() { cancel(ErrClosed) })
	defer stop()
	cs, err := s.liveSession(cctx)
	var ir *irConn
	if err == nil && inputRequired {
		if ir, err = s.inputRequiredConn(cctx); ir != nil {
			cs = ir.cs
		}
	}
	if err != nil {
		return zero, &CallError{Server: s.cfg.ID, Method: method, Target: target, Err: h.redactErr(err)}
	}
	start := time.Now()
	r, err := do(cctx, cs)
	if err != nil {
		return zero, &CallError{Server: s.cfg.ID, Method: method, Target: target, Duration: time.Since(start), Timeout: s.cfg.Timeout, Err: h.redactErr(h.callFailure(s, ir, ctx, cctx, err))}
	}
	return r, nil
}

// collect asks every ready server that has the capability, concurrently.
// A server that did not declare the capability, or answers that it does
// not implement the method, has none: not an error.
func collect[T any](h *Host, ctx context.Context, method string, has func(*mcp.ServerCapabilities) bool, list func(context.Context, *server, *mcp.ClientSession) ([]T, error)) ([]T, error) {
	servers := h.list()
	results := make([][]T, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		cs := s.current()
		if cs == nil {
			continue // not ready: Servers() says why
		}
		if init := cs.InitializeResult(); init != nil && init.Capabilities != nil && !has(init.Capabilities) {
			continue
		}
		wg.Go(func() {
			results[i], errs[i] = request(h, ctx, s.cfg.ID, method, "", func(ctx context.Context, cs *mcp.ClientSession) ([]T, error) {
				return list(ctx, s, cs)
			})
			if notImplemented(errs[i]) {
				s.log.Debug("the server does not implement an optional method: none", "method", method)
				results[i], errs[i] = nil, nil
			}
		})
	}
	wg.Wait()
	var out []T
	for _, r := range results {
		out = append(out, r...)
	}
	return out, errors.Join(errs...)
}

// notImplemented reports whether err is a server's answer that it does not
// implement the method (JSON-RPC -32601, "method not found"). For an
// optional method that means the server has none of what was asked, which
// is not a failure.
func notImplemented(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}
