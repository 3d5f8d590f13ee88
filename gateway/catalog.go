package gateway

// The catalog: what the gateway publishes of its host's tools, resources
// and prompts (those of the servers it exposes, less the hidden tools),
// kept in step with the host's events, and the requests held while the
// host starts.

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
)

// follow republishes what the host's events say changed, until the
// gateway or the host closes.
func (g *Gateway) follow(w *host.Watcher) {
	defer w.Close()
	for ev := range w.Events(g.ctx) {
		switch ev.Kind {
		case host.EventCatalog:
			g.resync(ev.Change)
			g.checkRequired() // the catalog has the server that changed

		case host.EventResourceUpdated:
			g.resourceUpdated(ev.Server, ev.Resource)
		case host.EventDropped:
			g.checkRequired()
			// Changes were lost: republish everything.
			for _, k := range []host.ChangeKind{host.ToolsChanged, host.ResourcesChanged, host.PromptsChanged} {
				g.resync(k)
			}
		}
	}
}

// awaitStart holds requests that the servers still starting could answer
// otherwise, while the host starts (a daemon serves before its servers are
// up, and answers initialize at once):
//
//   - a listing (tools, prompts, resources, templates) waits until every
//     server that is not optional is up and published: a client that
//     lists once after initialize and does not follow list_changed (the
//     MCP inspector's CLI) gets what the configuration requires; optional
//     servers join later, with list_changed;
//   - a request for a tool, prompt or resource the gateway does not
//     publish (yet) waits until every server has had its first attempt
//     and is published: a client that calls right after initialize,
//     without listing, gets its call made once the tool's server is up
//     rather than "unknown tool".
//
// Everything else, and every request once the host has started, passes at
// once.
func (ep *endpoint) awaitStart(next mcp.MethodHandler) mcp.MethodHandler {
	g := ep.g
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		starting := g.h.Starting()
		if starting == nil {
			return next(ctx, method, req)
		}
		var enough <-chan struct{} // what the request waits for, besides the start
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			enough = g.required
		default:
			if ep.published(req) {
				return next(ctx, method, req)
			}
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if t, ok := g.h.Tool(ep.hostName(r.Params.Name)); ok && ep.offers(t) {
					enough = closedChan // the host has it: only its publication is due
				}
			}
		}
		select {
		case <-enough:
		case <-starting:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case <-g.h.Done():
			// The start failed (a required server) and closed the host:
			// the daemon is going down; an empty answer would look final.
			return nil, &jsonrpc.Error{Code: codeShuttingDown, Message: ErrShuttingDown.Error() + ": a required server failed to start"}
		default:
		}
		if err := g.Sync(ctx); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	}
}

// closedChan is a channel that is closed.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// checkRequired closes g.required once every server that is not optional
// is up (ready, or lazily idle with its cached tools) in the host's
// catalog.
func (g *Gateway) checkRequired() {
	for _, st := range g.h.Servers() {
		up := st.State == host.StateReady || st.State == host.StateDegraded || st.State == host.StateLazy
		if !st.Optional && !up {
			return
		}
	}
	g.reqOnce.Do(func() { close(g.required) })
}

// published reports whether req is for a tool, prompt or resource the
// endpoint publishes, or is another request.
func (ep *endpoint) published(req mcp.Request) bool {
	ep.g.mu.Lock()
	defer ep.g.mu.Unlock()
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params == nil {
			return true
		}
		_, ok := ep.tools[r.Params.Name]
		return ok
	case *mcp.GetPromptRequest:
		if r.Params == nil {
			return true
		}
		_, ok := ep.prompts[r.Params.Name]
		return ok
	case *mcp.ReadResourceRequest:
		if r.Params == nil {
			return true
		}
		_, ok := ep.resources[r.Params.URI]
		return ok
	}
	return true
}

// resync republishes a list after an upstream announced a change. Changes
// arriving while a resync runs coalesce into one more.
func (g *Gateway) resync(kind host.ChangeKind) {
	g.mu.Lock()
	start := g.resyncLocked(kind)
	g.mu.Unlock()
	if start {
		g.runResync(kind)
	}
}

