package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboardmcp/switchboard/host"
)

// syncResources publishes the upstreams' resources and templates under
// their own URIs, on each endpoint. A URI two servers share goes to the
// first declared, the same rule as tool names; the other is logged.
func (g *Gateway) syncResources(ctx context.Context) error {
	rs, err := g.h.Resources(ctx)
	ts, err2 := g.h.ResourceTemplates(ctx)
	for _, ep := range g.served() {
		ep.publishResources(rs, ts)
	}
	return errors.Join(err, err2)
}

func (ep *endpoint) publishResources(rs []host.Resource, ts []host.ResourceTemplate) {
	g := ep.g
	wantR := map[string]string{}
	for _, r := range rs {
		if !ep.exposes(r.Server) {
			continue
		}
		if prev, dup := wantR[r.Resource.URI]; dup {
			g.log.Warn("resource URI offered by two servers; the first wins", "uri", r.Resource.URI, "kept", prev, "skipped", r.Server)
			continue
		}
		wantR[r.Resource.URI] = r.Server
		res := *r.Resource
		server := r.Server
		if !ep.republish("resource", res.URI, server, &res) {
			continue
		}
		ep.srv.AddResource(&res, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return g.readResource(ctx, server, req)
		})
	}
	wantT := map[string]string{}
	for _, t := range ts {
		if !ep.exposes(t.Server) {
			continue
		}
		if _, dup := wantT[t.Template.URITemplate]; dup {
			continue
		}
		if _, err := uritemplate.New(t.Template.URITemplate); err != nil {
			g.log.Warn("skipping an invalid resource template", "server", t.Server, "template", t.Template.URITemplate, "err", err)
			continue
		}
		wantT[t.Template.URITemplate] = t.Server
		tmpl := *t.Template
		server := t.Server
		if !ep.republish("template", tmpl.URITemplate, server, &tmpl) {
			continue
		}
		ep.srv.AddResourceTemplate(&tmpl, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return g.readResource(ctx, server, req)
		})
	}
	g.mu.Lock()
	var goneR, goneT []string
	for uri := range ep.resources {
		if _, ok := wantR[uri]; !ok {
			goneR = append(goneR, uri)
		}
	}
	for tmpl := range ep.templates {
		if _, ok := wantT[tmpl]; !ok {
			goneT = append(goneT, tmpl)
		}
	}
	ep.resources, ep.templates = wantR, wantT
	forgetKeys(ep.sent, "resource", wantR)
	forgetKeys(ep.sent, "template", wantT)
	g.mu.Unlock()
	if len(goneR) > 0 {
		ep.srv.RemoveResources(goneR...)
	}
	if len(goneT) > 0 {
		ep.srv.RemoveResourceTemplates(goneT...)
	}
}

// syncPrompts publishes the upstreams' prompts, named like tools, on each
// endpoint.
func (g *Gateway) syncPrompts(ctx context.Context) error {
	ps, err := g.h.Prompts(ctx)
	for _, ep := range g.served() {
		ep.publishPrompts(ps)
	}
	return err
}

// publishPrompts publishes ps, named like tools, on ep.
func (ep *endpoint) publishPrompts(ps []host.Prompt) {
	g := ep.g
	format := g.h.ToolNameFormat()
	want := map[string]promptRoute{}
	for _, p := range ps {
		if !ep.exposes(p.Server) {
			continue
		}
		name := host.ToolName(format, p.Server, p.Prompt.Name)
		if _, dup := want[name]; dup {
			g.log.Warn("prompt name collides; the first wins", "name", name, "skipped", p.Server)
			continue
		}
		route := promptRoute{server: p.Server, name: p.Prompt.Name}
		want[name] = route
		pr := *p.Prompt
		pr.Name = name
		if !ep.republish("prompt", name, p.Server+"\x00"+p.Prompt.Name, &pr) {
			continue
		}
		ep.srv.AddPrompt(&pr, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return g.getPrompt(ctx, route, req)
		})
	}
	g.mu.Lock()
	var gone []string
	for name := range ep.prompts {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	ep.prompts = want
	forgetKeys(ep.sent, "prompt", want)
	g.mu.Unlock()
	if len(gone) > 0 {
		ep.srv.RemovePrompts(gone...)
	}
}

