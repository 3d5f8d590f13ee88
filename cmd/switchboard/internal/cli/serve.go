package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/store"
)

func (e *env) serveCommand() *cobra.Command {
	var listen, endpoint string
	var stdio bool
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] [--stdio [--endpoint NAME]]",
		Short: "Serve the configured servers as one MCP server (the gateway)",
		Long: `Connects to the configured servers and serves their tools, resources and
prompts as one MCP server: Streamable HTTP at /mcp, the legacy HTTP+SSE
transport at /sse and WebSocket at /ws, on ` + config.DefaultGatewayListen + ` unless
--listen or [gateway] listen says otherwise (port 0 picks a free one). The
first line on stderr is the address actually bound, printed before the
servers start, and the next the web UI's; clients are served at once, and
each server's tools, resources and prompts join as it comes up (clients get
list_changed). A line then says when every server that is not optional is
up, with the optional ones still starting or failed (a line for each of
those follows when it comes up or fails):

  switchboard: serving MCP at http://127.0.0.1:7300/mcp (SSE at /sse, WebSocket at /ws)
  switchboard: web UI at http://127.0.0.1:7300/ (REST API at /api/v1)
  switchboard: ready (1.4s): 3 servers, 42 tools

A server that is not optional and fails to start makes serve exit 1, naming
it, once every server has had its first attempt; one that fails later is
restarted.

With no server configured, serve starts without any and says so: servers
are added in the web UI (/) or the REST API (/api/v1/servers) and kept in
the state database for the next start (a server added there is optional: one
that cannot start fails alone, and switchboard remove ID removes it), or
taken from the MCP clients with switchboard import. --stdio, which has
neither, refuses.

With --stdio it serves one client over stdin and stdout instead, for clients
that start a process (Claude Desktop, Cursor); nothing else is written to
stdout. The client's initialize is answered at once too. --endpoint NAME
serves it the named endpoint ([[endpoints]]) instead of the default one:
that endpoint's tools, names and instructions, as at /e/NAME/mcp.

Either way serve also listens on a local socket, owner-only, named by the
configuration (its files, their contents and the environment variables they
read): the servers, tools, call, resources, read, prompts and prompt
commands of the same configuration use its running servers instead of
starting their own, and answer in milliseconds (--no-daemon opts out).

The [gateway] table chooses the servers exposed, the tool names clients see,
allowed browser origins and a bearer token (required to listen beyond
loopback). Ctrl-C or SIGTERM shuts down gracefully: requests in flight get
[gateway] shutdown_grace (5 seconds unless set) to finish; past it they are
cancelled, upstream too, and serve exits. With [gateway] shutdown_drain it
first serves on that long while /readyz answers 503, for a load balancer to
send new requests elsewhere.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stdio && cmd.Flags().Changed("listen") {
				return usageErr("serve: --listen and --stdio exclude each other")
			}
			if endpoint != "" && !stdio {
				return usageErr("serve: --endpoint is for --stdio: over HTTP every endpoint is served, each at its path (/e/NAME/mcp)")
			}
			return e.serve(cmd.Context(), listen, stdio, endpoint)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "host:port to serve HTTP on (default [gateway] listen, else "+config.DefaultGatewayListen+")")
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve one client over stdin/stdout instead of HTTP")
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "with --stdio, serve the named endpoint ([[endpoints]] name) instead of the default one")
	return cmd
}

func (e *env) serve(ctx context.Context, listen string, stdio bool, endpoint string) error {
	start := time.Now()
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	if _, ok := cfg.Endpoint(endpoint); endpoint != "" && !ok {
		if err := e.checkStoredEndpoint(ctx, cfg, endpoint); err != nil {
			return err
		}
	}
	hostOpts, err := e.hostOptions(cfg)
	if err != nil {
		return err
	}
	var ln net.Listener
	if !stdio {
		// Listen early: bind before connecting the upstreams, so that the
		// address is known (and printed) at once and a busy port fails
		// fast.
		ln, err = daemon.Listen(listen, cfg.Gateway)
		if err != nil {
			return daemonErr(err)
		}
		ep := gateway.DefaultEndpoint
		fmt.Fprintf(e.stderr, "switchboard: serving MCP at http://%s%s (SSE at %s, WebSocket at %s)\n", ln.Addr(), ep.Path, ep.SSE, ep.WebSocket)
		if ui := uiAt(ln.Addr().String()); ui != "" {
			fmt.Fprintf(e.stderr, "switchboard: web UI at %s (REST API at /api/v1)\n", ui)
		}
		for _, ep := range cfg.Endpoints {
			p, _, _, _ := ep.Paths()
			fmt.Fprintf(e.stderr, "switchboard: endpoint %s at http://%s%s\n", ep.Name, ln.Addr(), p)
		}
	}
	// After the address line, which must come first; they do not stop
	// the start.
	for _, w := range cfg.Warnings {
		fmt.Fprintf(e.stderr, "switchboard: warning: %s\n", w.Error())
	}
	// After the address line, which must come first: opening the secret
	// store may warn.
	hostOpts.Secrets = e.secretStore()
	socket, err := daemon.SocketPath(cfg, e.getenv)
	if err != nil {
		hostOpts.Logger.Info("not serving CLI commands on a local socket", "err", err)
	}
	wfs, err := e.loadWorkflows(cfg)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return err
	}
	steps := e.agentSteps(cfg)
	embedder, err := e.embedder(cfg, hostOpts)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return err
	}
	r := &readiness{e: e, start: start, cfg: cfg}
	agents := &workflowAgents{s: steps}
	d, err := daemon.New(ctx, ln, &daemon.Options{
		Workflows:    wfs,
		DurableTasks: true,
		Agents:       agents,
		AgentRunner:  observedRunner{api.StepsRunner(steps), agents},
		Config:       cfg,
		Host:         hostOpts,
		Logger:       hostOpts.Logger,
		HTTPErrorLog: httpErrorLog(e),
		Store:        e.stateStore(cfg),
		Socket:       socket,
		Endpoint:     endpoint,
		Embedder:     embedder,
		CodeRunner:   codeRunner(),
		OnHost: func(h *host.Host) {
			steps.Host = h
			r.follow(h)
		},
		OnReady: r.ready,
	})
	if errors.Is(err, daemon.ErrNoServers) {
		return usageErr("%s (with --stdio nothing can add one: serve over HTTP to add servers in the web UI or the REST API)", noServers(cfg))
	}
	if err != nil {
		return daemonErr(err)
	}
	if ln != nil {
		in := ""
		if ui := uiAt(ln.Addr().String()); ui != "" {
			in = "in the web UI at " + ui + " or "
		}
		r.empty = fmt.Sprintf("switchboard: no MCP servers yet: add them %sthrough the REST API (POST http://%s/api/v1/servers); they are kept in %s.%s", in, ln.Addr(), d.Store().Where(), e.importHint())
	}
	if stdio && endpoint != "" {
		r.mu.Lock()
		r.endpoint, r.offered = endpoint, d.OfferedTools
		r.mu.Unlock()
	}
	// Before the host starts (Serve), so before any run: agent steps'
	// runs, turns and LLM requests in the daemon's telemetry.
	agents.tel = d.Telemetry()
	observeSteps(steps, agents.tel)
	defer r.done()
	mountFaces(d, hostOpts.Logger, e.apiRegistries(cfg)...)
	if stdio {
		// A client that has left while a notification is written to
		// stdout is a write error (EPIPE) to end the session on, not a
		// SIGPIPE that kills the process before it stops its servers.
		signal.Ignore(syscall.SIGPIPE)
		err = d.ServeStdio(ctx, e.stdin, e.stdout)
	} else {
		err = d.Run(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return failed(fmt.Errorf("cancelled: %w", err))
		}
		return daemonErr(e.startHint(err, cfg.Servers))
	}
	return nil
}

// checkStoredEndpoint says whether endpoint name, which no config file
// declares, was added at run time (through the REST API or the web UI):
// stored in the state store, which serve --stdio reads, and serves when it
// checks (the daemon says why when it does not). A usage error naming it
// when it is neither.
func (e *env) checkStoredEndpoint(ctx context.Context, cfg *config.Config, name string) error {
	var names []string
	for _, ep := range cfg.Endpoints {
		names = append(names, ep.Name)
	}
	list := "configured: " + cmp.Or(strings.Join(names, ", "), "none")
	if st := e.stateStore(cfg); st != nil {
		_, err := st.Endpoint(ctx, name)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return failed(fmt.Errorf("serve: endpoint %q: %w", name, err))
		}
		recs, err := st.Endpoints(ctx)
		if err != nil {
			return failed(fmt.Errorf("serve: endpoint %q: %w", name, err))
		}
		var stored []string
		for _, r := range recs {
			stored = append(stored, r.Name)
		}
		if len(stored) > 0 {
			list += "; added at run time: " + strings.Join(stored, ", ")
		}
	}
	return usageErr("serve: no endpoint %q in the configuration (%s)", name, list)
}

// mountFaces mounts serve's faces beside the gateway, each behind the
// listener's one guard with what it asks of a request: the management
// REST API (the owner, and OAuth tokens with admin_scope) and the web UI
// at / (the owner; not in a -tags noui build).
//
// regs are the MCP registries the REST API and the web UI search and add
// from.
func mountFaces(d *daemon.Daemon, log *slog.Logger, regs ...registry.Named) {
	d.HandleAdmin(api.Prefix, api.New(d, &api.Options{Logger: log, Registries: regs, ContainerRuntime: containerRuntime()}))
	mountUI(d, log, regs)
}

// apiRegistries are the configuration's registries as the faces read them;
// one whose client cannot be made (its token unset) is left out, with a
// warning.
func (e *env) apiRegistries(cfg *config.Config) []registry.Named {
	var regs []registry.Named
	for _, r := range cfg.RegistryList() {
		c, err := e.registryClient(cfg, r)
		if err != nil {
			fmt.Fprintf(e.stderr, "switchboard: warning: %v; the web UI and the REST API will not search it\n", err)
			continue
		}
		regs = append(regs, registry.Named{Name: r.Name, Client: c})
	}
	return regs
}

// readiness says on stderr, at every verbosity, when serve is ready —
// every required server up — with which servers are still starting or
// failed (optional ones), then once for each of those when it comes up or
// fails; before that, which servers are still starting (progress).
type readiness struct {
	e     *env
	start time.Time
	cfg   *config.Config // its servers are the configured ones; the others were added at run time

	mu       sync.Mutex
	p        *progress
	stopP    func()
	stopW    func()
	isReady  bool
	empty    string          // said at ready when there is no server
	pending  map[string]bool // not up at ready: said once when they are
	starting map[string]bool // of them, those still starting at ready
	over     bool
	// endpoint, under --stdio --endpoint, is the endpoint served; offered
	// counts its tools (the host's otherwise).
	endpoint string
	offered  func(endpoint string) ([]daemon.EndpointTool, bool)
}

// follow watches h from before its start (daemon.Options.OnHost).
func (r *readiness) follow(h *host.Host) {
	var servers []config.Server
	for _, st := range h.Servers() {
		servers = append(servers, config.Server{ID: st.ID})
	}
	r.mu.Lock()
	r.p = r.e.startProgress(servers)
	r.stopP = r.p.follow(h)
	r.mu.Unlock()
	w := h.Watch(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.Events(context.Background()) {
			if ev.Kind == host.EventState {
				r.update(ev.Status)
			}
		}
	}()
	r.stopW = func() {
		w.Close()
		<-done
	}
}

// ready says serve is ready (daemon.Options.OnReady).
func (r *readiness) ready(sts []host.ServerStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return
	}
	r.endProgressLocked()
	r.isReady = true
	r.pending, r.starting = map[string]bool{}, map[string]bool{}
	var up, starting []string
	var failed []host.ServerStatus
	tools := 0
	for _, st := range sts {
		tools += st.Tools
		switch st.State {
		case host.StateReady, host.StateDegraded, host.StateLazy:
			up = append(up, st.ID)
			continue
		case host.StateFailed:
			failed = append(failed, st)
		default:
			starting = append(starting, st.ID)
			r.starting[st.ID] = true
		}
		r.pending[st.ID] = true
	}
	var b strings.Builder
	if len(sts) == 0 && r.empty != "" {
		fmt.Fprintf(r.e.stderr, "switchboard: ready (%s): no servers\n%s\n", since(r.start), r.empty)
		return
	}
	fmt.Fprintf(&b, "switchboard: ready (%s): ", since(r.start))
	if len(up) == len(sts) {
		fmt.Fprintf(&b, "%d %s", len(sts), plural(len(sts), "server", "servers"))
	} else {
		fmt.Fprintf(&b, "%d of %d servers", len(up), len(sts))
	}
	if r.endpoint != "" && r.offered != nil {
		if offered, ok := r.offered(r.endpoint); ok {
			fmt.Fprintf(&b, ", %d %s on endpoint %s", len(offered), plural(len(offered), "tool", "tools"), r.endpoint)
		}
	} else {
		fmt.Fprintf(&b, ", %d %s", tools, plural(tools, "tool", "tools"))
	}
	if len(starting) > 0 {
		fmt.Fprintf(&b, "; still starting: %s", strings.Join(starting, ", "))
	}
	if len(failed) > 0 {
		ids := make([]string, len(failed))
		for i, st := range failed {
			ids[i] = st.ID
		}
		fmt.Fprintf(&b, "; failed: %s", strings.Join(ids, ", "))
	}
	b.WriteByte('\n')
	for _, st := range failed {
		r.failedLine(&b, st)
	}
	fmt.Fprint(r.e.stderr, b.String())
}

// update says what became of a server that was not up at ready: once,
// when it comes up, or when one still starting then fails.
func (r *readiness) update(st host.ServerStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over || !r.isReady || !r.pending[st.ID] {
		return
	}
	var b strings.Builder
	switch st.State {
	case host.StateReady, host.StateDegraded, host.StateLazy:
		fmt.Fprintf(&b, "switchboard: %s: %s (%s), %d %s\n", st.ID, st.State, since(r.start), st.Tools, plural(st.Tools, "tool", "tools"))
	case host.StateFailed:
		if !r.starting[st.ID] {
			return // said at ready; retried in the background
		}
		r.failedLine(&b, st)
	default:
		return
	}
	delete(r.pending, st.ID)
	fmt.Fprint(r.e.stderr, b.String())
}

func (r *readiness) failedLine(b *strings.Builder, st host.ServerStatus) {
	msg := "failed"
	if st.Err != nil {
		msg = "failed: " + st.Err.Error()
	}
	// Optional in its table, or added at run time (optional to the
	// daemon, whatever its entry says).
	why := "optional"
	if _, ok := r.cfg.Server(st.ID); !ok && st.Transport != host.TransportInProcess {
		why = "added at run time"
	}
	fmt.Fprintf(b, "switchboard: %s (%s): %s; retried in the background\n", st.ID, why, msg)
}

func (r *readiness) endProgressLocked() {
	if r.stopP != nil {
		r.stopP()
		r.p.done()
		r.stopP = nil
	}
}

// done stops watching.
func (r *readiness) done() {
	r.mu.Lock()
	r.over = true
	r.endProgressLocked()
	stopW := r.stopW
	r.mu.Unlock()
	if stopW != nil {
		stopW()
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// noServers says there is no server to serve, naming the configuration
// files read, or where one would be read, and that import takes those the
// MCP clients on this machine have.
func noServers(cfg *config.Config) string {
	const take = ", or take those of your MCP clients with switchboard import"
	if len(cfg.Files) == 0 {
		return "no MCP servers configured: add [[mcp_servers]] to ./switchboard.toml or pass --config FILE" + take
	}
	return "no MCP servers configured in " + strings.Join(cfg.Files, ", ") + ": add [[mcp_servers]]" + take
}

// importHint is the sentence of an empty serve that says import takes the
// servers of the MCP clients on this machine into the file it writes; ""
// when there is no such file.
func (e *env) importHint() string {
	target, err := e.editTarget("")
	if err != nil {
		return ""
	}
	titles := make([]string, len(config.Clients))
	for i, c := range config.Clients {
		titles[i] = config.ClientTitle(c)
	}
	list := strings.Join(titles[:len(titles)-1], ", ") + " and " + titles[len(titles)-1]
	cmd := "switchboard import"
	if e.configFile != "" {
		cmd = "switchboard --config " + e.configFile + " import"
	}
	return fmt.Sprintf(" Or take those of %s into %s with: %s", list, target, cmd)
}

// daemonErr is the exit of a daemon error: a usage error (an address or a
// configuration it cannot serve) or a failure.
func daemonErr(err error) error {
	var ue *daemon.UsageError
	if errors.As(err, &ue) {
		return usageErr("%s", ue.Msg)
	}
	return failed(err)
}

// httpErrorLog sends net/http's own error messages (malformed requests,
// panics in handlers) to stderr through the redactor, with -v.
func httpErrorLog(e *env) *log.Logger {
	if e.verbose == 0 {
		return log.New(io.Discard, "", 0)
	}
	return log.New(e.stderr, "switchboard: http: ", 0)
}
