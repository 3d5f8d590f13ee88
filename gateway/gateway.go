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
// its Run method (on a [guard.OwnerContext]: the stdio client is the
// owner), or over HTTP with [Gateway.Handler] (a guard of its own), or
// mount it with [Gateway.Mount] on the guard of a listener that serves
// other faces too (the daemon's). [Grant] is the one reading of the OAuth
// policy, for every face. Where the gateway serves is its [Endpoint]s:
// the default one at /mcp, and named ones, each publishing its own view of
// the one host (its servers, tools chosen by glob, renamed and overridden,
// its instructions) with list_changed of its own; [Gateway.SetEndpoints]
// replaces the list at run time.
//
// The files, by concern: the catalog it publishes (catalog.go), calls
// (calls.go, input.go for 2026-07-28 clients, notify.go), resources,
// prompts and completions (resources.go), requests in flight and the
// shutdown (requests.go), the HTTP transports and sessions (http.go,
// sessions.go), the policy (policy.go), redaction (redact.go), who calls
// (caller.go), roots (roots.go), replicas (replicas.go), the rest of what
// every answer passes (middleware.go).
package gateway

import (
	"context"
	"crypto/rand"
	"iter"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
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
	// Endpoints are the MCP endpoints the gateway serves over its host,
	// each an MCP server of its own with its servers, tools and policy;
	// nil means one, [DefaultEndpoint]. The first is also [Gateway.Server].
	Endpoints []Endpoint
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
	// EndpointMiddleware, when set, is the middleware of endpoint e (its
	// Name "" for the default one), outermost, around Middleware: what
	// labels a request by the endpoint it came to (telemetry's
	// ServerMiddleware), reading e's names for tools (Rename). It is
	// asked again when SetEndpoints changes e.
	EndpointMiddleware func(e Endpoint) []mcp.Middleware
	// Embeddings, when set, blends embeddings into search_tools' ranking
	// on endpoints in search or code mode; nil ranks lexically.
	Embeddings *Embeddings
	// CodeRunner runs code mode's run_code programs: the hook package
	// codemode fills (see [CodeRunner]). Nil answers run_code with
	// [ErrCodeModeUnavailable] as a tool error.
	CodeRunner CodeRunner
	// Code bounds each run_code program; `serve` passes [code]
	// (config.Code.WithDefaults).
	Code CodeBudget
	// Tasks keeps the tasks of the MCP tasks extension (tasks.go), durably:
	// `serve` passes its state database. Nil: the extension is not
	// offered, and every call is answered with its result.
	Tasks TaskStore
	// TaskWait, TaskTTL and TaskPollInterval are [gateway] task_wait,
	// task_ttl and task_poll_interval; 0 means config.DefaultTaskWait,
	// DefaultTaskTTL and DefaultTaskPollInterval.
	TaskWait, TaskTTL, TaskPollInterval time.Duration
	// Runs are the durable runs behind the tools of one in-process server
	// (`serve`: its published workflows): with Tasks, a declaring client's
	// call of one of its tools is a task backed by the run it starts
	// (runtasks.go). Nil: those calls are tasks as any other's.
	Runs RunTasks
	// TaskJournal, with Tasks, makes the calls of tasks to idempotent
	// tools durable (`serve`: its workflow engine, on DBOS): one
	// interrupted in flight by a crash is called again by recovery
	// (tasks.go, RecoverTask). Nil: every interrupted task is reported
	// interrupted.
	TaskJournal TaskJournal
	// MaxTasksPerCaller bounds the tasks one caller has in flight on this
	// replica; beyond it (or beyond MaxRequests tasks in all) a call goes
	// on as a call, answered with its result. Default
	// [DefaultMaxTasksPerCaller].
	MaxTasksPerCaller int
}

