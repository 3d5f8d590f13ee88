// Package gateway makes Switchboard an MCP server: it re-publishes the
// tools, resources and prompts of many upstream servers, connected through a
// [host.Host], as one MCP endpoint, with the host's naming, allowlists,
// validation and timeouts applied on the way.
//
// A client through the gateway can do what it could do directly: call tools
// with progress and cancellation, answer the upstreams' elicitation, sampling
// and roots requests (forwarded to the downstream client that made the call),
// read and subscribe to resources, get prompts, ask for completions, and
// learn of list changes. Each downstream session is isolated: its progress,
// requests, subscriptions and log messages are its own.
//
// Both protocol generations are served. A 2025-11-25 downstream client is
// asked directly (elicitation/create during the call); a 2026-07-28 client
// gets an input-required result and answers by retrying the call with its
// responses, while the upstream call waits (see [Gateway] for the bounds).
//
// Each call names its caller for the host from how the request was
// authenticated (an OAuth subject, the owner, the session), which the host
// passes to in-process servers alone: a published workflow scopes a
// client's idempotency key to it (see caller.go).
//
// The [Gateway.Server] is an ordinary *mcp.Server: serve it over stdio with
// its Run method (on an [OwnerContext]: the stdio client is the owner),
// or over HTTP with [Gateway.Handler] (Streamable HTTP at /mcp, legacy
// HTTP+SSE at /sse, WebSocket at /ws), or mount it with [Gateway.Mount]
// on the [Guard] of a listener that serves other faces too: the one check
// in front of every route (guard.go), and [Grant], the one reading of the
// OAuth policy, for every face.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/transport"
)

// Options configures a [Gateway]. Nil means defaults.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Name and Version are what the gateway calls itself to its clients.
	Name, Version string
	// Instructions are sent to clients in initialize.
	Instructions string
	// Servers limits which upstream servers are exposed; nil means all.
	Servers []string
	// InputTimeout bounds how long an upstream call waits for a 2026-07-28
	// client to come back with the input it asked for. Default 10 minutes.
	InputTimeout time.Duration
	// OnlyClient, when set, is what the gateway's one and only client
	// declared, known before Start: `serve --stdio` reads its client's
	// initialize first. The upstreams are then offered sampling and roots
	// only if that client declared them, so that no server asks for what
	// no client of the gateway can answer. Nil (HTTP, where clients come
	// and go after the upstreams have been initialized) offers both, and
	// each request goes to its calling client only if that client declared
	// the capability; otherwise the upstream gets "method not found".
	OnlyClient *mcp.ClientCapabilities
	// MaxWaitingCalls bounds the 2026-07-28 calls bridged to an older
	// upstream that wait for their client to come back with the input
	// asked for (each holds an upstream call for up to InputTimeout, and a
	// client need not come back). A question beyond it is refused: the
	// upstream's request fails. Default [DefaultMaxSessions]; `serve`
	// passes [gateway] max_sessions, as such a call is state held for a
	// client between its requests, like a session.
	MaxWaitingCalls int
	// MaxRequests bounds the requests of downstream clients in flight at
	// once, over every transport and session (a 2026-07-28 client's
	// stateless POST is a request of no session): the go-sdk runs each
	// call of a session on a goroutine of its own, and a client could
	// otherwise hold any number of upstream calls open. A request beyond
	// it is refused at once with a JSON-RPC error naming the bound.
	// subscriptions/listen streams are not counted (MaxSessions bounds
	// them). Default [DefaultMaxRequests]; `serve` passes [gateway]
	// max_requests.
	MaxRequests int
	// HideTools are host tool names left out of the gateway's tools (the
	// tools a published workflow with hide_tools calls): clients neither
	// list nor call them, while the host still offers them to its own
	// callers (the workflow engine).
	HideTools []string
	// Policy, for clients that come with an OAuth token
	// ([HTTPOptions.OAuth]), says which servers and tools each may list and
	// call ([gateway.auth.policy]); nil lets every token see everything.
	// Clients without a token (stdio, the local socket, auth_token) are
	// the owner's and see everything.
	Policy []config.AuthPolicy
	// Replica names this gateway among the replicas of one deployment
	// (`switchboard serve` on a shared PostgreSQL: an id per process). The
	// requestStates it issues for the calls it bridges (gateway/input.go)
	// name it, so that a retry reaching another replica is sent here
	// (Peers).
	Replica string
	// StateKey signs those requestStates (HMAC-SHA256). Replicas are given
	// the same key (the state store's, made once), so that each tells a
	// requestState another issued from a forged or altered one. Nil: a
	// random key of this gateway's own.
	StateKey []byte
	// StateKeyFallbacks also verify requestStates, and never sign one:
	// the keys being rotated in or out ([state] encryption_key_fallbacks).
	StateKeyFallbacks [][]byte
	// Peers returns the address (host:port, plain HTTP) at which replica
	// serves, or an error when it is gone, for a 2026-07-28 retry over
	// Streamable HTTP whose requestState names another replica: the retry
	// is forwarded there, as it came (its Authorization header included),
	// bounded in size and time. Never an address from the request: only
	// the replica's name comes from it, under the signature. Nil: such a
	// retry is refused with an error naming the replica.
	Peers func(ctx context.Context, replica string) (address string, err error)
	// Middleware wraps every request the gateway receives, outermost (the
	// first the outermost of them): it sees a request as it arrives and
	// the answer as it leaves, redacted (telemetry: a span and a duration
	// per operation, the trace context read from _meta).
	Middleware []mcp.Middleware
}

