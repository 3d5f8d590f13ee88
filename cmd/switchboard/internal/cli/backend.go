package cli

// Where a command's servers are: a host it starts itself, or the running
// `switchboard serve` of the same configuration, reached over its local
// socket (serveClient: /api/v1, and the MCP endpoint for calls). A
// command says, prints and exits the same either way.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/workflow"
)

// backend is what the commands need of their servers: what a started
// *host.Host offers its caller, which *serveClient offers too.
type backend interface {
	Servers() []host.ServerStatus
	ToolNameFormat() string
	Tools() []host.Tool
	Tool(name string) (host.Tool, bool)
	CallTool(ctx context.Context, name string, args json.RawMessage, opts *host.CallOptions) (*mcp.CallToolResult, error)
	Resources(ctx context.Context) ([]host.Resource, error)
	ResourceTemplates(ctx context.Context) ([]host.ResourceTemplate, error)
	ReadResource(ctx context.Context, server, uri string, opts *host.RequestOptions) (*mcp.ReadResourceResult, error)
	Prompts(ctx context.Context) ([]host.Prompt, error)
	GetPrompt(ctx context.Context, server, name string, args map[string]string, opts *host.RequestOptions) (*mcp.GetPromptResult, error)
	Close() error
}

var (
	_ backend = (*host.Host)(nil)
	_ backend = (*serveClient)(nil)
)

// dialTimeout bounds how long a command waits for a running serve to
// answer before it starts its own servers: a daemon answers in
// milliseconds, one that does not is hung.
const dialTimeout = 3 * time.Second

// useDaemon returns the running serve of cfg's configuration, when there is
// one that can answer for want (the servers a command would start; only
// names one when the command starts that one alone), and nil otherwise:
// no serve of this configuration (the socket is named by the configuration
// files, their contents and the environment they read), --no-daemon, or a
// serve whose servers would not answer as a start would — one that serves
// other servers or names tools another way ([gateway] servers,
// [gateway] tool_name_format), or one where a server is still starting,
// restarting, or failed though required (a fresh start then says why).
// A serve that answers but is not used is said on stderr, with why: each
// command then starts its own servers, in seconds rather than
// milliseconds. Servers added to the serve at run time (the REST API, the
// web UI) do not keep a command from using it: it sees the
// configuration's servers alone, as a start of its own would.
func (e *env) useDaemon(ctx context.Context, cfg *config.Config, only string) backend {
	c := e.dialDaemon(ctx, cfg, only)
	if c == nil {
		return nil
	}
	// The servers a start of the command would have: the configuration's
	// (or the one named), not the serve's own in-process ones, nor those
	// added to it at run time.
	return served{c, func(st host.ServerStatus) bool {
		_, configured := cfg.Server(st.ID)
		return configured && !ownServer(st) && (only == "" || st.ID == only)
	}}
}

// dialDaemon is useDaemon's serve; nil when there is none to use.
func (e *env) dialDaemon(ctx context.Context, cfg *config.Config, only string) *serveClient {
	if e.noDaemon {
		return nil
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		e.notUsing(err.Error())
	}
	if c == nil {
		return nil
	}
	log := e.logger()
	path, _ := daemon.SocketPath(cfg, e.getenv)
	if why := unlike(c, cfg, only); why != "" {
		c.Close()
		e.notUsing(why)
		return nil
	}
	log.Info("using switchboard serve", "socket", path)
	return c
}

