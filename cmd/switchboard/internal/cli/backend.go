package cli

// Where a command's servers are: a host it starts itself, or the running
// `switchboard serve` of the same configuration, reached over its local
// socket (daemon.Client). A command says, prints and exits the same
// either way.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/workflow"
)

// backend is what the commands need of their servers: what a started
// *host.Host offers its caller, which *daemon.Client offers too.
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
	_ backend = (*daemon.Client)(nil)
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

// dialDaemon is useDaemon's serve, as a daemon.Client; nil when there is
// none to use.
func (e *env) dialDaemon(ctx context.Context, cfg *config.Config, only string) *daemon.Client {
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
func (e *env) dialServe(ctx context.Context, cfg *config.Config) (*daemon.Client, error) {
	log := e.logger()
	path, err := daemon.SocketPath(cfg, e.getenv)
	if err != nil {
		log.Debug("no switchboard serve to use", "err", err)
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := daemon.DialLocal(ctx, path, &daemon.ClientOptions{
		// As startHost's own host: a form on a terminal, else declined
		// and said.
		Elicitation: e.elicitation(""),
		Roots: func(id string) []string {
			s, _ := cfg.Server(id)
			return s.Roots
		},
		Name:    "switchboard",
		Version: host.Version,
	})
	if errors.Is(err, daemon.ErrNoDaemon) {
		log.Debug("no switchboard serve of this configuration", "socket", path)
		return nil, nil
	}
	return c, err
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
func unlike(c *daemon.Client, cfg *config.Config, only string) string {
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
	*daemon.Client
	keep func(host.ServerStatus) bool
}

func (o served) Servers() []host.ServerStatus {
	var out []host.ServerStatus
	for _, st := range o.Client.Servers() {
		if o.keep(st) {
			out = append(out, st)
		}
	}
	return out
}

func (o served) kept(server string) bool {
	for _, st := range o.Client.Servers() {
		if st.ID == server {
			return o.keep(st)
		}
	}
	return false
}

func (o served) Tools() []host.Tool {
	var out []host.Tool
	for _, t := range o.Client.Tools() {
		if o.kept(t.Server) {
			out = append(out, t)
		}
	}
	return out
}

func (o served) Tool(name string) (host.Tool, bool) {
	t, ok := o.Client.Tool(name)
	return t, ok && o.kept(t.Server)
}

func (o served) CallTool(ctx context.Context, name string, args json.RawMessage, opts *host.CallOptions) (*mcp.CallToolResult, error) {
	if _, ok := o.Tool(name); !ok {
		return nil, fmt.Errorf("%w %q", host.ErrUnknownTool, name)
	}
	return o.Client.CallTool(ctx, name, args, opts)
}
