package gateway

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
)

// An Endpoint is one MCP endpoint of a [Gateway]: where it is served, and
// what of the host it publishes, to whom. A gateway serves a list of them
// (Options.Endpoints) over its one host, each an MCP server of its own:
// its clients list and call only its servers' tools, less its hidden
// ones, under its policy.
type Endpoint struct {
	// Path is where Streamable HTTP is served. SSE and Message are the
	// legacy HTTP+SSE transport's (a GET at either opens a session;
	// messages are posted to Message), WebSocket is where WebSocket is
	// served; "" serves none there. An Endpoint whose Path is "" is
	// served at [DefaultEndpoint]'s paths.
	Path, SSE, Message, WebSocket string
	// Servers limits which upstream servers are exposed; nil means all.
	Servers []string
	// HideTools are host tool names left out of the endpoint's tools (the
	// tools a published workflow with hide_tools calls): clients neither
	// list nor call them, while the host still offers them to its own
	// callers (the workflow engine).
	HideTools []string
	// Policy, for clients that come with an OAuth token
	// (guard.Options.OAuth), says which servers and tools each may list
	// and call ([gateway.auth.policy]); nil lets every token see
	// everything. Clients without a token (stdio, the local socket,
	// auth_token) are the owner's and see everything.
	Policy []config.AuthPolicy

	// Name names a named endpoint ([[endpoints]] name): its MCP server
	// calls itself Options.Name + "/" + Name in serverInfo
	// ("switchboard/code"); logs, the guard's refusals, and the
	// switchboard.endpoint of its metrics and spans name it. "" for the
	// default endpoint.
	Name string
	// Tools are glob patterns choosing which of the Servers' tools are
	// offered, in order, the last one a tool matches deciding: a tool
	// matching no pattern, or last a pattern beginning with "!", is left
	// out; nil offers every tool. "*" is any run of characters, "?" one
	// (path.Match). A pattern is matched against the tool's published name
	// (the host's, after tool_name_format: "mcp_github_get_issue") and
	// against {server}_{tool}, its server's id and its own upstream name
	// ("github_get_issue"): "github_*" means github's tools under any
	// tool_name_format. See [ToolSelected].
	Tools []string
	// Rename maps a name the endpoint's clients see to the published tool
	// (host name) it calls. A renamed tool is offered under its new name
	// only, and only if the endpoint offers it (Servers, Tools,
	// HideTools); a tool of the endpoint whose own name is another's new
	// name is left out. Policy's tool patterns match the published (host)
	// name, not the new one: a rename changes what a client sees, not
	// what a token may call.
	Rename map[string]string
	// Override changes what the endpoint's clients see of a tool (title,
	// description, annotation hints), by the name they see.
	Override map[string]config.ToolOverride
	// Instructions, when set, are sent to the endpoint's clients in
	// initialize in place of Options.Instructions.
	Instructions string
	// AuthToken is the endpoint's own token (resolved): it opens this
	// endpoint's paths alone, besides the owner's ([guard.Endpoint]).
	AuthToken string
	// Scopes are the OAuth scopes a token needs on this endpoint, besides
	// the gateway's ([[endpoints]] scopes).
	Scopes []string
	// Mode is what the endpoint lists of the tools it offers:
	// config.ModeAll ("" means that) lists them; config.ModeSearch lists
	// search_tools and call_tool, config.ModeCode search_tools and
	// run_code, through which its clients find and call them (modes.go).
	Mode string
}

// ToolSelected reports whether patterns (see [Endpoint.Tools]) choose the
// tool published as name, of server, named upstream in its server: the
// last pattern that matches name or server_upstream decides, a "!"
// excluding; none matching leaves it out. Nil patterns choose every tool.
func ToolSelected(patterns []string, name, server, upstream string) bool {
	if patterns == nil {
		return true
	}
	qualified := server + "_" + upstream
	chosen := false
	for _, p := range patterns {
		glob, exclude := strings.CutPrefix(p, "!")
		m1, _ := path.Match(glob, name)
		m2, _ := path.Match(glob, qualified)
		if m1 || m2 {
			chosen = !exclude
		}
	}
	return chosen
}