// Gateway is an MCP server over a host's servers. Its methods are safe for
// concurrent use.
type Gateway struct {
	h    *host.Host
	opts Options
	log  *slog.Logger
	srv  *mcp.Server
	red  *secret.Redactor // the host's, for the face (redact.go)

	ctx    context.Context // the gateway's lifetime
	cancel context.CancelFunc

	mu        sync.Mutex
	logLevel  mcp.LoggingLevel         // the most verbose level set upstream
	tools     map[string]bool          // published tool names
	resources map[string]string        // published URI -> server
	templates map[string]string        // published URI template -> server
	prompts   map[string]promptRoute   // published name -> upstream
	pending   map[string]*pendingCall  // 2026-07-28 calls awaiting input
	waiting   int                      // of them, those that have asked (Options.MaxWaitingCalls)
	syncing   map[host.ChangeKind]bool // a resync is running
	dirty     map[host.ChangeKind]bool // another resync is wanted
	synced    []chan struct{}          // closed when no resync runs (Sync)
	required  chan struct{}            // closed once every required server is up (awaitStart)
	reqOnce   sync.Once                // for required
	exposed   map[string]bool          // nil: every server
	hidden    map[string]bool          // tool names left out (Options.HideTools)
	wg        sync.WaitGroup
	closeOnce sync.Once
	ownsHost  bool // made by Start: Close closes the host too

	// Upstream resource subscriptions, by the downstream sessions that
	// hold them, and what each session holds (resources.go); g.mu.
	subs     map[subKey]map[*mcp.ServerSession]bool
	sessSubs map[*mcp.ServerSession]map[subKey]bool
	// The one client's roots (roots.go): rootsGen counts the changes and
	// rootsClosed says Close has begun (rootsMu); rootsApply orders their
	// setting on the host.
	rootsMu     sync.Mutex
	rootsGen    uint64
	rootsClosed bool
	rootsApply  sync.Mutex

	peerTransport *http.Transport // retries forwarded to other replicas (replicas.go)
	stateSigner   *secret.Signer  // signs the requestStates of bridged calls (Options.StateKey)

	// Requests from downstream clients: each runs on a context that ends
	// with requests (Shutdown's deadline, or Close), and is counted so
	// that Shutdown knows when they are done.
	requests     context.Context
	endRequests  context.CancelCauseFunc
	reqMu        sync.Mutex
	inflight     int
	idle         chan struct{} // closed when inflight drops to 0; nil while it is 0
	shuttingDown bool

	// ends ties each downstream session's requests, and the questions
	// forwarded to its client, to the session: ending a session (DELETE,
	// eviction) ends them first, for the go-sdk's ServerSession.Close
	// waits for them. Its contexts end with requests too.
	ends *transport.SessionEnds[*mcp.ServerSession]
}

type promptRoute struct{ server, name string }

type subKey struct{ server, uri string }

// Start starts a host over servers (see [host.Start]), made with
// [HostOptions], and a gateway over it. hostOpts may be nil. ctx bounds the
// start only. The gateway owns that host: Close stops both.
func Start(ctx context.Context, servers []config.Server, hostOpts *host.Options, opts *Options) (*Gateway, error) {
	h, err := host.Start(ctx, servers, HostOptions(hostOpts, opts))
	if err != nil {
		return nil, err
	}
	g, err := New(h, opts)
	if err != nil {
		h.Close()
		return nil, err
	}
	g.ownsHost = true
	return g, nil
}

// HostOptions returns a copy of o (nil means none) with what a gateway
// needs of its host; make the host a gateway will publish with them.
//
//   - Upstreams are offered protocol 2025-11-25 unless o says otherwise:
//     under it a server asks for elicitation, sampling and roots during the
//     call, and the gateway forwards such questions to a client of either
//     generation (to a 2026-07-28 client as an input-required result).
//     Under 2026-07-28 a server may only ask with input-required results,
//     and servers written against the older API (the go-sdk's own
//     conformance server among them) then fail their tools for every
//     client, while their direct clients speaking 2025-11-25 succeed. A
//     server that speaks only 2026-07-28 still answers with it.
//   - Sampling and roots are advertised to upstreams, since the gateway
//     forwards them to the calling client, unless opts.OnlyClient lacks
//     them. (The host always advertises elicitation; for a client without
//     it, the upstream gets "method not found".) With one client, its
//     roots answer outside calls too (roots.go); an OnlyClient with roots
//     holds an upstream's first such request until they are known.
func HostOptions(o *host.Options, opts *Options) *host.Options {
	ho := host.Options{}
	if o != nil {
		ho = *o
	}
	var only *mcp.ClientCapabilities
	if opts != nil {
		only = opts.OnlyClient
	}
	if ho.Sampling == nil && (only == nil || only.Sampling != nil) {
		ho.Sampling = func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: "sampling/createMessage: no client of switchboard's gateway to ask: the request came outside a call, or during calls of several clients at once, which protocol 2025-11-25 cannot tell apart"}
		}
	}
	ho.AdvertiseRoots = ho.AdvertiseRoots || only == nil || only.RootsV2 != nil
	// The one client's roots answer outside calls (roots.go): a server
	// that asks at initialize waits for them.
	ho.ClientRoots = ho.ClientRoots || (only != nil && only.RootsV2 != nil)
	if ho.ProtocolVersion == "" {
		ho.ProtocolVersion = UpstreamProtocolVersion
	}
	return &ho
}

