// Package host connects to many MCP servers at once and offers their tools,
// resources and prompts, safely, to one caller: the CLI, an agent loop or the
// gateway.
//
// [Start] connects to every configured server concurrently. A server that
// fails fails the whole start, naming every failed server and why, unless it
// is optional: then it is reported failed and the others go on.
//
// Tools are named by a format ("mcp_{server}_{tool}" by default), sanitised
// to [A-Za-z0-9_-] and kept within 64 characters, the limit LLM providers
// put on tool names. Calls are routed by a table, never by splitting a name.
// Before any call reaches a server its arguments are validated against the
// tool's input schema, compiled once at discovery, and the decoded, validated
// value is what is forwarded. Every call is bounded by the server's timeout;
// on timeout the call is cancelled upstream.
//
// What servers declare — names, titles, descriptions, schema annotations,
// serverInfo, instructions — and the error, progress and log messages they
// send reach terminals and models, so the host removes terminal escapes and
// control and invisible characters from them and bounds their size
// ([Options.MaxDescriptionBytes]), once, as it lists them; a tool or prompt
// whose name hides characters, or a tool without an object input schema, is
// not offered. [ServerStatus.Warnings] says what was changed.
//
// A server started through a package runner (npx, uvx, pipx run, …) that
// is still downloading it is [StateInstalling], not failed: its
// connect_timeout counts from when the server itself begins to read, the
// install gets install_timeout, and it is never killed mid-install (see
// install.go). A server whose program is not installed fails at once,
// saying what to install, and is not retried with backoff.
//
// A tool's own failure is a result with IsError set; a protocol, transport,
// validation or timeout failure is a Go error of type [*CallError].
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/internal/version"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/transport"
)

