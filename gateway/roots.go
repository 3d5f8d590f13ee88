package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
)

// The roots of the gateway's one client. During a call, an upstream's
// roots/list goes to the calling client (forward, directAsk). Outside a
// call (servers ask at initialize and after notifications/roots/
// list_changed) it belongs to no client, and with several clients no
// client's roots may answer for another's: the upstream is told its
// configured roots. With exactly one client (`serve --stdio` always; over
// HTTP, one session), that client's roots are the roots: the gateway asks
// it for them when its session is initialized, when it says they changed
// (notifications/roots/list_changed), and when it becomes the only client
// again, and sets them on the host ([host.Host.SetRoots]), which answers
// the upstreams with them and tells them with list_changed. Only sessions
// of protocols before 2026-07-28 count: a 2026-07-28 client is asked for
// roots within its own requests, never outside them.

// rootsAskTimeout bounds asking the one client for its roots: a client
// that does not answer leaves the upstreams with their configured roots.
const rootsAskTimeout = 10 * time.Second

// sessionInitialized follows the roots of a session that begins.
func (g *Gateway) sessionInitialized(_ context.Context, req *mcp.InitializedRequest) {
	ss := req.Session
	if ss == nil || !olderGeneration(ss) || g.ctx.Err() != nil {
		return // closing: Close has taken the sessions it ends
	}
	g.followRoots()
	g.wg.Go(func() {
		ss.Wait()
		if g.ctx.Err() == nil {
			g.followRoots() // another may be the only client now
		}
	})
}

// rootsChanged follows a client's notifications/roots/list_changed.
func (g *Gateway) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	if req.Session != nil && g.ctx.Err() == nil {
		g.followRoots()
	}
}

// olderGeneration reports whether ss is an initialized session of a
// protocol before 2026-07-28, where roots are asked by request.
func olderGeneration(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion < host.InputRequiredVersion
}

// onlyClient returns the gateway's one client, or nil when it has none or
// several.
func (g *Gateway) onlyClient() *mcp.ServerSession {
	var only *mcp.ServerSession
	for ss := range g.srv.Sessions() {
		if !olderGeneration(ss) {
			continue
		}
		if only != nil {
			return nil
		}
		only = ss
	}
	return only
}

// followRoots sets on the host the roots of the gateway's one client, or
// none (the configured roots) when it has several, asking on a goroutine
// of its own; of changes that overlap, the last one decides.
func (g *Gateway) followRoots() {
	g.rootsMu.Lock()
	g.rootsGen++
	gen := g.rootsGen
	g.rootsMu.Unlock()
	only := g.onlyClient()
	g.wg.Go(func() {
		var roots []*mcp.Root // nil: the configured roots
		if only != nil {
			if p := only.InitializeParams(); p.Capabilities != nil && p.Capabilities.RootsV2 != nil {
				res, err := g.askRoots(only)
				switch {
				case err != nil:
					g.log.Info("the gateway's one client did not say its roots; the upstreams are told their configured roots", "err", g.red.Redact(err.Error()))
				case res.Roots == nil:
					roots = []*mcp.Root{}
				default:
					roots = res.Roots
				}
			}
		}
		g.rootsApply.Lock()
		defer g.rootsApply.Unlock()
		g.rootsMu.Lock()
		stale := gen != g.rootsGen
		g.rootsMu.Unlock()
		if !stale {
			g.h.SetRoots(roots)
		}
	})
}

// askRoots asks ss for its roots, within rootsAskTimeout and the life of
// its session: a session that ends (DELETE, eviction, the shutdown's
// grace) ends the question first, for closing it waits for the questions
// put to its client.
func (g *Gateway) askRoots(ss *mcp.ServerSession) (*mcp.ListRootsResult, error) {
	life, release, err := g.ends.Hold(ss)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeoutCause(life, rootsAskTimeout, errors.New("no answer within "+rootsAskTimeout.String()))
	defer cancel()
	return ss.ListRoots(ctx, &mcp.ListRootsParams{})
}