// complete routes completion/complete to the server that owns the prompt or
// resource template.
func (ep *endpoint) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	g := ep.g
	p := *req.Params
	if p.Ref == nil {
		return nil, fmt.Errorf("completion: missing ref")
	}
	ref := *p.Ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		g.mu.Lock()
		route, ok := ep.prompts[ref.Name]
		g.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("completion: unknown prompt %q", ref.Name)
		}
		server, ref.Name = route.server, route.name
	case "ref/resource":
		g.mu.Lock()
		s, ok := ep.templates[ref.URI]
		if !ok {
			s, ok = ep.resources[ref.URI]
		}
		g.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("completion: unknown resource %q", ref.URI)
		}
		server = s
	default:
		return nil, fmt.Errorf("completion: unknown ref type %q", ref.Type)
	}
	p.Ref = &ref
	return g.h.Complete(ctx, server, &p)
}

// MaxSessionSubscriptions bounds the resource subscriptions one
// downstream session holds: a template stands for any number of URIs, and
// each subscription is held upstream too.
const MaxSessionSubscriptions = 256

// subscribe subscribes upstream once per (server, URI), for the first
// downstream session that subscribes; the SDK sends updates only to the
// sessions that subscribed. The upstream subscription ends with the last
// session that holds it, whether it unsubscribes or ends (dropSession).
func (ep *endpoint) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	g := ep.g
	uri := req.Params.URI
	server, ok := ep.serverOf(uri)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	k, ss := subKey{server, uri}, req.Session
	g.mu.Lock()
	held := g.sessSubs[ss]
	if held[k] {
		g.mu.Unlock()
		return nil
	}
	if len(held) >= MaxSessionSubscriptions {
		g.mu.Unlock()
		return fmt.Errorf("resources/subscribe %s: this session holds %d resource subscriptions already, the most one session may (unsubscribe from one first)", uri, MaxSessionSubscriptions)
	}
	if held == nil {
		if g.ctx.Err() != nil {
			g.mu.Unlock()
			return ErrShuttingDown
		}
		held = map[subKey]bool{}
		g.sessSubs[ss] = held
		g.wg.Go(func() {
			ss.Wait()
			g.dropSession(ss)
		})
	}
	held[k] = true
	if g.subs[k] == nil {
		g.subs[k] = map[*mcp.ServerSession]bool{}
	}
	g.subs[k][ss] = true
	first := len(g.subs[k]) == 1
	g.mu.Unlock()
	if !first {
		return nil
	}
	if err := g.h.Subscribe(ctx, server, uri); err != nil {
		g.mu.Lock()
		g.release(ss, k)
		g.mu.Unlock()
		return err
	}
	return nil
}

// release drops ss's hold on k, and reports whether it was the last one;
// g.mu is held.
func (g *Gateway) release(ss *mcp.ServerSession, k subKey) (last bool) {
	delete(g.sessSubs[ss], k)
	sessions, ok := g.subs[k]
	if !ok || !sessions[ss] {
		return false
	}
	delete(sessions, ss)
	if len(sessions) > 0 {
		return false
	}
	delete(g.subs, k)
	return true
}

func (ep *endpoint) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	g := ep.g
	uri := req.Params.URI
	server, ok := ep.serverOf(uri)
	if !ok {
		return nil
	}
	g.mu.Lock()
	last := g.release(req.Session, subKey{server, uri})
	g.mu.Unlock()
	if last {
		return g.h.Unsubscribe(ctx, server, uri)
	}
	return nil
}