// Options configures a [Host]. The zero value (or nil) is usable.
type Options struct {
	// Logger receives diagnostics, including the servers' stderr and log
	// messages. Nil discards them. Everything passes through Redactor first.
	Logger *slog.Logger

	// ToolNameFormat names tools; {server} and {tool} are replaced. Empty
	// means config.DefaultToolNameFormat.
	ToolNameFormat string

	// Redactor receives every secret resolved for a server and redacts log
	// output and errors. Nil means a new one, available from [Host.Redactor].
	Redactor *secret.Redactor
	// Secrets resolves {{secrets.NAME}}; nil means secret.EnvStore{}.
	Secrets secret.Store
	// LookupEnv resolves {{env.NAME}}; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)

	// Elicitation answers servers' elicitation requests that cannot be routed
	// to a call's own handler (see CallOptions.Elicitation). When nil such
	// requests are declined. Schema defaults are applied to accepted content.
	Elicitation ElicitationHandler
	// Sampling answers servers' sampling requests. When nil, Switchboard does
	// not advertise sampling and any sampling request is refused.
	Sampling SamplingHandler

	// AdvertiseRoots advertises the roots capability to every server, for
	// callers that answer roots/list per call (CallOptions.Roots) or set
	// the roots of the host's one client (Host.SetRoots). Servers with
	// configured roots advertise it anyway.
	AdvertiseRoots bool
	// ClientRoots says the host's roots will come from its one client
	// (Host.SetRoots), known to have some: until they are set, a server's
	// roots/list outside a call waits for them (5 s at most), so that a
	// server that asks at initialize is told them (`serve --stdio` with a
	// client that declared roots).
	ClientRoots bool

	// InProcess are servers that run inside this process (built-in tools),
	// connected over the go-sdk's in-memory transport so that their tools
	// take the same path as any other: naming, validation, timeouts. They
	// start after, and are named like, the configured servers.
	InProcess []InProcessServer

	// ToolCache, when set, keeps tool lists between runs (a *store.Store):
	// a lazy server whose tools are cached is not started until a call
	// needs it. Nil: no cache, and lazy servers start like the others.
	ToolCache ToolCache

	// Pins, when set, keeps pinned tool definitions (a *store.Store): a
	// server's pin setting and scan = "hold" need it (see RecheckPins).
	// Nil: first-use pins nothing, and tools that need an approval are
	// held with nowhere to approve them.
	Pins PinStore

	// ClientInfo is what Switchboard calls itself in initialize.
	ClientInfo *mcp.Implementation

	// ClientMiddleware, when set, is called once for each connection the
	// host makes to a server, with the server's id, and its middleware
	// wraps every request the host sends on it (telemetry: a span and a
	// duration per operation, the trace context in _meta). It is the
	// outermost sending middleware: it sees a request as it leaves and
	// its result as it comes back, after the host's own redaction.
	ClientMiddleware func(server string) mcp.Middleware

	// ProtocolVersion is the protocol version offered to every server; a
	// server may still answer with another it supports. Empty means the
	// newest the SDK speaks. The gateway offers 2025-11-25, under which a
	// server may ask for input during a call (see gateway.Start).
	ProtocolVersion string

	// MaxMessageBytes bounds one message from a server; 0 means 4 MiB.
	MaxMessageBytes int

	// MaxDescriptionBytes bounds each description a server declares (of a
	// tool, prompt, resource, argument or schema property), its
	// instructions, and the error and progress messages it sends; longer
	// ones are cut. MaxNameBytes bounds titles, serverInfo and log logger
	// names, which are cut, and names, which are not: a tool or prompt
	// whose name is longer is not offered. 0 means
	// config.DefaultMaxDescriptionBytes and config.DefaultMaxNameBytes.
	// Terminal escapes and control and invisible characters are removed
	// from all of them (see ServerStatus.Warnings).
	MaxDescriptionBytes int
	MaxNameBytes        int

	// Network is the operator's policy for every HTTP, SSE and WebSocket
	// connection: allowed and denied ranges on top of netguard's block
	// list, and an explicit proxy (HTTP_PROXY and HTTPS_PROXY are ignored).
	// Nil means none: the block list alone, no proxy.
	Network *netguard.Network

	// OAuthTokens keeps the tokens of servers with an oauth table (loaded
	// at each connect, written back at each refresh). Nil: such a server
	// fails to start, saying so.
	OAuthTokens *oauth.Tokens
	// OAuthLogin, when set, runs the browser part of a sign-in a server
	// needs (switchboard auth login, the conformance client), with
	// OAuthRedirectURL its loopback callback. Nil: a server that needs a
	// sign-in fails to start with an oauth.LoginRequiredError naming the
	// command to run, and is not retried in the background.
	OAuthLogin       auth.AuthorizationCodeFetcher
	OAuthRedirectURL string

	// Guardrails filter every tool call's arguments (after schema
	// validation) and result (before anyone sees it): see
	// guardrail.go. Nil filters nothing.
	Guardrails *guardrail.Chain
}

// Change says what changed on a server.
type Change struct {
	Server string
	Kind   ChangeKind
}

// ChangeKind is what list changed.
type ChangeKind string

// The lists a server can announce as changed.
const (
	ToolsChanged     ChangeKind = "tools"
	ResourcesChanged ChangeKind = "resources"
	PromptsChanged   ChangeKind = "prompts"
)

// InProcessServer is an MCP server running in this process.
type InProcessServer struct {
	ID             string
	Server         *mcp.Server
	Timeout        time.Duration // per call; 0 means config.DefaultTimeout
	ToolsAllowlist []string      // nil means every tool
	// OwnNames: its tools are offered under their own names, not named by
	// Options.ToolNameFormat (the names are the server's choice, such as
	// [gateway] workflow_tool_format's). A name a configured server's
	// tool already has is skipped, as any collision is.
	OwnNames bool
}

// TransportInProcess is an in-process server's transport (ServerStatus.Transport);
// config files cannot name it.
const TransportInProcess config.Transport = "in-process"

// An ElicitationHandler answers a server's elicitation request.
type ElicitationHandler func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error)

// A SamplingHandler answers a server's sampling request.
type SamplingHandler func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)

// DefaultMaxMessageBytes bounds one message from a server: a server that sends
// more in one message is cut off, so memory stays bounded.
const DefaultMaxMessageBytes = 4 << 20