// An OfferedTool is a host tool as an endpoint offers it ([Endpoint.Offer]).
type OfferedTool struct {
	// Tool is what the endpoint's clients see: its name (Rename's where
	// renamed), Override applied.
	Tool *mcp.Tool
	// HostName is the host tool a call of it calls; Server its server.
	HostName, Server string
}

// Offer is what e offers of the host's tools, sorted by the name its
// clients see: the tools its Servers, HideTools and Tools choose, renamed
// (Rename) and overridden (Override). A renamed tool takes its new name
// before any tool's own: a tool whose own name another is renamed to is
// left out, and shadowed maps its host name to the renamed one's. This is
// what the gateway publishes on the endpoint, and what the faces show of
// an endpoint being edited.
func (e Endpoint) Offer(tools []host.Tool) (offered []OfferedTool, shadowed map[string]string) {
	renamed := make(map[string]string, len(e.Rename)) // host name -> the name clients see
	for client, hostName := range e.Rename {
		renamed[hostName] = client
	}
	taken := map[string]string{} // the name clients see -> host name
	for _, renamedPass := range []bool{true, false} {
		for _, t := range tools {
			client, r := renamed[t.Name]
			if r != renamedPass || !e.offers(t) {
				continue
			}
			if !r {
				client = t.Name
			}
			if prev, dup := taken[client]; dup {
				if shadowed == nil {
					shadowed = map[string]string{}
				}
				shadowed[t.Name] = prev
				continue
			}
			taken[client] = t.Name
			offered = append(offered, OfferedTool{Tool: e.publish(t, client), HostName: t.Name, Server: t.Server})
		}
	}
	slices.SortFunc(offered, func(a, b OfferedTool) int { return strings.Compare(a.Tool.Name, b.Tool.Name) })
	return offered, shadowed
}

// offers reports whether e offers host tool t (under whatever name).
func (e Endpoint) offers(t host.Tool) bool {
	return (e.Servers == nil || slices.Contains(e.Servers, t.Server)) && !slices.Contains(e.HideTools, t.Name) &&
		ToolSelected(e.Tools, t.Name, t.Server, t.Tool.Name)
}

// DefaultEndpoint is the endpoint of a gateway given none: every server,
// at /mcp (Streamable HTTP), /sse and /message (HTTP+SSE) and /ws
// (WebSocket).
var DefaultEndpoint = Endpoint{Path: "/mcp", SSE: "/sse", Message: "/message", WebSocket: "/ws"}

// rules are what the guard asks of a request on the endpoint's paths.
func (e Endpoint) rules() guard.Endpoint {
	return guard.Endpoint{Name: e.Name, AuthToken: e.AuthToken, Scopes: e.Scopes, Path: e.Path}
}