// dialServe connects to the running serve of cfg's configuration, over its
// local socket; nil when there is none, and an error when one is there but
// fails to answer.
func (e *env) dialServe(ctx context.Context, cfg *config.Config) (*serveClient, error) {
	log := e.logger()
	path, err := daemon.SocketPath(cfg, e.getenv)
	if err != nil {
		log.Debug("no switchboard serve to use", "err", err)
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := dialSocket(ctx, path)
	if errors.Is(err, daemon.ErrNoDaemon) {
		log.Debug("no switchboard serve of this configuration", "socket", path)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// As startHost's own host: a form on a terminal, else declined and
	// said.
	c.elicit = e.elicitation("")
	c.roots = func(id string) []string {
		s, _ := cfg.Server(id)
		return s.Roots
	}
	return c, nil
}

// notUsing says on stderr, at every verbosity, that a serve of this
// configuration runs and why this command does not use it: it starts its
// own servers instead, which takes seconds where the serve answers in
// milliseconds.
func (e *env) notUsing(why string) {
	fmt.Fprintf(e.stderr, "switchboard: not using switchboard serve: %s; starting this command's own servers (--no-daemon says nothing)\n", why)
}

// ownServer reports whether st is one a serve runs for itself rather than
// from the configuration: the workflow engine's in-process server, which
// publishes [gateway] workflows.
func ownServer(st host.ServerStatus) bool {
	return st.Transport == host.TransportInProcess && st.ID == workflow.InProcessServerID
}

// unlike says why a serve's servers would not answer as the command's own
// start would; "" when they would. The servers added to the serve at run
// time are not the command's: they are left out (useDaemon). They come
// after the configured ones in the serve's order, so the configured ones
// name their tools as a start of the command would (the first declared
// wins a clash).
func unlike(c *serveClient, cfg *config.Config, only string) string {
	var sts []host.ServerStatus
	var ids []string
	for _, st := range c.Servers() {
		if _, configured := cfg.Server(st.ID); configured && !ownServer(st) {
			sts = append(sts, st)
			ids = append(ids, st.ID)
		}
	}
	want := make([]string, len(cfg.Servers))
	for i, s := range cfg.Servers {
		want[i] = s.ID
	}
	if !slices.Equal(ids, want) {
		return "it serves other servers ([gateway] servers)"
	}
	if f := cmp.Or(cfg.ToolNameFormat, config.DefaultToolNameFormat); c.ToolNameFormat() != f {
		return "it names tools another way ([gateway] tool_name_format)"
	}
	for _, st := range sts {
		if only != "" && st.ID != only {
			continue
		}
		switch {
		case st.State == host.StateReady || st.State == host.StateDegraded || st.State == host.StateLazy:
		case st.State == host.StateFailed && st.Optional:
			// A start would most likely fail it too, and go on without it.
		default:
			return "server " + st.ID + " is " + string(st.State) + " there"
		}
	}
	return ""
}

// served is a serve's servers as a command sees them: those keep keeps
// (the configuration's, or the one server a command starts alone with
// --server), their statuses and their tools.
type served struct {
	*serveClient
	keep func(host.ServerStatus) bool
}

func (o served) Servers() []host.ServerStatus {
	var out []host.ServerStatus
	for _, st := range o.serveClient.Servers() {
		if o.keep(st) {
			out = append(out, st)
		}
	}
	return out
}

func (o served) kept(server string) bool {
	for _, st := range o.serveClient.Servers() {
		if st.ID == server {
			return o.keep(st)
		}
	}
	return false
}

func (o served) Tools() []host.Tool {
	var out []host.Tool
	for _, t := range o.serveClient.Tools() {
		if o.kept(t.Server) {
			out = append(out, t)
		}
	}
	return out
}

func (o served) Tool(name string) (host.Tool, bool) {
	t, ok := o.serveClient.Tool(name)
	return t, ok && o.kept(t.Server)
}

func (o served) CallTool(ctx context.Context, name string, args json.RawMessage, opts *host.CallOptions) (*mcp.CallToolResult, error) {
	if _, ok := o.Tool(name); !ok {
		return nil, fmt.Errorf("%w %q", host.ErrUnknownTool, name)
	}
	return o.serveClient.CallTool(ctx, name, args, opts)
}

// A serveClient is a running serve as a command sees it, over its local
// socket: what a started host offers its caller, answered by the serve's
// host — the servers' states and the tools (of when it was dialled),
// resources and prompts through /api/v1 (api.Client), calls through its
// MCP endpoint with their progress, elicitation and cancellation — with
// the host's errors as it returned them.
type serveClient struct {
	*api.Client
	hc     *http.Client
	state  *api.State
	byName map[string]host.Tool
	// elicit answers a server's elicitation during a call whose
	// CallOptions have none (nil declines); roots are a server's
	// configured roots, the answer to its roots/list during a call.
	elicit host.ElicitationHandler
	roots  func(server string) []string
}

// dialSocket reads the state of the serve on the socket at path.
func dialSocket(ctx context.Context, path string) (*serveClient, error) {
	hc, err := daemon.SocketClient(path)
	if err != nil {
		return nil, err
	}
	c := &serveClient{Client: api.NewClient("http://"+daemon.SocketHost, hc), hc: hc, byName: map[string]host.Tool{}}
	if c.state, err = c.State(ctx); err != nil {
		c.Close()
		return nil, err
	}
	for _, t := range c.state.Tools {
		c.byName[t.Name] = t
	}
	return c, nil
}

func (c *serveClient) ToolNameFormat() string       { return c.state.ToolNameFormat }
func (c *serveClient) Servers() []host.ServerStatus { return c.state.Servers }
func (c *serveClient) Tools() []host.Tool           { return c.state.Tools }

func (c *serveClient) Tool(name string) (host.Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// ReadResource reads a resource as the serve's host does; opts must be
// nil (a 2026-07-28 round's input responses are not carried).
func (c *serveClient) ReadResource(ctx context.Context, server, uri string, opts *host.RequestOptions) (*mcp.ReadResourceResult, error) {
	if opts != nil {
		return nil, errors.New("switchboard serve: ReadResource takes no RequestOptions")
	}
	return c.Client.ReadResource(ctx, server, uri)
}

// GetPrompt gets a prompt as the serve's host does; opts must be nil.
func (c *serveClient) GetPrompt(ctx context.Context, server, name string, args map[string]string, opts *host.RequestOptions) (*mcp.GetPromptResult, error) {
	if opts != nil {
		return nil, errors.New("switchboard serve: GetPrompt takes no RequestOptions")
	}
	return c.Client.GetPrompt(ctx, server, name, args)
}

// callProtocolVersion is what a serveClient speaks to the gateway: a
// 2025-11-25 session, over which an upstream's questions during a call
// reach the command as they are asked.
const callProtocolVersion = "2025-11-25"

// CallTool calls a tool through the serve's gateway, as host.Host.CallTool
// does in process: opts's Progress, Elicitation and Log get the call's
// notifications and questions (an elicitation without a handler is
// declined, as the host does); its roots are the server's configured ones.
// A call that fails on the way (unknown tool, invalid arguments, a
// timeout, a server unavailable, a server's protocol error) is the host's
// error; a tool's own failure a result with IsError. opts.Timeout bounds
// the call instead of its server's timeout, as in process. Sampling,
// Roots and Client in opts, and the RequestOptions, are not carried.
func (c *serveClient) CallTool(ctx context.Context, name string, args json.RawMessage, opts *host.CallOptions) (*mcp.CallToolResult, error) {
	t, ok := c.Tool(name)
	if !ok {
		return nil, fmt.Errorf("%w %q", host.ErrUnknownTool, name)
	}
	var o host.CallOptions
	if opts != nil {
		o = *opts
	}
	cerr := func(err error) error {
		var je *jsonrpc.Error
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("%w (%v)", ctx.Err(), err) // as the host says it
		case errors.As(err, &je):
			// The server's protocol error, passed on by the gateway: the
			// host says its message alone after server and tool.
			err = &protocolError{je}
		}
		return &host.CallError{Server: t.Server, Tool: t.Tool.Name, Method: "tools/call", Timeout: o.Timeout, Err: err}
	}
	copts := &mcp.ClientOptions{
		// Declared always: without a handler the host declines, and so
		// does this.
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			ask := o.Elicitation
			if ask == nil {
				ask = c.elicit
			}
			if ask == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return ask(ctx, t.Server, req.Params)
		},
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
	}
	if o.Progress != nil {
		copts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			o.Progress(req.Params)
		}
	}
	if o.Log != nil {
		copts.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) {
			o.Log(t.Server, req.Params)
		}
	}
	mc := mcp.NewClient(&mcp.Implementation{Name: "switchboard", Version: host.Version}, copts)
	if c.roots != nil {
		for _, uri := range c.roots(t.Server) {
			mc.AddRoots(&mcp.Root{URI: uri})
		}
	}
	cs, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + daemon.SocketHost + gateway.DefaultEndpoint.Path, HTTPClient: c.hc},
		&mcp.ClientSessionOptions{ProtocolVersion: callProtocolVersion})
	if err != nil {
		return nil, cerr(err)
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: name}
	if len(args) > 0 {
		p.Arguments = args
	}
	if o.Progress != nil {
		p.SetProgressToken("switchboard-cli")
	}
	if o.Timeout > 0 {
		p.Meta = mcp.Meta{gateway.MetaKeyTimeout: float64(o.Timeout) / float64(time.Millisecond)}
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		return nil, cerr(err)
	}
	if raw, ok := res.Meta[gateway.MetaKeyError]; ok && res.IsError {
		// The gateway made this result from the host's error.
		b, _ := json.Marshal(raw)
		var ej host.ErrorJSON
		if json.Unmarshal(b, &ej) == nil && ej.Message != "" {
			return nil, ej.Err()
		}
	}
	return res, nil
}

// protocolError is a server's protocol error as the host words it: its
// message; the *jsonrpc.Error stays in the chain.
type protocolError struct{ je *jsonrpc.Error }

func (e *protocolError) Error() string { return e.je.Message }
func (e *protocolError) Unwrap() error { return e.je }
