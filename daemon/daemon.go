// Package daemon is Switchboard's long-running process, what `switchboard
// serve` runs: one [host.Host] over the configured servers, the faces
// mounted on one HTTP listener (the MCP gateway at /mcp, /sse, /message and
// /ws; the REST API and web UI beside them, mounted with [Daemon.Handle]
// and its kin) behind its one guard (faces.go), the state store, a local
// socket for CLI commands, and a graceful shutdown.
//
// A daemon starts in order, listens early and serves at once:
//
//	ln, err := daemon.Listen("", cfg.Gateway) // bind first: the address is known at once, a busy port fails fast
//	d, err := daemon.New(ctx, ln, &daemon.Options{Config: cfg, Host: hostOpts, OnReady: ...})
//	err = d.Run(ctx) // serve, start the servers meanwhile, serve until ctx ends, shut down
//
// Run serves HTTP before the servers are up: a client's initialize is
// answered at once, and each server is published as it comes up (clients
// get list_changed). Options.OnReady says when every server that is not
// optional is up; a required server that fails its first start fails Run
// (after every server has had its first attempt). When ctx ends, GET
// /readyz answers 503 at once; with [gateway] shutdown_drain the daemon
// serves on as before that long, for a load balancer to take it out of
// rotation. Then requests in flight, over every transport, get one grace
// period ([gateway] shutdown_grace); past it they are cancelled, upstream
// too; then every connection, the gateway, the host (with its child
// processes) and the store are closed, and Run returns.
// [Daemon.ServeStdio] serves one client over a pair of streams instead,
// for clients that start a process (Claude Desktop, Cursor), the same way.
//
// With Options.Socket (see [SocketPath]) the daemon also serves the CLI
// commands of its own configuration on a unix socket only its user can
// reach, so that they use its running servers instead of starting their
// own: the listener's routes, /api/v1 and the MCP endpoint among them, as
// the owner's ([SocketClient]).
//
// The servers are the configuration's (all, or [gateway] servers) and the
// servers added at run time, kept in the state store; a configured server
// wins over a stored one with the same id, and the clash is logged. A
// server added at run time is optional to the daemon, whatever its entry
// says: one that cannot start, or whose stored entry cannot be served,
// fails alone and is reported (ListServers), and never stops the daemon
// whose faces can remove it.
package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/telemetry"
	"github.com/switchboardmcp/switchboard/toolsearch"
	"github.com/switchboardmcp/switchboard/workflow"
)

