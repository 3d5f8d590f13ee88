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
//
// Over HTTP, clients are asked only once an upstream has wanted roots
// outside a call ([host.Host.RootsWanted]; the host tells the gateway the
// first time, and holds that request until the roots are set): most
// upstreams never ask, and their clients are spared the question. `serve
// --stdio` asks its one client as soon as it is initialized, as the
// upstreams start meanwhile and may ask at their initialize.

// rootsAskTimeout bounds asking the one client for its roots: a client
// that does not answer leaves the upstreams with their configured roots.
const rootsAskTimeout = 10 * time.Second

// sessionInitialized follows the roots of a session that begins.
func (g *Gateway) sessionInitialized(_ context.Context, req *mcp.InitializedRequest) {
	ss := req.Session
	if ss == nil || !olderGeneration(ss) {
		return
	}
	g.followRoots()
	if g.opts.OnlyClient != nil || g.h.RootsWanted() {
		g.watchEnd(ss)
	}
}

// rootsWanted is told when an upstream first wants roots outside a call
// ([host.Host.OnRootsWanted]): from then on the ends of sessions count.
func (g *Gateway) rootsWanted() {
	for ss := range g.sessions() {
		if olderGeneration(ss) {
			g.watchEnd(ss)
		}
	}
	g.followRoots()
}

// watchEnd follows the roots again when ss ends (another may be the only
// client then), once per session. Only once roots are followed: until
// then a goroutine waiting on each session would cost every idle session
// its stack (≈ 4 KiB) for nothing. A session initialized before then is
// watched from then (rootsWanted); one after, as it is initialized.
func (g *Gateway) watchEnd(ss *mcp.ServerSession) {
	g.rootsMu.Lock()
	if g.rootsWatched[ss] {
		g.rootsMu.Unlock()
		return
	}
	if g.rootsWatched == nil {
		g.rootsWatched = map[*mcp.ServerSession]bool{}
	}
	g.rootsWatched[ss] = true
	g.rootsMu.Unlock()
	g.rootsGo(func() {
		ss.Wait()
		g.rootsMu.Lock()
		delete(g.rootsWatched, ss)
		g.rootsMu.Unlock()
		g.followRoots()
	})
}

// rootsGo runs f on a goroutine Close waits for, unless Close has begun
// (then f is not run).
func (g *Gateway) rootsGo(f func()) {
	g.rootsMu.Lock()
	defer g.rootsMu.Unlock()
	if !g.rootsClosed {
		g.wg.Go(f)
	}
}

// rootsChanged follows a client's notifications/roots/list_changed.
func (g *Gateway) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	if req.Session != nil {
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
	for ss := range g.sessions() {
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
	if g.opts.OnlyClient == nil && !g.h.RootsWanted() {
		return // nobody asked yet (see above)
	}
	g.reqMu.Lock()
	down := g.shuttingDown
	g.reqMu.Unlock()
	if down {
		return // no client is asked anything more
	}
	only := g.onlyClient()
	if only == nil && g.opts.OnlyClient != nil {
		return // serve --stdio: its client is not initialized yet, and will be
	}
	g.rootsMu.Lock()
	g.rootsGen++
	gen := g.rootsGen
	g.rootsMu.Unlock()
	g.rootsGo(func() {
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