// New publishes the servers of h, a host made with [HostOptions], as one MCP
// server. h may be started already or not: the gateway publishes what h
// offers now, and follows h's events (a server that joins, a list that
// changes) from then on. Closing the gateway does not close h.
func New(h *host.Host, opts *Options) (*Gateway, error) {
	g := &Gateway{
		h:         h,
		red:       h.Redactor(), // the face keeps from its clients the secrets the host resolved
		tools:     map[string]bool{},
		resources: map[string]string{},
		templates: map[string]string{},
		prompts:   map[string]promptRoute{},
		subs:      map[subKey]map[*mcp.ServerSession]bool{},
		sessSubs:  map[*mcp.ServerSession]map[subKey]bool{},
		pending:   map[string]*pendingCall{},
		syncing:   map[host.ChangeKind]bool{},
		dirty:     map[host.ChangeKind]bool{},
		required:  make(chan struct{}),
	}
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Name == "" {
		g.opts.Name = "switchboard"
	}
	if g.opts.Version == "" {
		g.opts.Version = host.Version
	}
	if g.opts.InputTimeout <= 0 {
		g.opts.InputTimeout = 10 * time.Minute
	}
	if g.opts.MaxWaitingCalls <= 0 {
		g.opts.MaxWaitingCalls = DefaultMaxSessions
	}
	if g.opts.MaxRequests <= 0 {
		g.opts.MaxRequests = DefaultMaxRequests
	}
	if len(g.opts.StateKey) == 0 {
		g.opts.StateKey = make([]byte, 32)
		rand.Read(g.opts.StateKey)
	}
	g.stateSigner = secret.NewSigner(g.opts.StateKey, g.opts.StateKeyFallbacks...)
	g.peerTransport = newPeerTransport()
	g.hidden = map[string]bool{}
	for _, name := range g.opts.HideTools {
		g.hidden[name] = true
	}
	if g.opts.Servers != nil {
		g.exposed = map[string]bool{}
		for _, id := range g.opts.Servers {
			g.exposed[id] = true
		}
	}
	g.log = g.opts.Logger
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.requests, g.endRequests = context.WithCancelCause(g.ctx)
	g.ends = transport.NewSessionEnds[*mcp.ServerSession](g.requests)

	g.srv = mcp.NewServer(&mcp.Implementation{Name: g.opts.Name, Version: g.opts.Version}, &mcp.ServerOptions{
		Instructions:       g.opts.Instructions,
		Logger:             nil,
		CompletionHandler:  g.complete,
		SubscribeHandler:   g.subscribe,
		UnsubscribeHandler: g.unsubscribe,
		// The roots of the one client reach the upstreams outside calls
		// too (roots.go).
		InitializedHandler:      g.sessionInitialized,
		RootsListChangedHandler: g.rootsChanged,
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
	})

	// The policy inside awaitStart: a hidden tool waits for the start as
	// one that does not exist does, then fails the same way.
	g.srv.AddReceivingMiddleware(olderGenerationDiscover, g.loggingMiddleware, ownIdentity, g.awaitStart, g.policyMiddleware)
	// Everything a request does runs on its context (see Shutdown).
	g.srv.AddReceivingMiddleware(g.requestMiddleware)
	// Last, so outermost: nothing leaves unredacted (redact.go).
	g.srv.AddReceivingMiddleware(g.redactResponses)
	g.srv.AddSendingMiddleware(g.redactOutgoing)
	if len(g.opts.Middleware) > 0 {
		g.srv.AddReceivingMiddleware(g.opts.Middleware...)
	}

	// An upstream that wants roots outside a call gets the one client's
	// (roots.go).
	h.OnRootsWanted(g.followRoots)

	// Watch first, then publish what there is, before New returns (a
	// client may call at once): a change in between is both published and
	// seen.
	w := h.Watch(0)
	g.syncTools()
	ctx, cancel := context.WithTimeout(g.ctx, time.Minute)
	defer cancel()
	if err := g.syncResources(ctx); err != nil {
		g.log.Warn("listing upstream resources", "err", err)
	}
	if err := g.syncPrompts(ctx); err != nil {
		g.log.Warn("listing upstream prompts", "err", err)
	}
	g.checkRequired()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.follow(w)
	}()
	return g, nil
}

// follow republishes what the host's events say changed, until the
// gateway or the host closes.
func (g *Gateway) follow(w *host.Watcher) {
	defer w.Close()
	for ev := range w.Events(g.ctx) {
		switch ev.Kind {
		case host.EventCatalog:
			g.resync(ev.Change)
			g.checkRequired() // the catalog has the server that changed

		case host.EventResourceUpdated:
			g.resourceUpdated(ev.Server, ev.Resource)
		case host.EventDropped:
			g.checkRequired()
			// Changes were lost: republish everything.
			for _, k := range []host.ChangeKind{host.ToolsChanged, host.ResourcesChanged, host.PromptsChanged} {
				g.resync(k)
			}
		}
	}
}

// MetaKeyTimeout is the _meta key of a tools/call that bounds the call by
// its own timeout instead of its server's (host.CallOptions.Timeout), as a
// number of milliseconds: `switchboard call --timeout` through a serve. It
// is honoured only on a handler made with HTTPOptions.Local, or a request
// on a LocalContext (the daemon's owner-only socket): over the network the
// operator's timeouts stand.
const MetaKeyTimeout = "switchboard/timeout_ms"

