package host

// Dialing a server: one go-sdk client per connection, over the transport
// its configuration names, with the legacy SSE fallback.

import (
	"context"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/transport"
)

// withoutValues is a context's deadline and cancellation without its
// values. A connection outlives the request that may have opened it (a
// lazy start, a reconnect, the 2026-07-28 connection of generation.go) and
// takes nothing of it: the go-sdk's server keeps a downstream request's
// protocol version in the request's context under the very key its client
// reads for the MCP-Protocol-Version header of a connection's first POST
// (and its Streamable HTTP connection keeps the values of the context it
// was opened on for its lifetime). A gateway request of a 2026-07-28
// client then opened upstream connections with an initialize under a
// 2026-07-28 header, which a stateful server refuses ("protocol version
// "2026-07-28" is not supported by this server").
type withoutValues struct{ context.Context }

func (withoutValues) Value(any) any { return nil }

func (s *server) dial(ctx context.Context, rs config.Server) (*mcp.ClientSession, error) {
	return s.dialAs(ctx, rs, false)
}

// dialAs connects to the server: its own connection, or (inputRequired) a
// 2026-07-28 one that returns input-required results (generation.go).
func (s *server) dialAs(ctx context.Context, rs config.Server, inputRequired bool) (*mcp.ClientSession, error) {
	ctx = withoutValues{ctx}
	client := s.newClient(inputRequired)
	sopts := s.h.sessionOptions()
	if inputRequired {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: InputRequiredVersion}
	}
	if inputRequired {
		// Its roots are asked with input requests, which the caller
		// answers (generation.go).
		if len(rs.Roots) > 0 {
			roots := make([]*mcp.Root, len(rs.Roots))
			for i, r := range rs.Roots {
				roots[i] = &mcp.Root{URI: r}
			}
			client.AddRoots(roots...)
		}
	} else {
		s.adoptRoots(client) // the configured roots, or the host's one client's (roots.go)
	}
	switch rs.Transport {
	case config.TransportStdio:
		var stderr io.Writer = &lineLogger{log: s.log, red: s.h.red, lines: s.stderrLine}
		if !inputRequired {
			s.stderr = transport.NewTailBuffer(stderrTailBytes)
			stderr = io.MultiWriter(s.stderr, stderr)
		}
		cmd := &transport.Command{
			Path:            rs.Command,
			Args:            rs.Args,
			Env:             transport.MinimalEnv(rs.Env),
			Dir:             rs.Cwd,
			Stderr:          stderr,
			MaxMessageBytes: s.h.opts.MaxMessageBytes,
			SkippedLine:     s.stdoutLine,
			RefusedMessage:  s.refusedMessage,
		}
		if _, ok := packageRunner(rs.Command, rs.Args); ok {
			// Stopped while it installs, it must not be killed mid-install
			// (install.go).
			cmd.InstallGrace = installStopGrace
		}
		if !inputRequired {
			// For the start's deadline (install.go) and its errors.
			s.mu.Lock()
			s.starting = cmd
			s.mu.Unlock()
			s.envKeys.Store(envKeys(cmd.Env))
		}
		session, err := client.Connect(ctx, s.tap(cmd), sopts)
		if err == nil && !inputRequired {
			s.mu.Lock()
			s.pid = cmd.Pid()
			iso, _ := cmd.Isolation()
			s.iso = iso.String()
			s.mu.Unlock()
		}
		s.noteIsolation(cmd)
		return session, err
	case config.TransportHTTP:
		rec := &statusRecorder{progress: s.h}
		t := &mcp.StreamableClientTransport{
			Endpoint:     rs.URL,
			HTTPClient:   s.httpClient(rs, rec),
			MaxEventSize: s.h.opts.MaxMessageBytes,
		}
		if rs.OAuth != nil {
			oh, err := s.oauthHandler(rs)
			if err != nil {
				return nil, err
			}
			t.OAuthHandler = oh
		}
		// Not s.tap: wrapping the SDK's Streamable HTTP connection would
		// hide its unexported session hooks (the standalone stream and the
		// protocol-version header); its progress is read from the response
		// bodies instead (see sseProgressTap).
		session, err := client.Connect(ctx, t, sopts)
		if err == nil {
			if !inputRequired {
				s.legacySSE.Store(false)
			}
			return session, nil
		}
		// The spec's backwards compatibility: a server that answers the
		// initialize POST with 4xx may be an old HTTP+SSE server. The
		// initialize POST is the last one of a failed connect (a
		// 2026-07-28 offer's server/discover probe comes first, and any
		// answer to it makes the SDK fall back to initialize).
		// Not for a server that signs in with OAuth: its 401 is the
		// sign-in's, not an old server's.
		if code := rec.last(); code >= 400 && code < 500 && ctx.Err() == nil && !inputRequired && rs.OAuth == nil {
			s.log.Info("Streamable HTTP refused; trying the legacy SSE transport", "status", code)
			session, err2 := s.dialSSE(ctx, rs, client)
			if err2 == nil {
				return session, nil
			}
			return nil, fmt.Errorf("%w (legacy SSE fallback also failed: %v)", err, err2)
		}
		return nil, err
	case config.TransportSSE:
		return s.dialSSE(ctx, rs, client)
	case TransportInProcess:
		ct, st := mcp.NewInMemoryTransports()
		// The server session ends when the client closes the connection.
		if _, err := s.inproc.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return client.Connect(ctx, s.tap(ct), sopts)
	case config.TransportWebSocket:
		hc, err := s.oauthClient(rs, s.httpClient(rs, nil))
		if err != nil {
			return nil, err
		}
		t := &transport.WebSocket{
			URL:             rs.URL,
			Header:          headerOf(rs.Headers),
			HTTPClient:      hc,
			MaxMessageBytes: int64(s.h.opts.MaxMessageBytes),
			RefusedMessage:  s.refusedMessage,
		}
		return client.Connect(ctx, s.tap(t), sopts)
	}
	return nil, fmt.Errorf("unknown transport %q", rs.Transport)
}