// Host is a set of connected MCP servers. Its methods are safe for concurrent
// use.
type Host struct {
	opts Options
	log  *slog.Logger
	red  *secret.Redactor
	lim  *limits

	// serversMu guards servers and launched. servers is copied on write
	// (AddServer, RemoveServer, ReplaceServer): a reader holds a snapshot
	// it may range over without the lock (list).
	serversMu sync.Mutex
	servers   []*server // declaration order, then the order added
	launched  bool      // Start has taken its servers: one added later launches itself

	// The roots of the host's one client (roots.go): rootsMu guards
	// clientRoots (nil: each server's configured roots), onRootsWanted
	// and each server's rootsClient; rootsKnown is closed by the first
	// SetRoots; rootsWanted: a server asked for roots outside a call.
	rootsMu       sync.Mutex
	clientRoots   []*mcp.Root
	onRootsWanted func()
	rootsKnown    chan struct{}
	rootsOnce     sync.Once
	rootsWanted   atomic.Bool

	mu      sync.RWMutex
	catalog *catalog
	// catalogMu serialises catalog rebuilds.
	catalogMu sync.Mutex

	progressSeq atomic.Uint64
	calls       sync.Map // progress token (string) -> *call

	// The host's lifetime: Close cancels ctx and waits for the
	// goroutines the host started (spawn).
	ctx       context.Context
	cancel    context.CancelFunc
	spawnMu   sync.Mutex
	spawned   sync.WaitGroup
	closing   bool
	started   atomic.Bool
	starting  atomic.Pointer[chan struct{}] // while Start runs: closed when it returns
	closeOnce sync.Once
	closeErr  error

	// inbound ends the requests the servers' sessions have made of the
	// host before a session is closed (closeSession), and all of them
	// at Close: the go-sdk's ClientSession.Close waits for them, and a
	// handler waiting on someone (a gateway client, a person) would hold
	// it forever.
	inbound *transport.SessionEnds[*mcp.ClientSession]

	// events fans the host's events out to its watchers (events.go).
	events hub

	// sessions are the upstream session ids seen, kept out of logs and
	// errors (sessionid.go).
	sessions sessionIDs

	// isolationRefused is done once the log has said that the kernel
	// refuses stdio servers a PID namespace.
	isolationRefused sync.Once
}