// Options configures a [Daemon]. Config is required.
type Options struct {
	// Config is the configuration in force: its servers, [gateway] and
	// [network] tables.
	Config *config.Config
	// Host is the base of the host's options: logger, redactor, secrets,
	// environment, network policy. The daemon adds what the gateway needs
	// (gateway.HostOptions) and, unless set, its store as the tool cache.
	// Nil means defaults.
	Host *host.Options
	// Logger receives the daemon's diagnostics: each server's state
	// changes, refused requests, the shutdown. Nil discards them.
	Logger *slog.Logger
	// HTTPErrorLog receives net/http's own errors (malformed requests);
	// nil discards them.
	HTTPErrorLog *log.Logger
	// Database is the state database for store.Open: "" means the
	// configuration's [state] database, else the default file. Ignored
	// when Store is set.
	Database string
	// Store is the state store to use instead of opening Database; the
	// daemon does not close it.
	Store *store.Store
	// OnHost, when set, is called with the host before it starts, to
	// watch it (host.Host.Watch) from the first event on.
	OnHost func(*host.Host)
	// OnReady, when set, is called once, when every server that is not
	// optional is up (ready, or lazily idle with its cached tools), with
	// every server's status then: optional servers may still be starting,
	// or have failed (they are retried in the background and join when
	// they come up). With workflows, not before the engine's launch was
	// tried (the host's start is over), so that runs can be started then.
	// It is not called when the start fails.
	OnReady func(servers []host.ServerStatus)
	// Socket is the path of the local socket to serve CLI commands on as
	// well ([SocketPath]): every route of the listener (the faces mounted,
	// the MCP endpoint), a request there being the owner's without a
	// token; owner-only, in an owner-only folder. "" serves none. A
	// socket another daemon answers on is left to it; a stale one (its
	// daemon gone) is replaced.
	Socket string
	// Workflows are the workflows to run (LoadWorkflows): with any, the
	// daemon runs a durable engine on the state database, launched once
	// the host is started (it then adopts the runs left pending by
	// processes that are gone), publishes [gateway] workflows as tools
	// and serves them to CLI commands on the local socket.
	Workflows []*workflow.Workflow
	// DurableTasks makes the calls of the gateway's tasks to idempotent
	// tools durable (gateway.TaskJournal; `serve` sets it): a call in
	// flight at a crash is called again by recovery, here once restarted
	// or on a surviving replica. It needs the workflow engine, which the
	// daemon then runs without workflows too, launched once the host's
	// start is over (not waited for by OnReady): a task made before that
	// is not durable.
	DurableTasks bool
	// Agents runs the workflows' agent steps (over the host OnHost
	// gives); nil fails them.
	Agents workflow.Agents
	// AgentRunner runs agents started from the management faces over the
	// daemon's host (StartAgentRun); nil: they run none.
	AgentRunner AgentRunner
	// Telemetry records the daemon's metrics and traces (served at
	// /metrics); the daemon does not close it. Nil: the daemon makes its
	// own from the configuration's [telemetry] table, and closes it.
	Telemetry *telemetry.Telemetry
	// Endpoint names the endpoint ([[endpoints]] name) ServeStdio serves
	// its client: `serve --stdio --endpoint NAME`. "" is the default one.
	Endpoint string
	// Embedder computes the embeddings search mode blends into its
	// ranking ([search]; the CLI makes it with package llm, which the
	// daemon does not import); nil ranks lexically.
	Embedder toolsearch.Embedder
	// CodeRunner runs code mode's run_code programs (gateway.CodeRunner;
	// the CLI gives package gateway/coderun's, where the build has code
	// mode); nil: run_code answers that code mode is not available.
	CodeRunner gateway.CodeRunner
}

// Daemon is one running Switchboard. Make it with [New].
type Daemon struct {
	opts    Options
	ln      net.Listener // nil for stdio
	log     *slog.Logger
	red     *secret.Redactor
	store   *store.Store
	ownDB   bool
	servers []config.Server

	// opsMu serialises the server operations (servers.go), which change
	// the store and the host together, and the changes other processes
	// make (follow.go).
	opsMu sync.Mutex
	// applied is the stored version of each run-time server the host
	// runs, under opsMu.
	applied map[string]int64
	// broken holds, by id, why a run-time server the store has enabled
	// cannot be served as stored (its entry does not decode, or is
	// refused here): it is not in the host, and shows failed with that
	// error until it is replaced, disabled or deleted. Under mu.
	broken map[string]error
	// epBroken holds, by name, why a stored endpoint is not served
	// (endpoints.go). Under mu.
	epBroken map[string]error
	// ready: every required server was up once (Options.OnReady), and
	// the host has not closed since (/readyz).
	ready atomic.Bool
	// fenced: the workflow executor lost its lock (watchExecutor); the
	// daemon is never ready again.
	fenced atomic.Bool
	// stopping: Run was told to stop; the daemon drains, then shuts down,
	// and is not ready again.
	stopping atomic.Bool
	// launched: the workflow engine's launch was tried (startHost); ready
	// waits for it, so that a run can be started once the daemon says it
	// is ready. recheck is watch's readiness check, run again then.
	launched atomic.Bool
	recheck  func()

	mu     sync.Mutex
	h      *host.Host
	g      *gateway.Gateway
	used   bool   // Run or ServeStdio was called
	socket string // the local socket served, once listening
	faces  []face // mounted with Handle, HandleAdmin and HandleOpen
	// authToken is [gateway] auth_token resolved, once Run has it.
	authToken string
	guard     *guard.Guard // the listener's, once Run has mounted every route
	wf        *Workflows
	// engine is wf, or without workflows the engine opened for durable
	// tasks alone (Options.DurableTasks); nil: neither.
	engine *Workflows
	tel    *telemetry.Telemetry
	ownTel bool

	agents agents // runs started with StartAgentRun

	replica  string // this daemon's id among the replicas (replicas.go)
	stateKey []byte // signs the gateway's requestStates, the same for every replica
	// stateKeyFallbacks also verify them (encryption_key_fallbacks).
	stateKeyFallbacks [][]byte

	closeOnce sync.Once
	closeErr  error
}