// localTimeout is the call's own timeout, when it asks for one and came
// through a Local handler or on a LocalContext.
func localTimeout(req *mcp.CallToolRequest) (time.Duration, bool) {
	if req.Extra == nil || req.Extra.Header.Get(localHeader) == "" {
		return 0, false
	}
	ms, ok := req.Params.GetMeta()[MetaKeyTimeout].(float64)
	if !ok || ms <= 0 || ms > float64(maxLocalTimeout/time.Millisecond) {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// maxLocalTimeout bounds a call's own timeout: a day, far beyond any call
// a person waits for, short of a duration's overflow.
const maxLocalTimeout = 24 * time.Hour

// MetaKeyError is the _meta key of a tool result the gateway made from a
// call that failed on the way (invalid arguments, a timeout, a server
// unavailable) rather than in the tool: its value is the error as a
// [host.ErrorJSON], which host.ErrorJSON.Err turns back into the error the
// host returned.
const MetaKeyError = "switchboard/error"

// UpstreamProtocolVersion is the version the gateway offers upstreams
// unless host.Options.ProtocolVersion says otherwise (see HostOptions).
// The CLI's own hosts offer it too, so that a command's output is the same
// whether a serve's host answers it or its own.
const UpstreamProtocolVersion = "2025-11-25"

// Host returns the host the gateway serves.
func (g *Gateway) Host() *host.Host { return g.h }

// Server returns the gateway's MCP server. Serve it over stdio with
// g.Server().Run(OwnerContext(ctx), &mcp.StdioTransport{}) (its client is
// the owner: see OwnerContext).
func (g *Gateway) Server() *mcp.Server { return g.srv }

// ErrShuttingDown is the cause of the requests a shutdown cancels, and the
// error of requests that arrive during one.
var ErrShuttingDown = errors.New("switchboard is shutting down")

// codeShuttingDown is the JSON-RPC error code of a request refused during a
// shutdown: in the range JSON-RPC leaves to implementations.
const codeShuttingDown = -32001

// DefaultMaxRequests is the default [Options.MaxRequests]: four requests
// at once for each of DefaultMaxSessions sessions (a benchmark's client
// keeps 16 in flight on one), a few megabytes of goroutines, where an
// unbounded client could hold memory and upstream calls without end.
const DefaultMaxRequests = config.DefaultGatewayMaxRequests

// codeTooManyRequests is the JSON-RPC error code of a request refused past
// Options.MaxRequests.
const codeTooManyRequests = -32000

// Shutdown stops the gateway gracefully: requests that arrive from now on
// are refused with ErrShuttingDown, and those in flight get until ctx is
// done to finish. Then the ones left are cancelled with ErrShuttingDown as
// the cause, which cancels their upstream calls (the upstream gets
// notifications/cancelled), as are 2026-07-28 calls waiting for their
// client's input; Shutdown returns once they have returned, or after
// cancelledGrace more. It returns ctx's error if it had to cancel
// anything. Requests are what is counted, not connections: a call over
// legacy SSE or WebSocket, whose HTTP request is answered (or was
// upgraded) long before, gets the grace as well. Shutdown does not end
// sessions or stop the host; Close does, after.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.reqMu.Lock()
	g.shuttingDown = true
	idle := g.idleLocked()
	g.reqMu.Unlock()
	select {
	case <-idle:
		g.endRequests(ErrShuttingDown) // calls waiting for input
		return nil
	case <-ctx.Done():
	}
	g.endRequests(ErrShuttingDown)
	g.reqMu.Lock()
	idle = g.idleLocked()
	g.reqMu.Unlock()
	t := time.NewTimer(cancelledGrace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		g.log.Warn("shutdown: requests still running after they were cancelled", "after", cancelledGrace)
	}
	// The go-sdk (v1.8.0) sends a cancelled call's notifications/cancelled
	// from a goroutine of its own once the call has returned, and a go-sdk
	// server acts on one from another goroutine: closing the upstream
	// connections at once (Close, next) races both, and the upstream then
	// often learns of the end of its call from its connection closing
	// instead. Nothing signals that the notifications are out; give them
	// this pause, paid only when calls had to be cancelled.
	time.Sleep(cancelNotifyPause)
	return ctx.Err()
}

// cancelNotifyPause is how long Shutdown waits, after cancelling requests,
// for their notifications/cancelled to reach the upstreams (measured: 0 of
// 20 lost at 50 ms, 1 to 7 of 20 lost without it).
const cancelNotifyPause = 100 * time.Millisecond

// cancelledGrace bounds how long Shutdown waits for the requests it
// cancelled to return; every handler of the gateway's honours its context
// at once, so this only bounds a bug.
const cancelledGrace = time.Second

// idleLocked returns a channel closed when no request is in flight.
func (g *Gateway) idleLocked() <-chan struct{} {
	if g.inflight == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	return g.idle
}

// awaitStart holds requests that the servers still starting could answer
// otherwise, while the host starts (a daemon serves before its servers are
// up, and answers initialize at once):
//
//   - a listing (tools, prompts, resources, templates) waits until every
//     server that is not optional is up and published: a client that
//     lists once after initialize and does not follow list_changed (the
//     MCP inspector's CLI) gets what the configuration requires; optional
//     servers join later, with list_changed;
//   - a request for a tool, prompt or resource the gateway does not
//     publish (yet) waits until every server has had its first attempt
//     and is published: a client that calls right after initialize,
//     without listing, gets its call made once the tool's server is up
//     rather than "unknown tool".
//
// Everything else, and every request once the host has started, passes at
// once.
func (g *Gateway) awaitStart(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		starting := g.h.Starting()
		if starting == nil {
			return next(ctx, method, req)
		}
		var enough <-chan struct{} // what the request waits for, besides the start
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			enough = g.required
		default:
			if g.published(req) {
				return next(ctx, method, req)
			}
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if t, ok := g.h.Tool(r.Params.Name); ok && g.exposes(t.Server) && !g.hidden[t.Name] {
					enough = closedChan // the host has it: only its publication is due
				}
			}
		}
		select {
		case <-enough:
		case <-starting:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case <-g.h.Done():
			// The start failed (a required server) and closed the host:
			// the daemon is going down; an empty answer would look final.
			return nil, &jsonrpc.Error{Code: codeShuttingDown, Message: ErrShuttingDown.Error() + ": a required server failed to start"}
		default:
		}
		if err := g.Sync(ctx); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	}
}