// Start connects to servers concurrently and returns a Host offering their
// tools: [New] and [Host.Start] in one. ctx bounds the start only; the
// connections live until Close.
//
// When a server that is not optional fails, Start closes every connection it
// made and returns a [*StartError] naming every failed server.
func Start(ctx context.Context, servers []config.Server, opts *Options) (*Host, error) {
	h, err := New(servers, opts)
	if err != nil {
		return nil, err
	}
	if err := h.Start(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// New makes a host over servers without connecting to any: [Host.Start]
// does that. Between the two, [Host.Watch] sees the start itself. It fails
// only on a configuration no host can run (an id declared twice).
func New(servers []config.Server, opts *Options) (*Host, error) {
	h := &Host{rootsKnown: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.inbound = transport.NewSessionEnds[*mcp.ClientSession](h.ctx)
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.ToolNameFormat == "" {
		h.opts.ToolNameFormat = config.DefaultToolNameFormat
	}
	if h.opts.MaxMessageBytes <= 0 {
		h.opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if h.opts.Secrets == nil {
		h.opts.Secrets = secret.EnvStore{}
	}
	h.red = h.opts.Redactor
	if h.red == nil {
		h.red = secret.NewRedactor()
	}
	if h.opts.MaxDescriptionBytes <= 0 {
		h.opts.MaxDescriptionBytes = config.DefaultMaxDescriptionBytes
	}
	if h.opts.MaxNameBytes <= 0 {
		h.opts.MaxNameBytes = config.DefaultMaxNameBytes
	}
	h.lim = &limits{desc: h.opts.MaxDescriptionBytes, name: h.opts.MaxNameBytes, redact: h.redact}
	if h.opts.Logger != nil {
		// Secrets and upstream session ids out of every log line.
		h.log = slog.New(secret.HandlerFunc(h.redact, h.opts.Logger.Handler()))
	} else {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.opts.ClientInfo == nil {
		h.opts.ClientInfo = &mcp.Implementation{Name: "switchboard", Version: Version}
	}

	seen := map[string]bool{}
	for _, sc := range servers {
		if seen[sc.ID] {
			return nil, fmt.Errorf("server %q is declared twice", sc.ID)
		}
		seen[sc.ID] = true
		h.servers = append(h.servers, newServer(h, sc))
	}
	for _, ip := range h.opts.InProcess {
		switch {
		case ip.Server == nil:
			return nil, fmt.Errorf("in-process server %q: no server", ip.ID)
		case seen[ip.ID]:
			return nil, fmt.Errorf("in-process server %q: a configured server has that id too; rename the configured one", ip.ID)
		}
		seen[ip.ID] = true
		s := newServer(h, config.Server{ID: ip.ID, Transport: TransportInProcess, Timeout: ip.Timeout, ToolsAllowlist: ip.ToolsAllowlist})
		s.inproc = ip.Server
		s.ownNames = ip.OwnNames
		h.servers = append(h.servers, s)
	}
	return h, nil
}

// Start connects to the servers concurrently, within ctx (which bounds the
// start only; the connections live until Close), then supervises them. A
// host starts once. Each server's tools are offered as soon as it is ready,
// before Start returns, and watchers learn of it ([EventCatalog]): a face
// made over the host before Start can serve the servers that are up while
// others are still starting.
//
// When a server that is not optional fails, Start closes the host once
// every server has had its first attempt (an install in progress is not cut
// short for another server's failure) and returns a [*StartError] naming
// every failed server.
func (h *Host) Start(ctx context.Context) error {
	if !h.started.CompareAndSwap(false, true) {
		return errors.New("host: already started")
	}
	done := h.startingChan()
	defer func() {
		h.starting.Store(nil)
		close(done)
	}()
	if h.ctx.Err() != nil {
		return ErrClosed
	}
	h.serversMu.Lock()
	servers := h.servers
	h.launched = true
	h.serversMu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() {
			// Each server is offered as soon as it is up, not when the
			// slowest is: a face that publishes the host while it starts
			// (the daemon's gateway) serves it at once. A required
			// server's failure is Start's error.
			ctx, cancel := s.stopping(ctx) // removed meanwhile: stop connecting
			defer cancel()
			if s.startLazy() || s.connect(ctx, !s.cfg.Optional) {
				h.joined(s)
			}
		})
	}
	wg.Wait()

	var failed []*ServerError
	for _, s := range servers {
		st := s.status()
		if st.State == StateFailed && !s.cfg.Optional {
			failed = append(failed, &ServerError{Server: s.cfg.ID, Err: st.Err})
		}
	}
	if len(failed) > 0 {
		h.Close()
		return &StartError{Failed: failed}
	}
	h.catalogMu.Lock()
	h.rebuildCatalog() // there is a catalog, if empty, when none came up
	h.catalogMu.Unlock()
	h.superviseAll(servers)
	return nil
}

// joined tells the watchers that what s offers changed, now that s is
// ready (or lazily idle with its cached tools) and the catalog has its
// tools (server.offer): at the start, after a restart, when it joins late
// or wakes.
func (h *Host) joined(s *server) {
	for _, k := range []ChangeKind{ToolsChanged, ResourcesChanged, PromptsChanged} {
		h.changed(Change{Server: s.cfg.ID, Kind: k})
	}
}

// Starting returns a channel closed when Start returns, while Start runs
// (every server has not had its first attempt yet); nil before and after.
// A face that serves while the host starts (the daemon's gateway) waits on
// it for a tool that may still come.
func (h *Host) Starting() <-chan struct{} {
	if ch := h.starting.Load(); ch != nil {
		return *ch
	}
	return nil
}

// WillStart makes the host starting (see [Host.Starting]) before Start
// runs. A face that serves at once while Start runs in another goroutine
// (the daemon) calls it first, so that no request arrives between the two
// and finds the host neither starting nor started (a listing then had no
// tools to wait for, and came back empty). Start must follow; a host
// already started is left as it is.
func (h *Host) WillStart() {
	if !h.started.Load() {
		h.startingChan()
	}
}

// startingChan returns the channel Starting reports, made if need be.
func (h *Host) startingChan() chan struct{} {
	for {
		if ch := h.starting.Load(); ch != nil {
			return *ch
		}
		done := make(chan struct{})
		if h.starting.CompareAndSwap(nil, &done) {
			return done
		}
	}
}

// sessionOptions are the options of every connection to a server.
func (h *Host) sessionOptions() *mcp.ClientSessionOptions {
	if h.opts.ProtocolVersion == "" {
		return nil
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: h.opts.ProtocolVersion}
}

// Version is Switchboard's version as announced to servers (clientInfo),
// and by the gateway to its clients (serverInfo): the module's version
// from the build information (a release tag, or a pseudo-version when
// built in a checkout), or "devel+COMMIT" — what `switchboard version`
// prints first.
var Version = version.Read().Short()

// Redactor returns the redactor that holds every secret resolved for the
// host's servers.
func (h *Host) Redactor() *secret.Redactor { return h.red }

// Close disconnects from every server and stops every child process and
// goroutine the host started, and ends every watcher (after its buffered
// events). It is idempotent and safe to call concurrently.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		h.cancel()
		// After cancel: AddServer refuses a closed host under serversMu,
		// so no server joins after this snapshot.
		servers := h.list()
		var wg sync.WaitGroup
		errs := make([]error, len(servers))
		for i, s := range servers {
			wg.Go(func() { errs[i] = s.close() })
		}
		wg.Wait()
		h.spawnMu.Lock()
		h.closing = true
		h.spawnMu.Unlock()
		h.spawned.Wait()
		h.events.close()
		h.closeErr = errors.Join(errs...)
	})
	return h.closeErr
}