// resyncLocked marks kind to be republished, and reports whether a resync
// must start (none runs). g.mu is held.
func (g *Gateway) resyncLocked(kind host.ChangeKind) bool {
	if g.syncing[kind] {
		g.dirty[kind] = true
		return false
	}
	g.syncing[kind] = true
	return true
}

// runResync republishes kind on a goroutine, again as long as it is
// marked dirty meanwhile.
func (g *Gateway) runResync(kind host.ChangeKind) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			if g.ctx.Err() == nil {
				ctx, cancel := context.WithTimeout(g.ctx, time.Minute)
				var err error
				switch kind {
				case host.ToolsChanged:
					g.syncTools()
				case host.ResourcesChanged:
					err = g.syncResources(ctx)
				case host.PromptsChanged:
					err = g.syncPrompts(ctx)
				}
				cancel()
				if err != nil && !errors.Is(err, host.ErrClosed) { // closing is no news
					g.log.Warn("republishing after list_changed", "kind", kind, "err", err)
				}
			}
			g.mu.Lock()
			if !g.dirty[kind] {
				g.syncing[kind] = false
				if !g.syncing[host.ToolsChanged] && !g.syncing[host.ResourcesChanged] && !g.syncing[host.PromptsChanged] {
					for _, c := range g.synced {
						close(c)
					}
					g.synced = nil
				}
				g.mu.Unlock()
				return
			}
			g.dirty[kind] = false
			g.mu.Unlock()
		}
	}()
}

// Sync republishes what the host offers now — its tools, and the
// resources and prompts its servers list — as the gateway does when the
// host says they changed, and returns when that is done, or ctx ends: a
// client that lists them from then on gets at least what the host had
// when Sync was called. The daemon calls it before it says it is ready.
func (g *Gateway) Sync(ctx context.Context) error {
	kinds := []host.ChangeKind{host.ToolsChanged, host.ResourcesChanged, host.PromptsChanged}
	c := make(chan struct{})
	var start []host.ChangeKind
	g.mu.Lock()
	// All marked at once, before any runs: c is closed once none runs,
	// so after each has run (again) from now.
	for _, k := range kinds {
		if g.resyncLocked(k) {
			start = append(start, k)
		}
	}
	g.synced = append(g.synced, c)
	g.mu.Unlock()
	for _, k := range start {
		g.runResync(k)
	}
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-g.ctx.Done():
		return errors.New("gateway: closed")
	}
}

// syncTools publishes the host's tools on each endpoint, as it offers
// them (endpoint.offers, Rename, Override): new and changed ones are added
// (the SDK tells the endpoint's clients the list changed), vanished ones
// removed. An endpoint whose view did not change is left alone, and its
// clients get no list_changed.
func (g *Gateway) syncTools() {
	tools := g.h.Tools()
	started := g.h.Starting() == nil
	for _, ep := range g.served() {
		ep.syncTools(tools, started)
	}
}

// syncTools publishes tools on ep; started says the host has started
// (every server had its first attempt), when a Rename or Override naming
// no tool is warned of.
func (ep *endpoint) syncTools(tools []host.Tool, started bool) {
	g := ep.g
	want := map[string]string{} // published name -> host name
	var add []*mcp.Tool
	listed := map[string]string{}
	offered, shadowed := ep.Offer(tools)
	for _, name := range slices.Sorted(maps.Keys(shadowed)) {
		if !ep.warned["shadowed "+name] {
			ep.warned["shadowed "+name] = true
			g.log.Warn("endpoint: a tool left out: another is renamed to its name", "endpoint", ep.Name, "tool", name, "renamed", shadowed[name])
		}
	}
	for _, o := range offered {
		name := o.Tool.Name
		want[name] = o.HostName
		b, _ := json.Marshal(o.Tool)
		listed[name] = string(b)
		g.mu.Lock()
		same := ep.listed[name] == string(b) && ep.tools[name] == o.HostName
		g.mu.Unlock()
		if !same {
			add = append(add, o.Tool)
		}
	}
	for _, tool := range add {
		hostName := want[tool.Name]
		handler := g.callTool
		if hostName != tool.Name {
			handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return g.callTool(ctx, renameCall(req, hostName))
			}
		}
		ep.srv.AddTool(tool, handler)
	}
	g.mu.Lock()
	var gone []string
	for name := range ep.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	ep.tools, ep.listed = want, listed
	g.mu.Unlock()
	if len(gone) > 0 {
		ep.srv.RemoveTools(gone...)
	}
	if ep.searching() {
		ep.indexTools(offered)
	}
	if started {
		ep.warnUnused(tools, want)
	}
}