// closedChan is a channel that is closed.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// checkRequired closes g.required once every server that is not optional
// is up (ready, or lazily idle with its cached tools) in the host's
// catalog.
func (g *Gateway) checkRequired() {
	for _, st := range g.h.Servers() {
		up := st.State == host.StateReady || st.State == host.StateDegraded || st.State == host.StateLazy
		if !st.Optional && !up {
			return
		}
	}
	g.reqOnce.Do(func() { close(g.required) })
}

// published reports whether req is for a tool, prompt or resource the
// gateway publishes, or is another request.
func (g *Gateway) published(req mcp.Request) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		return r.Params == nil || g.tools[r.Params.Name]
	case *mcp.GetPromptRequest:
		if r.Params == nil {
			return true
		}
		_, ok := g.prompts[r.Params.Name]
		return ok
	case *mcp.ReadResourceRequest:
		if r.Params == nil {
			return true
		}
		_, ok := g.resources[r.Params.URI]
		return ok
	}
	return true
}

// requestMiddleware counts the downstream requests in flight, refuses new
// ones during a shutdown, and runs each on a context that ends when its
// session is ended (g.ends: deleted by its client, closed to make room) or
// the shutdown's grace is over (or at Close): the session's own context
// for a request lasts as long as its handler, and a session closes only
// when its handlers have returned.
func (g *Gateway) requestMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		// A subscriptions/listen request is a stream that lasts until its
		// client ends it: not a request to wait for.
		counted := method != "subscriptions/listen"
		if counted {
			g.reqMu.Lock()
			if g.shuttingDown {
				g.reqMu.Unlock()
				return nil, &jsonrpc.Error{Code: codeShuttingDown, Message: ErrShuttingDown.Error()}
			}
			if g.inflight >= g.opts.MaxRequests {
				g.reqMu.Unlock()
				return nil, &jsonrpc.Error{Code: codeTooManyRequests, Message: fmt.Sprintf(
					"too many requests: %d requests in flight already, the bound ([gateway] max_requests); retry when one has ended", g.opts.MaxRequests)}
			}
			g.inflight++
			g.reqMu.Unlock()
			defer g.endRequest()
		}
		life := g.requests
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			sctx, release, err := g.ends.Hold(ss)
			if err != nil {
				return nil, errSessionEnded
			}
			defer release()
			life = sctx
		}
		ctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(life, func() { cancel(context.Cause(life)) })
		defer stop()
		defer cancel(nil)
		res, err := next(ctx, method, req)
		if err != nil {
			// Say why, rather than a bare "context canceled".
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, ErrShuttingDown):
				return nil, &jsonrpc.Error{Code: codeShuttingDown, Message: ErrShuttingDown.Error() + ": the request was cancelled when the shutdown grace period ended"}
			case errors.Is(cause, transport.ErrSessionEnded):
				return nil, errSessionEnded
			}
		}
		return res, err
	}
}

// errSessionEnded is the error of a request cancelled, or refused, because
// its session ended (its client deleted it, or it was closed to make room).
// Its client hardly hears it: the session is gone.
var errSessionEnded = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the request's session has ended (deleted by its client, or closed); the request was cancelled"}

// endSession ends ss's requests, and the questions forwarded to its
// client, then closes it.
func (g *Gateway) endSession(ss *mcp.ServerSession) {
	closed := g.ends.End(ss, nil)
	defer closed()
	ss.Close()
}

func (g *Gateway) endRequest() {
	g.reqMu.Lock()
	defer g.reqMu.Unlock()
	if g.inflight--; g.inflight == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// Close ends calls waiting for input and every downstream session (a
// Streamable HTTP session a client never deleted would otherwise keep its
// goroutine until it expires), and every goroutine the gateway started; a
// host made by [Start] is closed too, one given to [New] is not. It is
// idempotent. Requests still in flight are cancelled first (see
// [Gateway.Shutdown] to give them time).
func (g *Gateway) Close() error {
	var err error
	g.closeOnce.Do(func() {
		g.endRequests(ErrShuttingDown)
		g.mu.Lock() // subscribe starts no goroutine after this (g.wg)
		g.cancel()
		g.mu.Unlock()
		g.rootsMu.Lock()
		g.rootsClosed = true // no more roots goroutines (roots.go)
		g.rootsMu.Unlock()
		g.h.OnRootsWanted(nil)
		for ss := range g.srv.Sessions() {
			ss.Close()
		}
		g.wg.Wait()
		g.peerTransport.CloseIdleConnections()
		if g.ownsHost {
			err = g.h.Close()
		}
	})
	return err
}

func (g *Gateway) exposes(server string) bool {
	return g.exposed == nil || g.exposed[server]
}

// resync republishes a list after an upstream announced a change. Changes
// arriving while a resync runs coalesce into one more.
func (g *Gateway) resync(kind host.ChangeKind) {
	g.mu.Lock()
	start := g.resyncLocked(kind)
	g.mu.Unlock()
	if start {
		g.runResync(kind)
	}
}

// resyncLocked marks kind to be republished, and reports whether a resync
// must start (none runs). g.mu is held.
func (g *Gateway) resyncLocked(kind host.ChangeKind) bool {
	if g.syncing[kind] {
		g.dirty[kind] = true
		return false
	}
	g.syncing[kind] = true
	return true
}

// runResync republishes kind on a goroutine, again as long as it is
// marked dirty meanwhile.
func (g *Gateway) runResync(kind host.ChangeKind) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			if g.ctx.Err() == nil {
				ctx, cancel := context.WithTimeout(g.ctx, time.Minute)
				var err error
				switch kind {
				case host.ToolsChanged:
					g.syncTools()
				case host.ResourcesChanged:
					err = g.syncResources(ctx)
				case host.PromptsChanged:
					err = g.syncPrompts(ctx)
				}
				cancel()
				if err != nil && !errors.Is(err, host.ErrClosed) { // closing is no news
					g.log.Warn("republishing after list_changed", "kind", kind, "err", err)
				}
			}
			g.mu.Lock()
			if !g.dirty[kind] {
				g.syncing[kind] = false
				if !g.syncing[host.ToolsChanged] && !g.syncing[host.ResourcesChanged] && !g.syncing[host.PromptsChanged] {
					for _, c := range g.synced {
						close(c)
					}
					g.synced = nil
				}
				g.mu.Unlock()
				return
			}
			g.dirty[kind] = false
			g.mu.Unlock()
		}
	}()
}

