package gateway

import (
	"fmt"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
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
	// Name identifies the endpoint ([[endpoints]] name): in the guard's
	// refusals, and as the switchboard.endpoint of its metrics and spans.
	// "" is the default endpoint.
	Name string
	// AuthToken is the endpoint's own token (resolved): it opens this
	// endpoint's paths alone, besides the owner's ([guard.Endpoint]).
	AuthToken string
	// Scopes are the OAuth scopes a token needs on this endpoint, besides
	// the gateway's ([[endpoints]] scopes).
	Scopes []string
}

// DefaultEndpoint is the endpoint of a gateway given none: every server,
// at /mcp (Streamable HTTP), /sse and /message (HTTP+SSE) and /ws
// (WebSocket).
var DefaultEndpoint = Endpoint{Path: "/mcp", SSE: "/sse", Message: "/message", WebSocket: "/ws"}

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
	for i, e := range eps {
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
	hidden    map[string]bool        // tool names left out (HideTools)
	tools     map[string]bool        // published tool names
	resources map[string]string      // published URI -> server
	templates map[string]string      // published URI template -> server
	prompts   map[string]promptRoute // published name -> upstream
}

// newEndpoint makes e's MCP server, with g's handlers and middleware.
func (g *Gateway) newEndpoint(e Endpoint) *endpoint {
	ep := &endpoint{Endpoint: e, g: g, hidden: map[string]bool{},
		tools: map[string]bool{}, resources: map[string]string{}, templates: map[string]string{}, prompts: map[string]promptRoute{}}
	for _, name := range e.HideTools {
		ep.hidden[name] = true
	}
	if e.Servers != nil {
		ep.exposed = map[string]bool{}
		for _, id := range e.Servers {
			ep.exposed[id] = true
		}
	}
	ep.srv = mcp.NewServer(&mcp.Implementation{Name: g.opts.Name, Version: g.opts.Version}, &mcp.ServerOptions{
		Instructions:       g.opts.Instructions,
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
		},
	})
	// The policy inside awaitStart: a hidden tool waits for the start as
	// one that does not exist does, then fails the same way.
	ep.srv.AddReceivingMiddleware(olderGenerationDiscover, g.loggingMiddleware, ownIdentity, ep.awaitStart, ep.policyMiddleware)
	// Everything a request does runs on its context (see Shutdown).
	ep.srv.AddReceivingMiddleware(g.requestMiddleware)
	// Last, so outermost: nothing leaves unredacted (redact.go).
	ep.srv.AddReceivingMiddleware(g.redactResponses)
	ep.srv.AddSendingMiddleware(g.redactOutgoing)
	if len(g.opts.Middleware) > 0 {
		ep.srv.AddReceivingMiddleware(g.opts.Middleware...)
	}
	if g.opts.EndpointMiddleware != nil {
		if mw := g.opts.EndpointMiddleware(e.Name); len(mw) > 0 {
			ep.srv.AddReceivingMiddleware(mw...)
		}
	}
	return ep
}

func (ep *endpoint) exposes(server string) bool {
	return ep.exposed == nil || ep.exposed[server]
}

// sessions are the sessions of every endpoint.
func (g *Gateway) sessions() iter.Seq[*mcp.ServerSession] {
	return func(yield func(*mcp.ServerSession) bool) {
		for _, ep := range g.eps {
			for ss := range ep.srv.Sessions() {
				if !yield(ss) {
					return
				}
			}
		}
	}
}