// Listen binds addr, or [gateway] listen, or [config.DefaultGatewayListen]
// (port 0 picks a free one), and refuses to serve beyond loopback without
// [gateway] auth_token or [gateway.auth].
func Listen(addr string, gw config.Gateway) (net.Listener, error) {
	addr = cmp.Or(addr, gw.Listen, config.DefaultGatewayListen)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if !isLoopback(ln.Addr()) && gw.AuthToken == "" && gw.Auth == nil {
		ln.Close()
		return nil, &UsageError{fmt.Sprintf("serve: listening on %s: serving beyond loopback needs auth_token (set [gateway] auth_token to a {{secrets.NAME}} placeholder) or [gateway.auth]", ln.Addr())}
	}
	if gw.Auth != nil && gw.Auth.Resource == "" && !isLoopback(ln.Addr()) {
		ln.Close()
		return nil, &UsageError{fmt.Sprintf("serve: listening on %s: [gateway.auth] needs resource (the URL clients reach /mcp at) beyond loopback", ln.Addr())}
	}
	return ln, nil
}

// ErrNoServers: a daemon without a listener ([Daemon.ServeStdio]) has no
// server to serve, configured or stored. A daemon with one starts without
// servers: its REST API and web UI add them.
var ErrNoServers = errors.New("no MCP servers to serve")

// A UsageError is an error in what the daemon was asked to do (a
// configuration or an address it cannot serve), rather than a failure
// while doing it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