// publish is host tool t as the endpoint's clients see it, named name,
// with its Override.
func (ep Endpoint) publish(t host.Tool, name string) *mcp.Tool {
	up := t.Tool
	tool := &mcp.Tool{
		Meta:         up.Meta,
		Annotations:  up.Annotations,
		Description:  up.Description,
		InputSchema:  inputSchema(up.InputSchema),
		Name:         name,
		OutputSchema: up.OutputSchema,
		Title:        up.Title,
		Icons:        up.Icons,
	}
	o, ok := ep.Override[name]
	if !ok {
		return tool
	}
	if o.Title != "" {
		tool.Title = o.Title
	}
	if o.Description != "" {
		tool.Description = o.Description
	}
	if o.ReadOnlyHint != nil || o.DestructiveHint != nil || o.IdempotentHint != nil || o.OpenWorldHint != nil {
		var a mcp.ToolAnnotations
		if up.Annotations != nil {
			a = *up.Annotations
		}
		if o.ReadOnlyHint != nil {
			a.ReadOnlyHint = *o.ReadOnlyHint
		}
		if o.DestructiveHint != nil {
			a.DestructiveHint = o.DestructiveHint
		}
		if o.IdempotentHint != nil {
			a.IdempotentHint = *o.IdempotentHint
		}
		if o.OpenWorldHint != nil {
			a.OpenWorldHint = o.OpenWorldHint
		}
		tool.Annotations = &a
	}
	return tool
}

// warnUnused warns, once each, of a Rename whose tool the host does not
// have or the endpoint does not offer, and of an Override of a name the
// endpoint does not publish: checkable only once the servers have listed
// their tools, as a server's tools_allowlist is.
func (ep *endpoint) warnUnused(tools []host.Tool, published map[string]string) {
	have := map[string]bool{}
	for _, t := range tools {
		have[t.Name] = have[t.Name] || ep.offers(t)
	}
	for _, client := range slices.Sorted(maps.Keys(ep.Rename)) {
		target := ep.Rename[client]
		if key := "rename." + client; !have[target] && !ep.warned[key] {
			ep.warned[key] = true
			ep.g.log.Warn("endpoint: rename names no tool the endpoint offers", "endpoint", ep.Name, "field", key, "tool", target)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(ep.Override)) {
		if _, ok := published[name]; !ok && !ep.warned["override."+name] {
			ep.warned["override."+name] = true
			ep.g.log.Warn("endpoint: override names no tool the endpoint offers", "endpoint", ep.Name, "field", "override."+name)
		}
	}
}

// renameCall is req calling hostName instead of the name its client gave.
func renameCall(req *mcp.CallToolRequest, hostName string) *mcp.CallToolRequest {
	if req.Params == nil {
		return req
	}
	p := *req.Params
	p.Name = hostName
	r := *req
	r.Params = &p
	return &r
}

// inputSchema passes an upstream schema through as raw JSON, so that the
// SDK does not reinterpret it; a missing one becomes the empty object schema.
func inputSchema(s any) any {
	if s == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return json.RawMessage(raw)
}

// serverOf finds which published resource or template a URI belongs to.
func (ep *endpoint) serverOf(uri string) (string, bool) {
	ep.g.mu.Lock()
	defer ep.g.mu.Unlock()
	if s, ok := ep.resources[uri]; ok {
		return s, true
	}
	for tmpl, s := range ep.templates {
		if matchTemplate(tmpl, uri) {
			return s, true
		}
	}
	return "", false
}