// Gateway is an MCP server over a host's servers. Its methods are safe for
// concurrent use.
type Gateway struct {
	h    *host.Host
	opts Options
	log  *slog.Logger
	eps  atomic.Pointer[[]*endpoint] // Options.Endpoints, served; SetEndpoints replaces the list
	red  *secret.Redactor            // the host's, for the face (redact.go)

	ctx    context.Context // the gateway's lifetime
	cancel context.CancelFunc

	mu          sync.Mutex
	logLevel    mcp.LoggingLevel         // the most verbose level set upstream
	pending     map[string]*pendingCall  // 2026-07-28 calls awaiting input
	tasks       map[string]*taskRun      // the tasks this replica runs (tasks.go)
	taskCallers map[string]int           // of them, how many each caller has
	waiting     int                      // of them, those that have asked (Options.MaxWaitingCalls)
	syncing     map[host.ChangeKind]bool // a resync is running
	dirty       map[host.ChangeKind]bool // another resync is wanted
	synced      []chan struct{}          // closed when no resync runs (Sync)
	required    chan struct{}            // closed once every required server is up (awaitStart)
	reqOnce     sync.Once                // for required
	wg          sync.WaitGroup
	closeOnce   sync.Once
	ownsHost    bool // made by Start: Close closes the host too

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
	// rootsWatched are the sessions whose end is awaited (watchEnd).
	rootsWatched map[*mcp.ServerSession]bool
	rootsApply   sync.Mutex

	mounts []*mount // the guards the gateway is mounted on (http.go); g.mu
	// setting serialises SetEndpoints: each computes the next list from
	// the one served.
	setting sync.Mutex

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
		h:           h,
		red:         h.Redactor(), // the face keeps from its clients the secrets the host resolved
		subs:        map[subKey]map[*mcp.ServerSession]bool{},
		sessSubs:    map[*mcp.ServerSession]map[subKey]bool{},
		pending:     map[string]*pendingCall{},
		tasks:       map[string]*taskRun{},
		taskCallers: map[string]int{},
		syncing:     map[host.ChangeKind]bool{},
		dirty:       map[host.ChangeKind]bool{},
		required:    make(chan struct{}),
	}
	if opts != nil {
		g.opts = *opts
	}
	eps, err := endpoints(g.opts.Endpoints)
	if err != nil {
		return nil, err
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
	if g.opts.TaskWait <= 0 {
		g.opts.TaskWait = config.DefaultTaskWait
	}
	if g.opts.TaskTTL <= 0 {
		g.opts.TaskTTL = config.DefaultTaskTTL
	}
	if g.opts.TaskPollInterval <= 0 {
		g.opts.TaskPollInterval = config.DefaultTaskPollInterval
	}
	if g.opts.MaxTasksPerCaller <= 0 {
		g.opts.MaxTasksPerCaller = DefaultMaxTasksPerCaller
	}
	if len(g.opts.StateKey) == 0 {
		g.opts.StateKey = make([]byte, 32)
		rand.Read(g.opts.StateKey)
	}
	g.stateSigner = secret.NewSigner(g.opts.StateKey, g.opts.StateKeyFallbacks...)
	g.peerTransport = newPeerTransport()
	g.log = g.opts.Logger
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.requests, g.endRequests = context.WithCancelCause(g.ctx)
	g.ends = transport.NewSessionEnds[*mcp.ServerSession](g.requests)

	var list []*endpoint
	for _, e := range eps {
		list = append(list, g.newEndpoint(e))
	}
	g.eps.Store(&list)

	// An upstream that wants roots outside a call gets the one client's
	// (roots.go).
	h.OnRootsWanted(g.rootsWanted)

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
	if g.opts.Tasks != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.pruneTasks()
		}()
	}
	return g, nil
}

// UpstreamProtocolVersion is the version the gateway offers upstreams
// unless host.Options.ProtocolVersion says otherwise (see HostOptions).
// The CLI's own hosts offer it too, so that a command's output is the same
// whether a serve's host answers it or its own.
const UpstreamProtocolVersion = "2025-11-25"

// Host returns the host the gateway serves.
func (g *Gateway) Host() *host.Host { return g.h }

// Sessions are the downstream sessions the gateway holds now, on every
// endpoint it serves: a session that ended is no longer among them (what
// telemetry.Telemetry.FollowSessions needs).
func (g *Gateway) Sessions() iter.Seq[*mcp.ServerSession] { return g.sessions() }

// Server returns the MCP server of the gateway's first endpoint. Serve it
// over stdio with g.Server().Run(guard.OwnerContext(ctx),
// &mcp.StdioTransport{}) (its client is the owner: see guard.OwnerContext).
func (g *Gateway) Server() *mcp.Server { return g.served()[0].srv }

// EndpointServer returns the MCP server of the endpoint named name
// ([Endpoint.Name]; "" is the first endpoint, as [Gateway.Server]), nil
// when there is none: `serve --stdio --endpoint NAME` serves it.
func (g *Gateway) EndpointServer(name string) *mcp.Server {
	if ep := g.endpointNamed(name); ep != nil {
		return ep.srv
	}
	return nil
}

// Offered is what the endpoint named name ("" the first) offers of
// the host's tools now (Endpoint.Offer), and false when no endpoint of
// that name is served.
func (g *Gateway) Offered(name string) ([]OfferedTool, bool) {
	ep := g.endpointNamed(name)
	if ep == nil {
		return nil, false
	}
	offered, _ := ep.Offer(g.h.Tools())
	return offered, true
}

// endpointNamed is the endpoint served under name ("" the first, as
// Server), or nil.
func (g *Gateway) endpointNamed(name string) *endpoint {
	if name == "" {
		return g.served()[0]
	}
	for _, ep := range g.served() {
		if ep.Name == name {
			return ep
		}
	}
	return nil
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
		for ss := range g.sessions() {
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