// Sync republishes what the host offers now — its tools, and the
// resources and prompts its servers list — as the gateway does when the
// host says they changed, and returns when that is done, or ctx ends: a
// client that lists them from then on gets at least what the host had
// when Sync was called. The daemon calls it before it says it is ready.
func (g *Gateway) Sync(ctx context.Context) error {
	kinds := []host.ChangeKind{host.ToolsChanged, host.ResourcesChanged, host.PromptsChanged}
	c := make(chan struct{})
	var start []host.ChangeKind
	g.mu.Lock()
	// All marked at once, before any runs: c is closed once none runs,
	// so after each has run (again) from now.
	for _, k := range kinds {
		if g.resyncLocked(k) {
			start = append(start, k)
		}
	}
	g.synced = append(g.synced, c)
	g.mu.Unlock()
	for _, k := range start {
		g.runResync(k)
	}
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-g.ctx.Done():
		return errors.New("gateway: closed")
	}
}

// syncTools publishes the host's tools: new and changed ones are added (the
// SDK tells clients the list changed), vanished ones removed.
func (g *Gateway) syncTools() {
	want := map[string]bool{}
	for _, t := range g.h.Tools() {
		if !g.exposes(t.Server) || g.hidden[t.Name] {
			continue
		}
		want[t.Name] = true
		up := t.Tool
		g.srv.AddTool(&mcp.Tool{
			Meta:         up.Meta,
			Annotations:  up.Annotations,
			Description:  up.Description,
			InputSchema:  inputSchema(up.InputSchema),
			Name:         t.Name,
			OutputSchema: up.OutputSchema,
			Title:        up.Title,
			Icons:        up.Icons,
		}, g.callTool)
	}
	g.mu.Lock()
	var gone []string
	for name := range g.tools {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	g.tools = want
	g.mu.Unlock()
	if len(gone) > 0 {
		g.srv.RemoveTools(gone...)
	}
}

// inputSchema passes an upstream schema through as raw JSON, so that the
// SDK does not reinterpret it; a missing one becomes the empty object schema.
func inputSchema(s any) any {
	if s == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return json.RawMessage(raw)
}

// callTool forwards a downstream tools/call to the host.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// A 2026-07-28 client sets its log level per request.
	if level, ok := req.Params.GetMeta()[mcp.MetaKeyLogLevel].(string); ok {
		g.wantLogLevel(ctx, mcp.LoggingLevel(level))
	}
	if newGeneration(req.ProtocolVersion()) {
		return g.callToolInput(ctx, req)
	}
	opts, withdraw := g.directAsk(ctx, req)
	res, err := g.forward(ctx, req, opts, nil)
	withdraw()
	return res, err
}

// newGeneration reports whether a request's protocol version (as the SDK
// reports it; "" for a sessionless request without one) is 2026-07-28 or
// later, where the server asks for input with an input-required result.
func newGeneration(v string) bool { return v == "" || v >= host.InputRequiredVersion }

// forward makes the upstream call with the given per-call handlers. Its
// notifications go through q; nil means a queue to the calling request,
// flushed before the result is returned.
func (g *Gateway) forward(ctx context.Context, req *mcp.CallToolRequest, opts *host.CallOptions, q *notifyQueue) (*mcp.CallToolResult, error) {
	if q == nil {
		q = newNotifyQueue(func() (context.Context, *mcp.ServerSession) { return ctx, req.Session })
		// Notifications must reach the client before the result does.
		defer q.close()
	}
	if token := req.Params.GetProgressToken(); token != nil {
		opts.Progress = func(p *mcp.ProgressNotificationParams) {
			c := *p
			c.ProgressToken = token
			q.push(func(ctx context.Context, ss *mcp.ServerSession) {
				if ss != nil {
					ss.NotifyProgress(ctx, &c)
				}
			})
		}
	}
	opts.Log = func(server string, p *mcp.LoggingMessageParams) {
		q.push(func(ctx context.Context, ss *mcp.ServerSession) {
			if ss != nil {
				ss.Log(ctx, p)
			}
		})
	}
	opts.PassThrough = true
	opts.Caller, opts.IdempotencyKey = callerOf(ctx, req), idempotencyKey(req)
	if d, ok := localTimeout(req); ok {
		opts.Timeout = d
	}
	res, err := g.h.CallTool(ctx, req.Params.Name, req.Params.Arguments, opts)
	if err != nil {
		var je *jsonrpc.Error
		switch {
		case errors.Is(err, host.ErrOlderGeneration):
			return nil, err
		case errors.As(err, &je) && ctx.Err() == nil:
			// The upstream refused the request: the client gets its
			// protocol error, as it would directly.
			return nil, je
		}
		var ce *host.CallError
		if errors.As(err, &ce) && ctx.Err() == nil {
			// The call failed on the way (invalid arguments, timeout, a lost
			// server): tell the model, which can correct itself, as a tool
			// error rather than a protocol error, and a client that knows
			// (the CLI over the daemon's socket) what the error was.
			r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}},
				Meta: mcp.Meta{MetaKeyError: host.NewErrorJSON(err)}}
			return r, nil
		}
		return nil, err
	}
	return res, nil
}