var osLookupEnv = os.LookupEnv

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// New makes a daemon that will serve on ln (nil for [Daemon.ServeStdio]).
// It opens the state store (and the workflow engine) and reads the servers
// to serve, each step bounded by openTimeout and ended early by ctx (the
// caller's Ctrl-C); nothing else connects until Run. With ln, there may be
// none yet (they are added through the REST API or the web UI); without,
// none is ErrNoServers. The daemon owns ln: Close closes it.
func New(ctx context.Context, ln net.Listener, opts *Options) (*Daemon, error) {
	if opts == nil || opts.Config == nil {
		return nil, errors.New("daemon: Options.Config is required")
	}
	d := &Daemon{opts: *opts, ln: ln, applied: map[string]int64{}, broken: map[string]error{}, epBroken: map[string]error{}}
	d.opts.Host = &host.Options{}
	if opts.Host != nil {
		*d.opts.Host = *opts.Host
	}
	d.log = cmp.Or(d.opts.Logger, slog.New(slog.DiscardHandler))
	d.red = d.opts.Host.Redactor
	if d.red == nil {
		d.red = secret.NewRedactor()
		d.opts.Host.Redactor = d.red
	}
	// [state] database's placeholders (a PostgreSQL password) are
	// resolved once, for the store and the workflow engine.
	database := opts.Database
	if database == "" {
		var err error
		if database, err = opts.Config.State.ResolveDatabase(d.lookupEnv(), d.opts.Host.Secrets, d.red); err != nil {
			d.closeListener()
			return nil, err
		}
	}
	d.store = opts.Store
	if d.store == nil {
		ctx, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		st, err := store.Open(ctx, database, nil)
		if err != nil {
			d.closeListener()
			return nil, err
		}
		d.store, d.ownDB = st, true
	}
	if d.opts.Host.ToolCache == nil {
		d.opts.Host.ToolCache = d.store
	}
	if d.opts.Host.Pins == nil {
		d.opts.Host.Pins = d.store
	}
	d.replica = newReplicaID()
	{
		ctx, cancel := context.WithTimeout(ctx, openTimeout)
		key, fallbacks, err := derivedStateKey(opts.Config.State, "gateway request state v1", d.lookupEnv(), d.opts.Host.Secrets, d.red)
		if key == nil && err == nil {
			key, err = d.store.Key(ctx, stateKeyName)
		}
		cancel()
		if err != nil {
			d.Close()
			return nil, err
		}
		d.stateKey, d.stateKeyFallbacks = key, fallbacks
	}
	servers, err := d.loadServers(ctx)
	if err != nil {
		d.Close()
		return nil, err
	}
	if len(servers) == 0 && ln == nil {
		// Over stdio nothing can add one: the REST API and the web UI
		// are on the listener. With one, the daemon starts empty and
		// servers are added there (kept in the store).
		d.Close()
		return nil, fmt.Errorf("%w: none configured, none added at run time (%s)", ErrNoServers, d.store.Where())
	}
	d.servers = servers
	d.tel = opts.Telemetry
	if d.tel == nil {
		tc := opts.Config.Telemetry
		t, err := telemetry.New(&telemetry.Options{Logger: d.opts.Logger, Redactor: d.red,
			OTLPEndpoint: tc.OTLPEndpoint, OTLPInterval: tc.OTLPInterval, AllowLocalEndpoint: tc.AllowLocalEndpoint, RecordPayloads: tc.RecordPayloads,
			MaxToolLabels: tc.MaxToolLabels, Network: d.opts.Host.Network, Version: host.Version, Usage: d.store})
		if err != nil {
			d.Close()
			return nil, err
		}
		d.tel, d.ownTel = t, true
	}
	if len(opts.Workflows) > 0 {
		ctx, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		wf, err := OpenWorkflows(ctx, &WorkflowOptions{Config: opts.Config, Workflows: opts.Workflows, Kind: "serve",
			Database: database, Agents: opts.Agents, Redactor: d.red, Logger: d.opts.Logger, Telemetry: d.tel,
			Secrets: d.opts.Host.Secrets, LookupEnv: d.lookupEnv(), Calls: d.taskCalls()})
		if err != nil {
			d.Close()
			return nil, err
		}
		d.wf, d.engine = wf, wf
	} else if opts.DurableTasks {
		// No workflows: an engine for the tasks' durable calls alone.
		ctx, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		wf, err := OpenWorkflows(ctx, &WorkflowOptions{Config: opts.Config, Kind: "serve", Database: database, Redactor: d.red,
			Logger: d.opts.Logger, Secrets: d.opts.Host.Secrets, LookupEnv: d.lookupEnv(), Calls: d.taskCalls()})
		if err != nil {
			d.Close()
			return nil, err
		}
		d.engine = wf
	}
	return d, nil
}

// openTimeout bounds each step of New's work on the database (opening the
// store, its key, the stored servers, the workflow engine): a database
// that does not answer fails the start rather than hold it.
const openTimeout = 30 * time.Second

// loadServers returns the servers to serve: the configuration's (those
// [gateway] servers names, or all), then the enabled servers stored at run
// time, except one whose id a configured server has. A stored server that
// cannot be served as stored is not an error of the daemon's: it is
// reported (logged, and failed in ListServers) until it is replaced or
// deleted, and the others are served.
func (d *Daemon) loadServers(ctx context.Context) ([]config.Server, error) {
	cfg := d.opts.Config
	var out []config.Server
	if ids := cfg.Gateway.Servers; ids != nil {
		for _, id := range ids {
			if s, ok := cfg.Server(id); ok {
				out = append(out, s)
			}
		}
	} else {
		out = append(out, cfg.Servers...)
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	recs, err := d.store.Servers(ctx)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		if !rec.Enabled {
			continue
		}
		if _, clash := cfg.Server(rec.ID); clash {
			d.log.Warn("a server added at run time has the id of a configured one; the configured one wins", "server", rec.ID, "database", d.store.Where())
			continue
		}
		s, err := DecodeStored(rec, d.store.Where())
		if err == nil {
			err = cfg.CheckServerURL(s)
		}
		if err != nil {
			d.setBroken(rec.ID, err)
			continue
		}
		out = append(out, runtimeServer(s))
		d.applied[rec.ID] = rec.Version
	}
	return out, nil
}

