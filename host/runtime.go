package host

// Servers added, removed and replaced while the host runs: what the
// daemon's management API does to a running host. A change takes effect at
// once (the server connects, or is stopped and its tools withdrawn), the
// catalog is rebuilt, and watchers learn of it as of any other change
// (EventState, EventRemoved, EventCatalog), so that the gateway tells
// its clients list_changed.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/switchboardmcp/switchboard/config"
)

// ErrServerExists: a server with that id is in the host already.
var ErrServerExists = errors.New("a server with that id exists already")

// ErrInProcess: an in-process server (built-in tools, workflows) cannot be
// removed or replaced; it is the program's, not the configuration's.
var ErrInProcess = errors.New("an in-process server cannot be changed")

// AddServer adds a server to the host. Once the host is started, the
// server starts at once, in the background, like an optional one at the
// start (its state says how it goes: watch EventState); before, Start
// starts it with the others. A server that fails its first start is left
// failed until [Host.Restart] or a call asks again (unless optional: then
// it is retried in the background). cfg is taken as validated
// (config.DecodeServer and Config.CheckServerURL); its placeholders are
// resolved at each connect, as for a configured server.
func (h *Host) AddServer(cfg config.Server) error {
	if cfg.ID == "" {
		return errors.New("host: a server needs an id")
	}
	s := newServer(h, cfg)
	h.serversMu.Lock()
	if h.ctx.Err() != nil {
		h.serversMu.Unlock()
		return ErrClosed
	}
	if slices.ContainsFunc(h.servers, func(o *server) bool { return o.cfg.ID == cfg.ID }) {
		h.serversMu.Unlock()
		return fmt.Errorf("server %q: %w", cfg.ID, ErrServerExists)
	}
	h.servers = append(slices.Clip(h.servers), s)
	launched := h.launched
	h.serversMu.Unlock()
	s.log.Info("server added")
	if launched {
		h.launch(s)
	}
	return nil
}

// RemoveServer stops a server (its calls in flight fail with ErrClosed,
// its child process is stopped), withdraws its tools, resources and
// prompts, and removes it from the host. Watchers get its closed state,
// then [EventRemoved], then the catalog changes.
func (h *Host) RemoveServer(id string) error {
	h.serversMu.Lock()
	i := slices.IndexFunc(h.servers, func(o *server) bool { return o.cfg.ID == id })
	if i < 0 {
		h.serversMu.Unlock()
		_, err := h.server(id)
		return err
	}
	s := h.servers[i]
	if s.inproc != nil {
		h.serversMu.Unlock()
		return fmt.Errorf("server %q: %w", id, ErrInProcess)
	}
	h.servers = slices.Delete(slices.Clone(h.servers), i, i+1)
	h.serversMu.Unlock()
	err := s.close()
	h.events.publish(Event{Kind: EventRemoved, Server: id})
	h.withdrawn(id)
	s.log.Info("server removed")
	return err
}

// ReplaceServer stops the server with cfg's id and starts cfg in its
// place, keeping its place in the declaration order (which decides tool
// name collisions): a changed configuration, or a restart of a server that
// is up (Host.Restart only wakes one that is failed or idle). Its calls in
// flight fail with ErrClosed.
func (h *Host) ReplaceServer(cfg config.Server) error {
	s := newServer(h, cfg)
	h.serversMu.Lock()
	if h.ctx.Err() != nil {
		h.serversMu.Unlock()
		return ErrClosed
	}
	i := slices.IndexFunc(h.servers, func(o *server) bool { return o.cfg.ID == cfg.ID })
	if i < 0 {
		h.serversMu.Unlock()
		_, err := h.server(cfg.ID)
		return err
	}
	old := h.servers[i]
	if old.inproc != nil {
		h.serversMu.Unlock()
		return fmt.Errorf("server %q: %w", cfg.ID, ErrInProcess)
	}
	servers := slices.Clone(h.servers)
	servers[i] = s
	h.servers = servers
	launched := h.launched
	h.serversMu.Unlock()
	// The old one is stopped before the new one starts: they may contend
	// for one resource (a port, a lock file).
	err := old.close()
	// Its history goes on: a restart asked for must not wipe the reasons
	// it was asked for.
	s.hist.carry(&old.hist)
	s.hist.incident(Incident{Kind: IncidentReplaced, Reason: "stopped and started anew: its configuration changed, or a restart was asked for"})
	h.withdrawn(cfg.ID)
	s.log.Info("server replaced")
	if launched {
		h.launch(s)
	}
	return err
}

// RefreshTools re-reads a ready server's tools now, as when it announces
// list_changed, and reports why it could not (the old list then stays).
func (h *Host) RefreshTools(ctx context.Context, id string) error {
	s, err := h.server(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	err = s.relist(ctx, refreshAsked)
	if errors.Is(err, errNotReady) {
		return fmt.Errorf("server %q: %w: it is %s", id, ErrUnavailable, s.status().State)
	}
	if err != nil {
		return &CallError{Server: id, Method: "tools/list", Err: h.redactErr(err)}
	}
	return nil
}

// withdrawn rebuilds the catalog without what a server that was stopped
// offered, and tells the watchers.
func (h *Host) withdrawn(id string) {
	h.catalogMu.Lock()
	h.rebuildCatalog()
	h.catalogMu.Unlock()
	for _, k := range []ChangeKind{ToolsChanged, ResourcesChanged, PromptsChanged} {
		h.changed(Change{Server: id, Kind: k})
	}
}

// launch starts a server added to a running host: its first start (cut
// short if it is removed meanwhile), then its supervisor, on a goroutine
// of the host's.
func (h *Host) launch(s *server) {
	s.mu.Lock()
	s.supervised = make(chan struct{})
	s.mu.Unlock()
	ok := h.spawn(func() {
		ctx, cancel := s.stopping(h.ctx)
		if s.startLazy() || s.connect(ctx, false) {
			h.joined(s)
		}
		cancel()
		s.supervise() // closes s.supervised
	})
	if !ok {
		close(s.supervised) // the host is closing: nothing to wait for
	}
}

// stopping is ctx, also cancelled when the server is closed (removed or
// replaced): a first start is cut short then.
func (s *server) stopping(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Status returns one server's status, as Servers does; an error wrapping
// ErrUnknownServer when the host has no such server.
func (h *Host) Status(id string) (ServerStatus, error) {
	s, err := h.server(id)
	if err != nil {
		return ServerStatus{}, err
	}
	st := s.statusWithTools()
	h.mu.RLock()
	if cat := h.catalog; cat != nil {
		st.Skipped = slices.Clone(cat.skipped[id])
		st.Warnings = append(st.Warnings, cat.warnings[id]...)
	}
	h.mu.RUnlock()
	return st, nil
}
