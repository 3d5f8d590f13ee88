package host

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Roots a server is told. During a call whose caller has a Roots handler
// (the gateway's calling client), roots/list goes to that handler
// (callMiddleware, call.go). Anything else (a request outside any call, as
// servers make at initialize and after notifications/roots/list_changed,
// or a 2026-07-28 server's roots input request answered by the go-sdk) is
// answered by the go-sdk from its client's roots: the server's configured
// roots, or the roots of the host's one client once the caller that
// speaks for that client has set them ([Host.SetRoots]). Setting them
// updates the client of each server's own connection, and the go-sdk
// tells the server (the host declares roots listChanged) with
// notifications/roots/list_changed, on which it asks again.

// SetRoots makes roots what every server is answered outside a call, in
// place of its configured roots, and tells the servers connected now that
// their roots changed (notifications/roots/list_changed) when they did.
// Nil restores each server's configured roots; an empty, non-nil list is
// no roots. The gateway sets the roots of its one downstream client: with
// one client, its roots are the roots, in a call or outside one; with
// several, no client's roots may answer for another's.
//
// The first SetRoots also releases the roots/list requests held by
// [Options.ClientRoots].
func (h *Host) SetRoots(roots []*mcp.Root) {
	h.rootsMu.Lock()
	defer h.rootsMu.Unlock()
	if roots == nil {
		h.clientRoots = nil
	} else {
		h.clientRoots = slices.Clone(roots)
		if h.clientRoots == nil {
			h.clientRoots = []*mcp.Root{}
		}
	}
	for _, s := range h.list() {
		if rc := s.rootsClient; rc != nil {
			rc.set(h.rootsForLocked(s))
		}
	}
	h.rootsOnce.Do(func() { close(h.rootsKnown) })
}

// rootsForLocked returns the roots s is to be told (h.rootsMu held).
func (h *Host) rootsForLocked(s *server) []*mcp.Root {
	if h.clientRoots != nil {
		return h.clientRoots
	}
	roots := make([]*mcp.Root, len(s.cfg.Roots))
	for i, r := range s.cfg.Roots {
		roots[i] = &mcp.Root{URI: r}
	}
	return roots
}

// adoptRoots gives client, made for s's own connection, the roots s is to
// be told now, and makes it the client SetRoots updates: under one lock,
// so that no SetRoots falls between the two.
func (s *server) adoptRoots(client *mcp.Client) {
	s.h.rootsMu.Lock()
	defer s.h.rootsMu.Unlock()
	rc := &rootsClient{c: client}
	rc.set(s.h.rootsForLocked(s))
	s.rootsClient = rc
}

// rootsClient is a go-sdk client with the roots the host gave it.
type rootsClient struct {
	c     *mcp.Client
	roots []*mcp.Root
}

// set makes roots the client's, removing first what goes (a server that
// asks between the two notifications sees no root it no longer has), and
// notifying nothing when nothing changed.
func (rc *rootsClient) set(roots []*mcp.Root) {
	var gone []string
	for _, r := range rc.roots {
		if !slices.ContainsFunc(roots, func(n *mcp.Root) bool { return n.URI == r.URI }) {
			gone = append(gone, r.URI)
		}
	}
	var added []*mcp.Root
	for _, r := range roots {
		if !slices.ContainsFunc(rc.roots, func(o *mcp.Root) bool { return sameRoot(o, r) }) {
			added = append(added, r)
		}
	}
	if len(gone) > 0 {
		rc.c.RemoveRoots(gone...)
	}
	if len(added) > 0 {
		rc.c.AddRoots(added...)
	}
	rc.roots = slices.Clone(roots)
}

// OnRootsWanted sets f, called once, the first time a server asks for
// roots outside a call. Until a server does, nobody need be asked for
// roots: the gateway follows its one client's roots only once a server
// wants them (RootsWanted), and is told so by f. While f is set, a
// server's roots/list outside a call waits for the first SetRoots
// (clientRootsWait at most).
func (h *Host) OnRootsWanted(f func()) {
	h.rootsMu.Lock()
	defer h.rootsMu.Unlock()
	h.onRootsWanted = f
}

// RootsWanted reports whether a server has asked for roots outside a call.
func (h *Host) RootsWanted() bool { return h.rootsWanted.Load() }

// awaitClientRoots runs before the go-sdk answers a server's roots/list
// outside a call: the first such request tells OnRootsWanted's f, and
// each waits until the roots of the host's one client are known (the
// first SetRoots), for at most clientRootsWait, when they are expected
// (Options.ClientRoots, or f set), so that a server that asks at
// initialize (the filesystem server in roots mode) is told them, not the
// configured roots and then the client's.
func (s *server) awaitClientRoots(ctx context.Context) {
	s.h.rootsMu.Lock()
	f := s.h.onRootsWanted
	s.h.rootsMu.Unlock()
	if s.h.rootsWanted.CompareAndSwap(false, true) && f != nil {
		f()
	}
	if !s.h.opts.ClientRoots && f == nil {
		return
	}
	t := time.NewTimer(clientRootsWait)
	defer t.Stop()
	select {
	case <-s.h.rootsKnown:
	case <-t.C:
		s.log.Info("answering roots/list with the configured roots: the client's roots are not known yet", "waited", clientRootsWait)
	case <-ctx.Done():
	}
}

// clientRootsWait bounds how long a server's roots/list outside a call
// waits for the roots of the host's one client (Options.ClientRoots): a
// client that is slow to say them delays the server by this much at most,
// and the server is told them later with list_changed.
const clientRootsWait = 5 * time.Second

func sameRoot(a, b *mcp.Root) bool {
	if a.URI != b.URI || a.Name != b.Name || len(a.Meta) != len(b.Meta) {
		return false
	}
	ja, _ := json.Marshal(a.Meta)
	jb, _ := json.Marshal(b.Meta)
	return bytes.Equal(ja, jb)
}