// runtimeServer is s, a server added at run time, as the daemon runs it:
// optional, whatever its entry says. A server added through the REST API
// or the web UI never stops the daemon: one that cannot start (a command
// that exits at once, a placeholder that does not resolve) fails alone, is
// reported and retried like an optional server, and the faces that can
// remove it go on serving (before, it failed every start of serve, before
// the API could remove it).
func runtimeServer(s config.Server) config.Server {
	s.Optional = true
	return s
}

// setBroken records (err) or clears (nil) why run-time server id cannot be
// served as stored; a new reason is logged, with what to do.
func (d *Daemon) setBroken(id string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		delete(d.broken, id)
		return
	}
	if prev, ok := d.broken[id]; !ok || prev.Error() != err.Error() {
		d.log.Error("a server added at run time cannot be served as stored; replace it through the REST API or the web UI, or remove it (switchboard remove "+id+")",
			"server", id, "database", d.store.Where(), "err", err)
	}
	d.broken[id] = err
}

// brokenErr is why run-time server id cannot be served as stored; nil when
// it can.
func (d *Daemon) brokenErr(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.broken[id]
}

// DecodeStored decodes a server stored at run time: its config is an
// [[mcp_servers]] table as JSON, decoded and validated like one. where
// names the database in errors.
func DecodeStored(rec store.ServerRecord, where string) (config.Server, error) {
	var m map[string]any
	if err := json.Unmarshal(rec.Config, &m); err != nil {
		return config.Server{}, fmt.Errorf("%s: server %q: its stored entry is not JSON: %w", where, rec.ID, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	m["id"] = rec.ID
	return config.DecodeServer(where, "servers."+rec.ID, m, nil)
}

// Host is the daemon's host, once Run or ServeStdio has made it (before
// its servers are up); nil before.
func (d *Daemon) Host() *host.Host {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.h
}

// Store is the daemon's state store.
func (d *Daemon) Store() *store.Store { return d.store }

// Socket is the local socket the daemon serves CLI commands on, once it
// listens there; "" before, or when it does not (none asked for, another
// daemon's, or no private folder to put it in: logged).
func (d *Daemon) Socket() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.socket
}

// Addr is where the daemon listens; nil for stdio.
func (d *Daemon) Addr() net.Addr {
	if d.ln == nil {
		return nil
	}
	return d.ln.Addr()
}

// build makes the host and the gateway over it, without starting the
// host: the gateway serves at once what the host offers, and follows it as
// its servers come up.
func (d *Daemon) build(gwOpts *gateway.Options) (*gateway.Gateway, *host.Host, error) {
	d.mu.Lock()
	if d.used {
		d.mu.Unlock()
		return nil, nil, errors.New("daemon: already run")
	}
	d.used = true
	d.mu.Unlock()
	gw := d.opts.Config.Gateway
	ho := gateway.HostOptions(d.opts.Host, gwOpts)
	if gw.ToolNameFormat != "" {
		ho.ToolNameFormat = gw.ToolNameFormat
	}
	if d.wf != nil {
		ip, ok, err := d.wf.InProcess()
		if err != nil {
			return nil, nil, err
		}
		if ok {
			ho.InProcess = append(slices.Clone(ho.InProcess), ip)
		}
	}
	if ho.ClientMiddleware == nil {
		ho.ClientMiddleware = d.tel.ClientMiddleware
	}
	h, err := host.New(d.servers, ho)
	if err != nil {
		return nil, nil, err
	}
	d.mu.Lock()
	d.h = h
	d.mu.Unlock()
	d.tel.Watch(h)
	if d.opts.OnHost != nil {
		d.opts.OnHost(h)
	}
	gwOpts.EndpointMiddleware = func(e gateway.Endpoint) []mcp.Middleware {
		// The server of a tool by the name the endpoint's clients call it.
		serverOf := func(name string) (string, bool) {
			if hostName, ok := e.Rename[name]; ok {
				name = hostName
			}
			t, ok := h.Tool(name)
			return t.Server, ok
		}
		return []mcp.Middleware{d.tel.ServerMiddleware(e.Name, serverOf)}
	}
	g, err := gateway.New(h, gwOpts)
	if err != nil {
		return nil, nil, err
	}
	// The telemetry sees the gateway's sessions end without a goroutine
	// waiting on each.
	d.tel.FollowSessions(g.Sessions)
	d.mu.Lock()
	d.g = g
	d.mu.Unlock()
	d.watch(h, g)
	return g, h, nil
}

// starting is a host's start, run in the background while the faces
// serve.
type starting struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error // once done
}