// dialSSE connects client to a legacy HTTP+SSE server, offering at most
// legacySSEVersion.
func (s *server) dialSSE(ctx context.Context, rs config.Server, client *mcp.Client) (*mcp.ClientSession, error) {
	hc, err := s.oauthClient(rs, s.httpClient(rs, nil))
	if err != nil {
		return nil, err
	}
	t := detachedConnect{&mcp.SSEClientTransport{
		Endpoint:     rs.URL,
		HTTPClient:   hc,
		MaxEventSize: s.h.opts.MaxMessageBytes,
	}}
	v := s.h.opts.ProtocolVersion
	if v == "" || v > legacySSEVersion {
		v = legacySSEVersion
	}
	session, err := client.Connect(ctx, s.tap(t), &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err == nil {
		s.legacySSE.Store(true)
	}
	return session, err
}

// legacySSEVersion is the newest protocol version offered over the legacy
// HTTP+SSE transport. 2026-07-28 defines only stdio and Streamable HTTP,
// and a client offering it begins with a server/discover POST that no
// legacy SSE server knows: go-sdk v1.1.0–v1.6.1 answer it 400, which the
// go-sdk's SSE client (v1.8.0) takes for a broken connection, so the
// initialize the spec says to fall back to is never sent. Offering this
// version makes initialize the first request: no probe, no extra round
// trip, for old and new SSE servers alike.
const legacySSEVersion = "2025-11-25"

func (s *server) newClient(inputRequired bool) *mcp.Client {
	o := s.clientOptions()
	if inputRequired {
		// The caller answers input-required results itself; list changes
		// arrive on the server's own connection.
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
		o.ToolListChangedHandler, o.ResourceListChangedHandler, o.PromptListChangedHandler = nil, nil, nil
	}
	c := mcp.NewClient(s.h.opts.ClientInfo, o)
	addTaskMethods(c)
	// Redaction runs first on what arrives (the outermost middleware):
	// nothing a server sends is seen unredacted (redact.go).
	c.AddReceivingMiddleware(s.callMiddleware)
	c.AddReceivingMiddleware(s.redactRequests)
	c.AddSendingMiddleware(s.redactResults)
	// Cleaning (declared.go) runs before redaction: a secret split by
	// invisible characters is whole once they are gone.
	c.AddReceivingMiddleware(s.cleanRequests)
	// Outermost: every request of the server's runs until it is answered,
	// the server withdraws it, or the host closes the session.
	c.AddReceivingMiddleware(s.endWithSession)
	if mw := s.h.opts.ClientMiddleware; mw != nil {
		c.AddSendingMiddleware(mw(s.cfg.ID))
	}
	return c
}

func (s *server) clientOptions() *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
	}
	if len(s.cfg.Roots) > 0 || s.h.opts.AdvertiseRoots {
		// listChanged: Host.SetRoots tells the servers (roots.go).
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	o := &mcp.ClientOptions{
		Capabilities:          caps,
		ElicitationHandler:    s.elicit,
		LoggingMessageHandler: s.logMessage,
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			s.h.spawn(s.refreshTools)
		},
		ResourceListChangedHandler: func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
			s.h.changed(Change{Server: s.cfg.ID, Kind: ResourcesChanged})
		},
		PromptListChangedHandler: func(ctx context.Context, req *mcp.PromptListChangedRequest) {
			s.h.changed(Change{Server: s.cfg.ID, Kind: PromptsChanged})
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			s.h.events.publish(Event{Kind: EventResourceUpdated, Server: s.cfg.ID, Resource: req.Params})
		},
	}
	if s.h.opts.Sampling != nil {
		o.CreateMessageHandler = s.sample
	}
	return o
}

// detachedConnect gives a transport's Connect a context that outlives the
// connect timeout. The go-sdk's SSE client opens its event stream with the
// context passed to Connect, so the connect timeout's cancellation would end
// the session; here ctx bounds only the connecting itself, and the stream
// lives until the connection is closed.
type detachedConnect struct{ mcp.Transport }

func (d detachedConnect) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := d.Transport.Connect(life)
	if !stop() {
		// ctx ended while connecting.
		if conn != nil {
			conn.Close()
		}
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{Connection: conn, cancel: cancel}, nil
}

type cancelOnClose struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
