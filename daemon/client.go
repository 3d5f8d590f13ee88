package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
)

// A Client is a running daemon as a CLI command sees it, over the daemon's
// local socket: what a started [host.Host] offers its caller — the
// servers' states, the tools, calls, resources and prompts — answered by
// the daemon's host, so that a command says and exits the same either way
// (errors come back as the host returned them: host.ErrorJSON). Calls go
// through the gateway's MCP endpoint, with their progress, elicitation and
// cancellation; the rest through the socket's local endpoints. The states
// and tools are those of when the Client was made.
//
// Its methods are safe for concurrent use. Close it when done.
type Client struct {
	hc    *http.Client
	opts  ClientOptions
	state stateJSON
	// servers and tools as the host reports them
	servers []host.ServerStatus
	tools   []host.Tool
	byName  map[string]host.Tool
}

// ClientOptions configures a [Client]. Nil means defaults.
type ClientOptions struct {
	// Elicitation answers a server's elicitation request during a call
	// whose CallOptions have no handler of their own, as
	// host.Options.Elicitation does in process; nil declines.
	Elicitation host.ElicitationHandler
	// Roots are a server's configured roots (file:// URIs), the answer to
	// its roots/list during a call, as the host in process gives it.
	Roots func(server string) []string
	// Name is what the Client calls itself to the gateway.
	Name, Version string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// ErrNoDaemon: no daemon answers on the socket (there is none, or it is
// stale: its daemon is gone).
var ErrNoDaemon = errors.New("no switchboard serve answers on the local socket")

// DialLocal connects to the daemon serving path ([SocketPath]) and reads
// its state. It checks first that the socket is this user's, in a folder
// only this user may enter. A socket nobody answers on (a daemon killed)
// is ErrNoDaemon.
func DialLocal(ctx context.Context, path string, opts *ClientOptions) (*Client, error) {
	if err := checkSocket(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", ErrNoDaemon, err)
		}
		return nil, err
	}
	c := &Client{}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Logger == nil {
		c.opts.Logger = slog.New(slog.DiscardHandler)
	}
	var d net.Dialer
	c.hc = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		// Not a proxy's business: the socket is on this machine.
		Proxy: nil,
	}}
	if err := c.get(ctx, "state", &c.state); err != nil {
		c.Close()
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoDaemon, path, err)
		}
		return nil, err
	}
	for _, j := range c.state.Servers {
		st := host.ServerStatus{ID: j.ID, Description: j.Description, Transport: config.Transport(j.Transport), State: j.State,
			Optional: j.Optional, ServerInfo: j.ServerInfo, ProtocolVersion: j.ProtocolVersion, Instructions: j.Instructions,
			Tools: j.Tools, Warnings: j.Warnings, Err: j.Err.Err(), LastError: j.LastError.Err(), Restarts: j.Restarts,
			LastHealthy: j.LastHealthy, ReadySince: j.ReadySince, InFlight: j.InFlight, PID: j.PID, Isolation: j.Isolation}
		for _, sk := range j.Skipped {
			st.Skipped = append(st.Skipped, host.Skipped{Tool: sk.Tool, Reason: sk.Reason})
		}
		c.servers = append(c.servers, st)
	}
	c.byName = map[string]host.Tool{}
	for _, t := range c.state.Tools {
		ht := host.Tool{Name: t.Name, Server: t.Server, Tool: t.Tool}
		c.tools = append(c.tools, ht)
		c.byName[t.Name] = ht
	}
	return c, nil
}

// ToolNameFormat is the format the daemon's host names tools with.
func (c *Client) ToolNameFormat() string { return c.state.ToolNameFormat }

// Servers reports every server's status, as the daemon's host did when the
// Client was made.
func (c *Client) Servers() []host.ServerStatus { return c.servers }

// Tools returns the tools the daemon's host offers, in its order.
func (c *Client) Tools() []host.Tool { return c.tools }

// Tool returns the offered tool with the given host name.
func (c *Client) Tool(name string) (host.Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// callProtocolVersion is what a Client speaks to the gateway: a
// 2025-11-25 session, over which an upstream's questions during a call
// reach the Client as they are asked.
const callProtocolVersion = "2025-11-25"

// CallTool calls a tool through the daemon's gateway, as host.Host.CallTool
// does in process: opts's Progress, Elicitation and Log get the call's
// notifications and questions (an elicitation without a handler is
// declined, as the host does); its roots are the server's configured ones
// (ClientOptions.Roots). A call that fails on the way (unknown tool,
// invalid arguments, a timeout, a server unavailable, a server's protocol
// error) is the host's error; a tool's own failure a result with IsError.
// opts.Timeout bounds the call instead of its server's timeout, as in
// process. Sampling, Roots and Client in opts, and the RequestOptions, are
// not carried.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, opts *host.CallOptions) (*mcp.CallToolResult, error) {
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
				ask = c.opts.Elicitation
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
	mc := mcp.NewClient(&mcp.Implementation{Name: c.name(), Version: c.version()}, copts)
	if c.opts.Roots != nil {
		for _, uri := range c.opts.Roots(t.Server) {
			mc.AddRoots(&mcp.Root{URI: uri})
		}
	}
	cs, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + localHost + "/mcp", HTTPClient: c.hc},
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
	if res.IsError {
		if raw, ok := res.Meta[gateway.MetaKeyError]; ok {
			// The gateway made this result from the host's error.
			b, _ := json.Marshal(raw)
			var ej host.ErrorJSON
			if json.Unmarshal(b, &ej) == nil && ej.Message != "" {
				return nil, ej.Err()
			}
		}
	}
	return res, nil
}