// startHost starts h on a goroutine of its own, within ctx; then, with
// workflows, launches their engine over it (which resumes the runs left
// pending).
func (d *Daemon) startHost(ctx context.Context, h *host.Host) *starting {
	ctx, cancel := context.WithCancel(ctx)
	st := &starting{cancel: cancel, done: make(chan struct{})}
	h.WillStart() // starting from now: the faces already serve
	go func() {
		defer close(st.done)
		st.err = h.Start(ctx)
		if st.err == nil && d.engine != nil {
			if err := d.engine.Launch(ctx, h, true); err != nil {
				d.log.Error("workflows: the engine did not launch", "err", err)
			}
			d.launched.Store(true)
			if d.recheck != nil {
				d.recheck()
			}
		}
	}()
	return st
}

// stop cancels the start if it is still running and waits for it: the
// host must not be closed while Start is connecting its servers.
func (st *starting) stop() {
	st.cancel()
	<-st.done
}

// watch logs every server:state change, for the life of the host (a
// long-running gateway's log says when each server came and went), and
// calls Options.OnReady when every required server is first up and the
// gateway publishes what they offer.
func (d *Daemon) watch(h *host.Host, g *gateway.Gateway) {
	w := h.Watch(0)
	var mu sync.Mutex // check runs here and after the engine's launch
	ready := false
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		if ready {
			return
		}
		if d.wf != nil && !d.launched.Load() {
			// Not before runs can be started (/readyz, OnReady): the
			// engine launches once the host's start is over. (An engine
			// for durable tasks alone is not waited for: a task made
			// before its launch is a row alone, reported interrupted if
			// its serve stops.)
			return
		}
		sts := h.Servers()
		for _, st := range sts {
			if !st.Optional && !up(st.State) {
				return
			}
		}
		ready = true
		// Ready means served: a client that lists the tools now gets
		// theirs.
		if err := g.Sync(context.Background()); err != nil {
			return // closed meanwhile
		}
		d.ready.Store(true)
		sts = h.Servers()
		var ids []string
		for _, st := range sts {
			if up(st.State) {
				ids = append(ids, st.ID)
			}
		}
		d.log.Info("ready", "servers", ids)
		if d.opts.OnReady != nil {
			d.opts.OnReady(sts)
		}
	}
	d.recheck = check
	go func() {
		defer w.Close()
		defer d.ready.Store(false) // the events end when the host closes
		// With nothing required, ready at once.
		check()
		// The events end when the host closes.
		for ev := range w.Events(context.Background()) {
			switch ev.Kind {
			case host.EventState:
				e := ev.Status.Event()
				d.log.Info("server:state", "server", e.Server, "state", e.State, "restarts", e.Restarts, "error", e.Error)
			case host.EventCatalog, host.EventDropped:
				// A server's tools are in the catalog once it says so
				// (after its state says it is ready).
				check()
			}
		}
	}()
}

// up reports whether a server in state st offers its tools: ready, or
// lazily idle with its cached ones.
func up(st host.State) bool {
	return st == host.StateReady || st == host.StateDegraded || st == host.StateLazy
}