// notifyQueue forwards a call's progress notifications and log messages
// downstream in order, without ever blocking the upstream connection's
// reader, which hands them over: a slow client loses notifications beyond a
// bound, never the connection. Its goroutine starts with the first
// notification, so that calls without any cost nothing.
type notifyQueue struct {
	// target is the request a notification is sent in the context of, and
	// its session; nil when no request is in flight (the notification is
	// dropped).
	target func() (context.Context, *mcp.ServerSession)

	mu     sync.Mutex
	ch     chan func(context.Context, *mcp.ServerSession)
	closed bool
	done   chan struct{}
}

func newNotifyQueue(target func() (context.Context, *mcp.ServerSession)) *notifyQueue {
	return &notifyQueue{target: target}
}

// notifyQueueLen bounds the notifications buffered for a slow client.
const notifyQueueLen = 64

func (q *notifyQueue) push(send func(context.Context, *mcp.ServerSession)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if q.ch == nil {
		q.ch = make(chan func(context.Context, *mcp.ServerSession), notifyQueueLen)
		q.done = make(chan struct{})
		go func() {
			defer close(q.done)
			for send := range q.ch {
				send(q.target())
			}
		}()
	}
	select {
	case q.ch <- send:
	default: // the client is not keeping up: drop, never block
	}
}

// flush waits, within ctx, until what is queued now has been sent.
func (q *notifyQueue) flush(ctx context.Context) {
	sent := make(chan struct{})
	q.mu.Lock()
	if q.closed || q.ch == nil {
		q.mu.Unlock()
		return
	}
	select {
	case q.ch <- func(context.Context, *mcp.ServerSession) { close(sent) }:
	default:
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	select {
	case <-sent:
	case <-ctx.Done():
	}
}

// close flushes what is queued and stops the queue.
func (q *notifyQueue) close() {
	q.mu.Lock()
	q.closed = true
	ch, done := q.ch, q.done
	q.mu.Unlock()
	if ch != nil {
		close(ch)
		<-done
	}
}

// directAsk forwards upstream requests made during the call straight to a
// 2025-11-25 (or older) client, on the call's own context. An upstream that
// cancels its request has it cancelled downstream (the go-sdk sends the
// client notifications/cancelled). withdraw, called once the upstream call
// has returned, cancels the questions still open downstream and waits until
// each has returned: an upstream that answers its call has given up its
// questions, and the client should hear of that before the answer ends the
// call's stream. That is best effort: the go-sdk (v1.8.0) sends the
// cancellation from a goroutine of its own, which the answer can overtake
// (the yield below makes that rarer; then the client's question stays open
// until it answers, and the answer is dropped).
func (g *Gateway) directAsk(callCtx context.Context, req *mcp.CallToolRequest) (opts *host.CallOptions, withdraw func()) {
	ss := req.Session
	var (
		mu         sync.Mutex
		open       sync.WaitGroup
		withdrawn  bool
		asksCtx    context.Context // made by the first question: most calls ask none
		cancelAsks context.CancelFunc
	)
	// ask runs one question to the client, ended by the upstream's
	// cancellation (ctx) or by withdraw.
	ask := func(ctx context.Context, do func(context.Context) error) error {
		mu.Lock()
		if withdrawn {
			mu.Unlock()
			return errors.New("the call this question belongs to has ended")
		}
		if asksCtx == nil {
			asksCtx, cancelAsks = context.WithCancel(callCtx)
		}
		parent := asksCtx
		open.Add(1)
		mu.Unlock()
		defer open.Done()
		c, cancel := context.WithCancel(parent)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		return do(c)
	}
	// A question goes down only if the client declared the capability it
	// needs; otherwise the upstream gets the answer a client without it
	// gives, method not found (the go-sdk would send it regardless).
	caps := req.ClientCapabilities()
	opts = &host.CallOptions{
		Client: ss, // roots are the session's: its parallel calls are one answer
		Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (r *mcp.ElicitResult, err error) {
			if caps == nil || caps.Elicitation == nil {
				return nil, notDeclared("elicitation/create", "elicitation")
			}
			err = ask(ctx, func(c context.Context) (err error) { r, err = ss.Elicit(c, p); return err })
			return r, err
		},
		Sampling: func(ctx context.Context, server string, p *mcp.CreateMessageParams) (r *mcp.CreateMessageResult, err error) {
			if caps == nil || caps.Sampling == nil {
				return nil, notDeclared("sampling/createMessage", "sampling")
			}
			err = ask(ctx, func(c context.Context) (err error) { r, err = ss.CreateMessage(c, p); return err })
			return r, err
		},
		// Roots are the session's, not the call's, and a client answers from
		// what it has, at once: the question is not withdrawn with the call
		// (the host may ask through any call of this session, see
		// host.CallOptions.Client), only with the upstream's own request.
		// It ends, though, with the session (or the shutdown's grace),
		// like the session's own requests: a session that is closed waits
		// for the questions put to its client.
		Roots: func(ctx context.Context, server string) (*mcp.ListRootsResult, error) {
			if caps == nil || caps.RootsV2 == nil {
				return nil, notDeclared("roots/list", "roots")
			}
			life, release, err := g.ends.Hold(ss)
			if err != nil {
				return nil, fmt.Errorf("roots/list: the client's session has ended")
			}
			defer release()
			ctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			stop := context.AfterFunc(life, func() { cancel(context.Cause(life)) })
			defer stop()
			return ss.ListRoots(ctx, &mcp.ListRootsParams{})
		},
	}
	return opts, func() {
		mu.Lock()
		withdrawn = true
		cancel := cancelAsks
		mu.Unlock()
		if cancel == nil {
			return // no question was asked
		}
		cancel()
		open.Wait()
		// Not a wait on a signal: the go-sdk (v1.8.0) sends the
		// questions' notifications/cancelled from goroutines of its own
		// and says nothing when they are out. A yield lets them go
		// before the answer, usually (see above).
		runtime.Gosched()
	}
}

// newID returns an unguessable id.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// notDeclared is the error an upstream gets for a request its calling
// client cannot answer: JSON-RPC "method not found", what a client without
// the capability answers (the TypeScript SDK's does; a bare error would
// reach the upstream with code 0).
func notDeclared(method, capability string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("%s: the client of this call (through switchboard's gateway) did not declare the %s capability", method, capability)}
}