// paths are the endpoint's paths that are served.
func (e Endpoint) paths() []string {
	var out []string
	for _, p := range []string{e.Path, e.SSE, e.Message, e.WebSocket} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// endpoints are opts' endpoints, with the default paths filled in; an
// error names a path two of them share.
func endpoints(eps []Endpoint) ([]Endpoint, error) {
	if len(eps) == 0 {
		eps = []Endpoint{{}}
	}
	out := make([]Endpoint, len(eps))
	seen := map[string]int{}
	names := map[string]int{}
	for i, e := range eps {
		if j, dup := names[e.Name]; dup && e.Name != "" {
			return nil, fmt.Errorf("gateway: endpoints[%d] and endpoints[%d] are both named %q", j, i, e.Name)
		}
		names[e.Name] = i
		if e.Path == "" {
			e.Path, e.SSE, e.Message, e.WebSocket = DefaultEndpoint.Path, DefaultEndpoint.SSE, DefaultEndpoint.Message, DefaultEndpoint.WebSocket
		}
		for _, p := range e.paths() {
			if j, dup := seen[p]; dup {
				return nil, fmt.Errorf("gateway: endpoints[%d] and endpoints[%d] are both served at %s", j, i, p)
			}
			seen[p] = i
		}
		out[i] = e
	}
	return out, nil
}

// endpoint is an Endpoint being served: its MCP server, and what it
// publishes (under g.mu).
type endpoint struct {
	Endpoint
	g   *Gateway
	srv *mcp.Server

	exposed   map[string]bool        // nil: every server
	tools     map[string]string      // published tool names -> host tool names
	listed    map[string]string      // published tool names -> the tool as published (JSON)
	warned    map[string]bool        // Rename and Override entries warned of as naming nothing
	sent      map[string]string      // resources, templates, prompts as published (republish)
	resources map[string]string      // published URI -> server
	templates map[string]string      // published URI template -> server
	prompts   map[string]promptRoute // published name -> upstream

	// Search and code mode (modes.go): what search_tools ranks, and the
	// endpoint's chain below modeRewrite, which call_tool and run_code's
	// calls go through.
	search   atomic.Pointer[searchState]
	dispatch mcp.MethodHandler

	// The fast path (fastcall.go): the endpoint's whole chain of
	// receiving middleware as the SDK runs it, down to its dispatch to the
	// tool; the endpoint's implementation, as results name it; and the
	// session of the 2026-07-28 requests it serves.
	chain     mcp.MethodHandler
	impl      *mcp.Implementation
	stateless statelessSessionState
}

// newEndpoint makes e's MCP server, with g's handlers and middleware.
func (g *Gateway) newEndpoint(e Endpoint) *endpoint {
	ep := &endpoint{Endpoint: e, g: g,
		tools: map[string]string{}, listed: map[string]string{}, warned: map[string]bool{}, sent: map[string]string{},
		resources: map[string]string{}, templates: map[string]string{}, prompts: map[string]promptRoute{}}
	name, instructions := g.opts.Name, g.opts.Instructions
	if e.Name != "" {
		name += "/" + e.Name
	}
	if e.Instructions != "" {
		instructions = e.Instructions
	}
	if e.Servers != nil {
		ep.exposed = map[string]bool{}
		for _, id := range e.Servers {
			ep.exposed[id] = true
		}
	}
	ep.impl = &mcp.Implementation{Name: name, Version: g.opts.Version}
	ep.srv = mcp.NewServer(ep.impl, &mcp.ServerOptions{
		Instructions:       instructions,
		CompletionHandler:  ep.complete,
		SubscribeHandler:   ep.subscribe,
		UnsubscribeHandler: ep.unsubscribe,
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
			Extensions:  g.extensions(),
		},
	})
	ep.addTaskMethods()
	// The policy inside awaitStart: a hidden tool waits for the start as
	// one that does not exist does, then fails the same way.
	// The mode's tools answered outside awaitStart and the policy, which
	// they apply themselves, inside what labels and redacts requests.
	ep.srv.AddReceivingMiddleware(olderGenerationDiscover, g.loggingMiddleware, ownIdentity, ep.modeMiddleware, ep.awaitStart, ep.policyMiddleware, ep.heldTools, ep.taskMiddleware)
	// Everything a request does runs on its context (see Shutdown).
	ep.srv.AddReceivingMiddleware(g.requestMiddleware)
	// Last, so outermost: nothing leaves unredacted (redact.go).
	ep.srv.AddReceivingMiddleware(g.redactResponses)
	ep.srv.AddSendingMiddleware(g.redactOutgoing, ep.quietToolsChanged)
	if len(g.opts.Middleware) > 0 {
		ep.srv.AddReceivingMiddleware(g.opts.Middleware...)
	}
	if g.opts.EndpointMiddleware != nil {
		if mw := g.opts.EndpointMiddleware(e); len(mw) > 0 {
			ep.srv.AddReceivingMiddleware(mw...)
		}
	}
	// The tool calls made for a request know its endpoint (host.EndpointOf):
	// guardrail rules scoped by endpoint apply to them, and their usage
	// counts under its name.
	ep.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(host.WithEndpoint(ctx, ep.Name), method, req)
		}
	})
	// Outermost of all: call_tool becomes the call it makes before
	// anything, telemetry included, sees it.
	ep.srv.AddReceivingMiddleware(ep.modeRewrite)
	// Last of all: not a middleware, the chain it wraps, kept for the fast
	// path (fastcall.go). No middleware may be added after this one.
	ep.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		ep.chain = next
		return next
	})
	return ep
}

func (ep *endpoint) exposes(server string) bool {
	return ep.exposed == nil || ep.exposed[server]
}

// hostName is the host tool a client of the endpoint names name: the
// published tool's, else what Rename says, else name itself.
func (ep *endpoint) hostName(name string) string {
	ep.g.mu.Lock()
	h, ok := ep.tools[name]
	ep.g.mu.Unlock()
	if ok {
		return h
	}
	if h, ok := ep.Rename[name]; ok {
		return h
	}
	return name
}