// gatewayOptions are the gateway's options from [gateway] and
// [[endpoints]]; an error names an endpoint's token that does not
// resolve.
func (d *Daemon) gatewayOptions() (*gateway.Options, error) {
	o := &gateway.Options{Logger: d.opts.Logger, MaxWaitingCalls: d.opts.Config.Gateway.MaxSessions, MaxRequests: d.opts.Config.Gateway.MaxRequests,
		Replica: d.replica, StateKey: d.stateKey, StateKeyFallbacks: d.stateKeyFallbacks}
	if d.store.Backend() == "postgres" {
		o.Peers = d.peer
	}
	// The stored endpoints too; bounded as the stored servers' reading.
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	eps, err := d.allEndpoints(ctx)
	if err != nil {
		return nil, err
	}
	o.Endpoints = eps
	cd := d.opts.Config.Code.WithDefaults()
	o.Code = gateway.CodeBudget{CPUTime: cd.CPUTime, WallTime: cd.WallTime, Memory: cd.Memory, Output: cd.Output}
	o.Embeddings = d.embeddings()
	o.CodeRunner = d.opts.CodeRunner
	// Tasks (the MCP tasks extension) live in the state database.
	gw := d.opts.Config.Gateway
	o.Tasks = taskStore{d.store}
	o.TaskWait, o.TaskTTL, o.TaskPollInterval = gw.TaskWait, gw.TaskTTL, gw.TaskPollInterval
	if d.wf != nil && len(gw.Workflows) > 0 {
		// A published workflow's call is a task backed by its run.
		o.Runs = runTasks{d.wf.Engine}
	}
	if d.engine != nil {
		// The calls of tasks to idempotent tools are durable, and the
		// rows are written through the engine's store: on SQLite, one
		// handle with DBOS's writes (workflow.Engine.Store).
		o.Tasks = taskStore{d.engine.Engine.Store()}
		o.TaskJournal = taskJournal{d.engine.Engine}
	}
	return o, nil
}

// embeddings are search mode's embeddings: Options.Embedder's, named by
// [search] kind and model, cached in the state store; nil without an
// Embedder.
func (d *Daemon) embeddings() *gateway.Embeddings {
	if d.opts.Embedder == nil {
		return nil
	}
	s := d.opts.Config.Search
	return &gateway.Embeddings{Embedder: d.opts.Embedder, Model: s.Kind + ":" + s.Model, Cache: d.store}
}

// endpoints are the MCP endpoints the daemon serves, over its one host:
// the default one (gateway.DefaultEndpoint), then one per [[endpoints]]
// table and per endpoint stored (namedEndpoint, with its own auth_token,
// resolved, and scopes), each under [gateway.auth.policy] and without the
// tools of the workflows published with hide_tools.
func (d *Daemon) endpoints(stored []config.Endpoint) ([]gateway.Endpoint, error) {
	cfg := d.opts.Config
	ep := gateway.DefaultEndpoint
	if a := cfg.Gateway.Auth; a != nil {
		ep.Policy = a.Policy
	}
	if d.wf != nil {
		ep.HideTools = d.wf.Hidden()
	}
	ep.Mode = cfg.Gateway.Mode
	out := []gateway.Endpoint{ep}
	owner, err := cfg.Gateway.ResolveAuthToken(d.lookupEnv(), d.opts.Host.Secrets, d.red)
	if err != nil {
		return nil, err
	}
	tokens := map[string]string{} // a token → the endpoint it opens
	for _, e := range slices.Concat(cfg.Endpoints, stored) {
		tok, err := e.ResolveAuthToken(d.lookupEnv(), d.opts.Host.Secrets, d.red)
		if err != nil {
			return nil, err
		}
		if msg := tokenClash(tok, owner, tokens); msg != "" {
			return nil, fmt.Errorf("%s: endpoints[%s].auth_token: %s", e.Source, e.Name, msg)
		}
		if tok != "" {
			tokens[tok] = e.Name
		}
		ne := namedEndpoint(cfg, e, ep)
		ne.AuthToken, ne.Scopes = tok, slices.Clone(e.Scopes)
		out = append(out, ne)
	}
	return out, nil
}