// serverOf finds which published resource or template a URI belongs to.
func (g *Gateway) serverOf(uri string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.resources[uri]; ok {
		return s, true
	}
	for tmpl, s := range g.templates {
		if matchTemplate(tmpl, uri) {
			return s, true
		}
	}
	return "", false
}

// loggingMiddleware passes a downstream logging/setLevel upstream once the
// SDK has recorded it for the downstream session.
func (g *Gateway) loggingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && method == "logging/setLevel" {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				g.wantLogLevel(ctx, p.Level)
			}
		}
		return res, err
	}
}

// olderGenerationDiscover answers server/discover, on a connection whose
// transport speaks no 2026-07-28 version (the legacy HTTP+SSE transport
// at /sse, which that revision dropped), as a server of the older
// generation does: -32601, method not found. That is what the spec's
// dual-era clients fall back to initialize on, every one of them: the
// go-sdk's SDK would answer a result listing only the older versions,
// which mcp-go's client (v1.6.0) takes for a 2026-07-28 server it cannot
// speak to, and aborts. Connections that speak 2026-07-28 (stdio,
// Streamable HTTP served statelessly) get the SDK's result.
func olderGenerationDiscover(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil && method == "server/discover" &&
			!slices.ContainsFunc(dr.SupportedVersions, func(v string) bool { return v >= host.InputRequiredVersion }) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
				Message: fmt.Sprintf("Method not found: server/discover is a %s method, and this transport speaks older versions only (%s): send initialize", host.InputRequiredVersion, strings.Join(dr.SupportedVersions, ", "))}
		}
		return res, err
	}
}

// ownIdentity keeps upstreams' identities out of the gateway's answers. A
// 2026-07-28 server names itself in each result's _meta
// (io.modelcontextprotocol/serverInfo), and the results of tools/call,
// resources/read, prompts/get and completion/complete (input-required ones
// included) come through from upstream with their _meta. The key is
// dropped here, on the way out of every method, and the SDK then puts the
// gateway's own there for a 2026-07-28 client (it does only where the key
// is absent), and nothing for an older one.
func ownIdentity(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		return withoutServerInfo(res), nil
	}
}

// withoutServerInfo returns res without _meta's serverInfo, for the
// results the gateway passes on from upstream (its own lists, discover and
// empty results never carry one). It copies rather than changes: the
// go-sdk client may hand one result to several callers (its cache of
// 2026-07-28 results).
func withoutServerInfo(res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	case *mcp.ReadResourceResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	case *mcp.GetPromptResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	case *mcp.CompleteResult:
		if m, ok := stripServerInfo(r.Meta); ok {
			c := *r
			c.Meta = m
			return &c
		}
	}
	return res
}

// stripServerInfo returns a copy of m without serverInfo, and whether m
// had one.
func stripServerInfo(m mcp.Meta) (mcp.Meta, bool) {
	if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
		return m, false
	}
	m = maps.Clone(m)
	delete(m, mcp.MetaKeyServerInfo)
	if len(m) == 0 {
		m = nil
	}
	return m, true
}

// logLevels orders the syslog levels of MCP logging, most verbose first.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// wantLogLevel makes the upstreams send log messages at level and above.
// Upstream sessions are shared, so their level only ever becomes more
// verbose: the most verbose any downstream client asked for. Each
// downstream session still gets only what its own level lets through (the
// SDK filters what the gateway forwards).
func (g *Gateway) wantLogLevel(ctx context.Context, level mcp.LoggingLevel) {
	i := slices.Index(logLevels, level)
	if i < 0 {
		return
	}
	g.mu.Lock()
	if cur := slices.Index(logLevels, g.logLevel); cur >= 0 && cur <= i {
		g.mu.Unlock()
		return
	}
	g.logLevel = level
	g.mu.Unlock()
	if err := g.h.SetLoggingLevel(ctx, level); err != nil {
		g.log.Warn("setting the upstreams' log level", "level", level, "err", err)
	}
}
