package gateway

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// A Grant is what a caller may see of the servers and their tools,
// resources and prompts, under [[gateway.auth.policy]]: the union of the
// rules its OAuth token matches. The owner (no token), and every token
// when there is no policy, may see everything. Every face asks the same
// Grant: the MCP endpoints (policyMiddleware) and the REST API.
type Grant struct {
	all   bool
	rules []config.AuthPolicy
}

// GrantFor is what a caller with token ti (nil: the owner) may see under
// policy.
func GrantFor(policy []config.AuthPolicy, ti *auth.TokenInfo) Grant {
	if ti == nil || len(policy) == 0 {
		return Grant{all: true}
	}
	var gr Grant
	for _, r := range policy {
		if matches(r, ti) {
			gr.rules = append(gr.rules, r)
		}
	}
	return gr
}

// GrantOf is what the caller of a request whose context is ctx may see:
// its OAuth token's grant (the token the guard checked,
// auth.TokenInfoFromContext), or everything for the owner.
func GrantOf(ctx context.Context, policy []config.AuthPolicy) Grant {
	return GrantFor(policy, auth.TokenInfoFromContext(ctx))
}

// All reports whether the grant covers everything.
func (gr Grant) All() bool { return gr.all }

// matches reports whether rule r applies to the token: it has r.Scope,
// and every claim of r.Claims (a string claim equal to the value, or an
// array claim holding it).
func matches(r config.AuthPolicy, ti *auth.TokenInfo) bool {
	if r.Scope != "" && !slices.Contains(ti.Scopes, r.Scope) {
		return false
	}
	claims, _ := ti.Extra["claims"].(map[string]any)
	for k, want := range r.Claims {
		switch v := claims[k].(type) {
		case string:
			if v != want {
				return false
			}
		case []any:
			if !slices.Contains(v, any(want)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func ruleServer(r config.AuthPolicy, server string) bool {
	return r.Servers == nil || slices.Contains(r.Servers, server)
}

// Server reports whether the grant covers a server: the server itself,
// its resources and its prompts.
func (gr Grant) Server(server string) bool {
	if gr.all {
		return true
	}
	for _, r := range gr.rules {
		if ruleServer(r, server) {
			return true
		}
	}
	return false
}

// Tool reports whether the grant covers the tool clients see as name, of
// server.
func (gr Grant) Tool(server, name string) bool {
	if gr.all {
		return true
	}
	for _, r := range gr.rules {
		if !ruleServer(r, server) {
			continue
		}
		if r.Tools == nil {
			return true
		}
		for _, pat := range r.Tools {
			if ok, _ := path.Match(pat, name); ok {
				return true
			}
		}
	}
	return false
}

// policyMiddleware applies the endpoint's [Endpoint.Policy] to a request that came with an
// OAuth token: lists leave out what the token's rules do not grant, and a
// request for a tool, prompt or resource outside them fails as it would if
// the gateway did not publish it (the same error as an unknown name), so
// that a client cannot tell a hidden tool from a missing one. A request
// without a token (stdio, the local socket, auth_token) is the owner's,
// and passes.
func (ep *endpoint) policyMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	if len(ep.Policy) == 0 {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ti := tokenInfo(ctx, req)
		if ti == nil {
			return next(ctx, method, req)
		}
		gr := GrantFor(ep.Policy, ti)
		switch r := req.(type) {
		case *mcp.CallToolRequest:
			if r.Params != nil && !ep.toolGranted(gr, r.Params.Name) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", r.Params.Name)}
			}
		case *mcp.GetPromptRequest:
			if r.Params != nil && !ep.promptGranted(gr, r.Params.Name) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", r.Params.Name)}
			}
		case *mcp.ReadResourceRequest:
			if r.Params != nil && !ep.resourceGranted(gr, r.Params.URI) {
				return nil, mcp.ResourceNotFoundError(r.Params.URI)
			}
		case *mcp.SubscribeRequest:
			if r.Params != nil && !ep.resourceGranted(gr, r.Params.URI) {
				return nil, mcp.ResourceNotFoundError(r.Params.URI)
			}
		case *mcp.CompleteRequest:
			if r.Params != nil && r.Params.Ref != nil {
				ref := r.Params.Ref
				switch {
				case ref.Type == "ref/prompt" && !ep.promptGranted(gr, ref.Name):
					return nil, fmt.Errorf("completion: unknown prompt %q", ref.Name)
				case ref.Type == "ref/resource" && !ep.resourceGranted(gr, ref.URI):
					return nil, fmt.Errorf("completion: unknown resource %q", ref.URI)
				}
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		return ep.filterList(gr, res), nil
	}
}

func (ep *endpoint) toolGranted(gr Grant, name string) bool {
	t, ok := ep.g.h.Tool(ep.hostName(name))
	return ok && gr.Tool(t.Server, t.Name)
}

func (ep *endpoint) promptGranted(gr Grant, name string) bool {
	ep.g.mu.Lock()
	route, ok := ep.prompts[name]
	ep.g.mu.Unlock()
	return ok && gr.Server(route.server)
}

// resourceGranted reports whether uri, a resource or a template's URI, is
// of a granted server.
func (ep *endpoint) resourceGranted(gr Grant, uri string) bool {
	ep.g.mu.Lock()
	s, ok := ep.templates[uri]
	ep.g.mu.Unlock()
	if !ok {
		s, ok = ep.serverOf(uri)
	}
	return ok && gr.Server(s)
}

// filterList returns a listing without what gr does not grant; other
// results unchanged. It copies: the SDK owns what it gave.
func (ep *endpoint) filterList(gr Grant, res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		c := *r
		c.Tools = slices.DeleteFunc(slices.Clone(r.Tools), func(t *mcp.Tool) bool { return !ep.toolGranted(gr, t.Name) })
		return &c
	case *mcp.ListPromptsResult:
		c := *r
		c.Prompts = slices.DeleteFunc(slices.Clone(r.Prompts), func(p *mcp.Prompt) bool { return !ep.promptGranted(gr, p.Name) })
		return &c
	case *mcp.ListResourcesResult:
		c := *r
		c.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(x *mcp.Resource) bool { return !ep.resourceGranted(gr, x.URI) })
		return &c
	case *mcp.ListResourceTemplatesResult:
		c := *r
		c.ResourceTemplates = slices.DeleteFunc(slices.Clone(r.ResourceTemplates), func(x *mcp.ResourceTemplate) bool { return !ep.resourceGranted(gr, x.URITemplate) })
		return &c
	}
	return res
}

// heldTools answers a call to a tool the endpoint would offer but whose
// definition is held until a person approves it (host/pin.go) with the
// host's error naming the change, rather than the SDK's "unknown tool":
// the client, and its user, learn why the tool went away. Inside the
// policy: a tool hidden from the caller stays unknown.
func (ep *endpoint) heldTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.CallToolRequest)
		if !ok || r.Params == nil || ep.published(req) {
			return next(ctx, method, req)
		}
		name := ep.hostName(r.Params.Name)
		server, tool, _, held := ep.g.h.HeldTool(name)
		if !held || !ep.offers(host.Tool{Name: name, Server: server, Tool: &mcp.Tool{Name: tool}}) {
			return next(ctx, method, req)
		}
		_, err := ep.g.h.CallTool(ctx, name, nil, nil) // refused, naming the change
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
}

// tokenInfo is the token a request came with: the request's own (Streamable
// HTTP), else the one its connection was opened with (legacy SSE,
// WebSocket: the go-sdk keeps the values of the context a session was
// connected on). nil when the request came without OAuth (stdio, the local
// socket, auth_token).
func tokenInfo(ctx context.Context, req mcp.Request) *auth.TokenInfo {
	if e := req.GetExtra(); e != nil && e.TokenInfo != nil {
		return e.TokenInfo
	}
	return auth.TokenInfoFromContext(ctx)
}