// tokenClash says why tok may not be an endpoint's own token, "" when it
// may: one credential, one scope. A token that is also the owner's would
// open everything; one another endpoint has (in taken, by token) would
// open both.
func tokenClash(tok, owner string, taken map[string]string) string {
	other, shared := taken[tok]
	switch {
	case tok == "":
		return ""
	case tok == owner:
		return "the same token as [gateway] auth_token, which opens every endpoint and the management faces: give the endpoint a token of its own"
	case shared:
		return fmt.Sprintf("the same token as endpoint %q's: give each endpoint a token of its own", other)
	}
	return ""
}

// namedEndpoint is the gateway's endpoint of e, with def's policy and
// hidden tools. The workflows [gateway] workflows publishes are offered
// only where e lists them: their tools are hidden elsewhere, and added to
// e's Tools (exact names, last: no glob of e's excludes them) and Servers
// where it lists them.
func namedEndpoint(cfg *config.Config, e config.Endpoint, def gateway.Endpoint) gateway.Endpoint {
	mcpPath, sse, msg, ws := e.Paths()
	ep := gateway.Endpoint{
		Name: e.Name, Path: mcpPath, SSE: sse, Message: msg, WebSocket: ws,
		Servers: slices.Clone(e.Servers), Tools: slices.Clone(e.Tools),
		Rename: e.Rename, Override: e.Override, Instructions: e.Instructions,
		Policy: def.Policy, HideTools: slices.Clone(def.HideTools), Mode: e.Mode,
	}
	for _, id := range cfg.Gateway.Workflows {
		name := cfg.Gateway.WorkflowToolName(id)
		switch {
		case !slices.Contains(e.Workflows, id):
			ep.HideTools = append(ep.HideTools, name)
		case ep.Tools != nil:
			ep.Tools = append(ep.Tools, name)
		}
	}
	if ep.Servers != nil && len(e.Workflows) > 0 {
		ep.Servers = append(ep.Servers, workflow.InProcessServerID)
	}
	return ep
}

func (d *Daemon) grace() time.Duration {
	return cmp.Or(d.opts.Config.Gateway.ShutdownGrace, config.DefaultGatewayShutdownGrace)
}

// Close closes what the daemon holds: the listener, the gateway, the host
// with its servers and child processes, and the store it opened. Run and
// ServeStdio close it when they return. It is idempotent.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		d.closeListener()
		d.mu.Lock()
		g, h := d.g, d.h
		d.mu.Unlock()
		var errs []error
		if g != nil {
			errs = append(errs, g.Close())
		}
		// Before the host: runs call its tools.
		d.agents.close()
		if d.engine != nil {
			// Before the host: a run's steps call its tools. After the
			// gateway: the tasks' calls it follows have ended, or are
			// left pending for recovery.
			errs = append(errs, d.engine.Close())
		}
		if h != nil {
			errs = append(errs, h.Close())
		}
		if d.ownTel && d.tel != nil {
			// After the host: its last events are recorded; bounded, as a
			// collector that does not answer must not hold the shutdown.
			ctx, cancel := context.WithTimeout(context.Background(), telemetryFlush)
			if err := d.tel.Close(ctx); err != nil {
				d.log.Warn("telemetry: the last export failed", "err", d.red.Redact(err.Error()))
			}
			cancel()
		}
		if d.ownDB && d.store != nil {
			errs = append(errs, d.store.Close())
		}
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

func (d *Daemon) closeListener() {
	if d.ln != nil {
		if err := d.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrClosed) {
			d.log.Debug("closing the listener", "err", err)
		}
	}
}

// Workflows is the daemon's workflow engine; nil when it runs no
// workflows (Options.Workflows is empty).
func (d *Daemon) Workflows() *Workflows { return d.wf }

// telemetryFlush bounds the last export at Close.
const telemetryFlush = 5 * time.Second

// Telemetry is the daemon's telemetry: Options.Telemetry or its own.
func (d *Daemon) Telemetry() *telemetry.Telemetry { return d.tel }