// served are the endpoints served now.
func (g *Gateway) served() []*endpoint { return *g.eps.Load() }

// sessions are the sessions of every endpoint.
func (g *Gateway) sessions() iter.Seq[*mcp.ServerSession] {
	return func(yield func(*mcp.ServerSession) bool) {
		for _, ep := range g.served() {
			for ss := range ep.srv.Sessions() {
				if !yield(ss) {
					return
				}
			}
		}
	}
}

// SetEndpoints replaces the endpoints the gateway serves, at run time (the
// REST API's endpoints): eps is the whole new list, as Options.Endpoints
// (nil: [DefaultEndpoint] alone). An endpoint equal to one served now is
// kept as it is, its sessions with it; any other is made anew, its
// catalog published (listed within ctx) before it is served on every guard
// the gateway is mounted on. An endpoint no longer in the list, or
// changed, stops being served: its sessions end (their requests
// cancelled) and its paths answer 404. Paths are checked first, and
// nothing changes on an error: one that another route of a guard has is
// refused. It returns once the new endpoints are served. Calls are
// serialised.
func (g *Gateway) SetEndpoints(ctx context.Context, eps []Endpoint) error {
	norm, err := endpoints(eps)
	if err != nil {
		return err
	}
	g.setting.Lock()
	defer g.setting.Unlock()
	// Published before it is served: the catalog's lists, then the
	// endpoints made (they publish nothing until they are in use).
	tools := g.h.Tools()
	started := g.h.Starting() == nil
	rs, err1 := g.h.Resources(ctx)
	ts, err2 := g.h.ResourceTemplates(ctx)
	ps, err3 := g.h.Prompts(ctx)
	if err := errors.Join(err1, err2, err3); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("gateway: listing what the new endpoints publish: %w", err)
		}
		// As a resync does: what could be listed is published.
		g.log.Warn("listing upstream resources and prompts for new endpoints", "err", err)
	}

	old := g.served()
	kept := map[*endpoint]bool{}
	next := make([]*endpoint, 0, len(norm))
	var added []*endpoint
	for _, e := range norm {
		i := slices.IndexFunc(old, func(o *endpoint) bool { return !kept[o] && reflect.DeepEqual(o.Endpoint, e) })
		if i >= 0 {
			kept[old[i]] = true
			next = append(next, old[i])
			continue
		}
		ep := g.newEndpoint(e)
		ep.syncTools(tools, started)
		ep.publishResources(rs, ts)
		ep.publishPrompts(ps)
		added = append(added, ep)
		next = append(next, ep)
	}
	var removed []*endpoint
	for _, o := range old {
		if !kept[o] {
			removed = append(removed, o)
		}
	}

	g.mu.Lock()
	if g.ctx.Err() != nil {
		g.mu.Unlock()
		return errors.New("gateway: closed")
	}
	// A path a guard has for another route is refused before anything
	// changes (Guard.Handle would panic).
	for _, m := range g.mounts {
		taken := map[string]bool{}
		for _, r := range m.gd.Routes() {
			taken[r.Pattern] = !m.paths[r.Pattern]
		}
		for _, ep := range added {
			for _, p := range ep.paths() {
				if taken[p] {
					g.mu.Unlock()
					return fmt.Errorf("gateway: endpoint %q: %s is another route's", ep.Name, p)
				}
			}
		}
	}
	g.eps.Store(&next)
	var closeWS []func()
	for _, m := range g.mounts {
		for _, ep := range added {
			g.mountEndpoint(m, ep)
		}
		for _, ep := range removed {
			if h := m.handlers[ep]; h != nil {
				closeWS = append(closeWS, h.closeWS)
			}
			delete(m.handlers, ep)
		}
		m.route(next)
	}
	g.mu.Unlock()

	for _, ep := range removed {
		for ss := range ep.srv.Sessions() {
			g.endSession(ss)
		}
	}
	for _, c := range closeWS {
		c()
	}
	// What changed while the new endpoints were published, which a
	// resync over the old list missed.
	g.resync(host.ToolsChanged)
	g.resync(host.ResourcesChanged)
	g.resync(host.PromptsChanged)
	return nil
}