// protocolError is a server's protocol error as the host words it: its
// message; the *jsonrpc.Error stays in the chain.
type protocolError struct{ je *jsonrpc.Error }

func (e *protocolError) Error() string { return e.je.Message }
func (e *protocolError) Unwrap() error { return e.je }

func (c *Client) name() string {
	if c.opts.Name != "" {
		return c.opts.Name
	}
	return "switchboard-cli"
}

func (c *Client) version() string {
	if c.opts.Version != "" {
		return c.opts.Version
	}
	return host.Version
}

// Resources lists the resources of every ready server, as
// host.Host.Resources does.
func (c *Client) Resources(ctx context.Context) ([]host.Resource, error) {
	var out resourcesJSON
	if err := c.get(ctx, "resources", &out); err != nil {
		return nil, err
	}
	rs := make([]host.Resource, len(out.Resources))
	for i, r := range out.Resources {
		rs[i] = host.Resource{Server: r.Server, Resource: r.Resource}
	}
	return rs, out.Error.Err()
}

// ResourceTemplates lists the resource templates of every ready server, as
// host.Host.ResourceTemplates does.
func (c *Client) ResourceTemplates(ctx context.Context) ([]host.ResourceTemplate, error) {
	var out templatesJSON
	if err := c.get(ctx, "templates", &out); err != nil {
		return nil, err
	}
	ts := make([]host.ResourceTemplate, len(out.Templates))
	for i, t := range out.Templates {
		ts[i] = host.ResourceTemplate{Server: t.Server, Template: t.Template}
	}
	return ts, out.Error.Err()
}

// Prompts lists the prompts of every ready server, as host.Host.Prompts
// does.
func (c *Client) Prompts(ctx context.Context) ([]host.Prompt, error) {
	var out promptsJSON
	if err := c.get(ctx, "prompts", &out); err != nil {
		return nil, err
	}
	ps := make([]host.Prompt, len(out.Prompts))
	for i, p := range out.Prompts {
		ps[i] = host.Prompt{Server: p.Server, Prompt: p.Prompt}
	}
	return ps, out.Error.Err()
}

// ReadResource reads a resource from the named server, as
// host.Host.ReadResource does; opts must be nil (a 2026-07-28 round's
// input responses are not carried).
func (c *Client) ReadResource(ctx context.Context, serverID, uri string, opts *host.RequestOptions) (*mcp.ReadResourceResult, error) {
	if opts != nil {
		return nil, errors.New("daemon client: ReadResource takes no RequestOptions")
	}
	var out resultJSON[*mcp.ReadResourceResult]
	if err := c.post(ctx, "read", ReadRequest{Server: serverID, URI: uri}, &out); err != nil {
		return nil, err
	}
	if out.Error != nil {
		return nil, out.Error.Err()
	}
	return out.Result, nil
}

// GetPrompt gets a prompt, as host.Host.GetPrompt does; opts must be nil.
func (c *Client) GetPrompt(ctx context.Context, serverID, name string, args map[string]string, opts *host.RequestOptions) (*mcp.GetPromptResult, error) {
	if opts != nil {
		return nil, errors.New("daemon client: GetPrompt takes no RequestOptions")
	}
	var out resultJSON[*mcp.GetPromptResult]
	if err := c.post(ctx, "prompt", PromptRequest{Server: serverID, Name: name, Arguments: maps.Clone(args)}, &out); err != nil {
		return nil, err
	}
	if out.Error != nil {
		return nil, out.Error.Err()
	}
	return out.Result, nil
}

// DeleteServer deletes a server added to the daemon at run time, which
// stops it (Daemon.DeleteServer). An unknown id is an error wrapping
// host.ErrUnknownServer; a configured or built-in server's, ErrReadOnly.
func (c *Client) DeleteServer(ctx context.Context, id string) error {
	var out deleteAnswer
	if err := c.do(ctx, http.MethodDelete, "servers/"+url.PathEscape(id), nil, &out); err != nil {
		return err
	}
	if out.Error == nil {
		return nil
	}
	err := &reportedError{msg: out.Error.Message}
	switch out.Error.Code {
	case "unknown_server":
		err.is = host.ErrUnknownServer
	case "read_only":
		err.is = ErrReadOnly
	}
	return err
}

// reportedError is an error the daemon reported: its message as it said
// it, matching (errors.Is) the sentinel it named.
type reportedError struct {
	msg string
	is  error
}

func (e *reportedError) Error() string { return e.msg }
func (e *reportedError) Unwrap() error { return e.is }

// Close closes the Client's connections to the daemon; the daemon goes
// on. It is idempotent.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

func (c *Client) get(ctx context.Context, what string, out any) error {
	return c.do(ctx, http.MethodGet, what, nil, out)
}

func (c *Client) post(ctx context.Context, what string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, what, b, out)
}

// maxLocalAnswer bounds an answer from the daemon: a result the daemon's
// host already bounded (each server's message to 4 MiB; lists to 20,000
// items per server).
const maxLocalAnswer = 256 << 20

func (c *Client) do(ctx context.Context, method, what string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+localHost+localPrefix+what, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("switchboard serve (local socket): %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("switchboard serve (local socket): %s %s: %s: %s", method, what, resp.Status, bytes.TrimSpace(msg))
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxLocalAnswer)).Decode(out); err != nil {
		return fmt.Errorf("switchboard serve (local socket): %s %s: %w", method, what, err)
	}
	return nil
}