// dropSession releases what an ended session held, and unsubscribes
// upstream where it was the last.
func (g *Gateway) dropSession(ss *mcp.ServerSession) {
	g.mu.Lock()
	var gone []subKey
	for k := range g.sessSubs[ss] {
		if g.release(ss, k) {
			gone = append(gone, k)
		}
	}
	delete(g.sessSubs, ss)
	g.mu.Unlock()
	for _, k := range gone {
		if g.ctx.Err() != nil {
			return // closing: the host's sessions go with it, or stay its own
		}
		ctx, cancel := context.WithTimeout(g.ctx, unsubscribeTimeout)
		if err := g.h.Unsubscribe(ctx, k.server, k.uri); err != nil {
			g.log.Debug("unsubscribing after its session ended", "server", k.server, "uri", k.uri, "err", err)
		}
		cancel()
	}
}

// unsubscribeTimeout bounds an unsubscribe made for a session that ended.
const unsubscribeTimeout = 10 * time.Second

// resourceUpdated tells the sessions subscribed to the resource, on every
// endpoint that exposes its server (the SDK sends it to the sessions of
// its server that subscribed).
func (g *Gateway) resourceUpdated(server string, p *mcp.ResourceUpdatedNotificationParams) {
	for _, ep := range g.served() {
		if !ep.exposes(server) {
			continue
		}
		if err := ep.srv.ResourceUpdated(g.ctx, p); err != nil {
			g.log.Debug("forwarding resources/updated", "server", server, "uri", p.URI, "err", err)
		}
	}
}

// matchTemplate reports whether uri is an instance of the RFC 6570 template.
func matchTemplate(tmpl, uri string) bool {
	if !strings.ContainsRune(tmpl, '{') {
		return tmpl == uri
	}
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return false
	}
	return t.Match(uri) != nil
}

// readResource forwards resources/read. A 2026-07-28 client's goes out on
// the upstream's connection of that generation when it has one, so that an
// input-required result passes through as it is (see callToolInput).
func (g *Gateway) readResource(ctx context.Context, server string, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	p := req.Params
	return inGeneration(req.ProtocolVersion(), inputOptions(p.InputResponses, p.RequestState, p.GetMeta()),
		func(o *host.RequestOptions) (*mcp.ReadResourceResult, error) {
			return g.h.ReadResource(ctx, server, p.URI, o)
		})
}

// getPrompt forwards prompts/get, like readResource.
func (g *Gateway) getPrompt(ctx context.Context, route promptRoute, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	p := req.Params
	return inGeneration(req.ProtocolVersion(), inputOptions(p.InputResponses, p.RequestState, p.GetMeta()),
		func(o *host.RequestOptions) (*mcp.GetPromptResult, error) {
			return g.h.GetPrompt(ctx, route.server, route.name, p.Arguments, o)
		})
}

// inGeneration makes a request with o when the client speaks 2026-07-28 and
// the upstream does too, else on the upstream's own connection.
func inGeneration[R any](version string, o *host.RequestOptions, do func(*host.RequestOptions) (R, error)) (R, error) {
	if newGeneration(version) {
		res, err := do(o)
		if !errors.Is(err, host.ErrOlderGeneration) {
			return res, upstreamError(err)
		}
	}
	res, err := do(nil)
	return res, upstreamError(err)
}

// upstreamError passes an upstream's protocol error on as it was sent, so
// that the client sees its code; other errors are the gateway's own.
func upstreamError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	return err
}

// republish reports whether v, published by the endpoint as key of kind
// ("resource", "template", "prompt") and routed to route, differs from
// what it published last, and records it: re-adding the same would tell
// every client of the endpoint that the list changed.
func (ep *endpoint) republish(kind, key, route string, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return true
	}
	k, now := kind+"\x00"+key, route+"\x00"+string(b)
	ep.g.mu.Lock()
	defer ep.g.mu.Unlock()
	if ep.sent[k] == now {
		return false
	}
	ep.sent[k] = now
	return true
}

// forgetKeys drops what republish recorded of kind but the keys of want.
// g.mu is held.
func forgetKeys[V any](published map[string]string, kind string, want map[string]V) {
	for k := range published {
		rest, ok := strings.CutPrefix(k, kind+"\x00")
		if _, kept := want[rest]; ok && !kept {
			delete(published, k)
		}
	}
}