// Done returns a channel closed when the host is closed: by [Host.Close],
// or by [Host.Start] when a required server failed (before Start's
// [Host.Starting] channel is closed).
func (h *Host) Done() <-chan struct{} { return h.ctx.Done() }

// spawn runs f on a goroutine of the host's: Close cancels the host's
// context (h.ctx), which f must heed, and waits for f to return. Once
// Close has begun waiting, f is not run, and spawn reports false.
func (h *Host) spawn(f func()) bool {
	h.spawnMu.Lock()
	defer h.spawnMu.Unlock()
	if h.closing {
		return false
	}
	h.spawned.Go(f)
	return true
}

// Servers reports every server's status, in declaration order.
func (h *Host) Servers() []ServerStatus {
	servers := h.list()
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		out = append(out, s.status())
	}
	h.mu.RLock()
	cat := h.catalog
	h.mu.RUnlock()
	if cat != nil {
		for i := range out {
			out[i].Tools = cat.counts[out[i].ID]
			out[i].Skipped = slices.Clone(cat.skipped[out[i].ID])
			out[i].Warnings = append(out[i].Warnings, cat.warnings[out[i].ID]...)
		}
	}
	return out
}

func (h *Host) server(id string) (*server, error) {
	servers := h.list()
	for _, s := range servers {
		if s.cfg.ID == id {
			return s, nil
		}
	}
	ids := make([]string, len(servers))
	for i, s := range servers {
		ids[i] = s.cfg.ID
	}
	return nil, fmt.Errorf("%w: %q (configured: %s)", ErrUnknownServer, id, strings.Join(ids, ", "))
}

// list is the servers now: a snapshot, never changed in place.
func (h *Host) list() []*server {
	h.serversMu.Lock()
	defer h.serversMu.Unlock()
	return h.servers
}

// Skipped is a tool the host does not offer.
type Skipped struct {
	Tool   string // the server's own name for it
	Reason string
}

// lookupEnv is os.LookupEnv unless the options say otherwise.
func (h *Host) lookupEnv() func(string) (string, bool) {
	if h.opts.LookupEnv != nil {
		return h.opts.LookupEnv
	}
	return os.LookupEnv
}
