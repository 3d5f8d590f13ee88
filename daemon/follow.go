package daemon

// Following the store: the replicas of a gateway share one PostgreSQL
// database, and a server one of them adds, updates, disables or deletes
// (through the REST API, the web UI or the CLI) must reach the others'
// hosts, and their MCP clients get list_changed. The store reports the
// changes other processes make (store.Watch: LISTEN/NOTIFY); each is
// applied here with the host's operations, as the server operations of
// servers.go apply a change made here. A notification only names what
// changed: what to run is read from the store. On SQLite nothing is
// reported; the daemon's own changes are applied where they are made.

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/store"
)

// followStore applies the store's changes to h until ctx ends or the
// returned stop is called (which waits for it). It reads every server
// again first: changes made between New and now were not heard.
func (d *Daemon) followStore(ctx context.Context, h *host.Host) (stop func()) {
	if d.store.Backend() != "postgres" {
		return func() {} // a SQLite file reports nothing
	}
	ctx, cancel := context.WithCancel(ctx)
	changes, err := d.store.Watch(ctx)
	if err != nil {
		cancel()
		d.log.Error("not following the changes other processes make to the servers", "database", d.store.Where(), "err", err)
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.applyChange(ctx, h, store.Change{Kind: store.ChangeAll})
		for c := range changes {
			d.applyChange(ctx, h, c)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// applyChange brings h in line with the store after change c.
func (d *Daemon) applyChange(ctx context.Context, h *host.Host, c store.Change) {
	switch c.Kind {
	case store.ChangeServer:
		d.opsMu.Lock()
		defer d.opsMu.Unlock()
		d.syncServer(ctx, h, c.Server)
		d.reapplyEndpoints(ctx)
	case store.ChangeEndpoint:
		d.opsMu.Lock()
		defer d.opsMu.Unlock()
		d.reapplyEndpoints(ctx)
	case store.ChangeTools:
		// Another replica's server listed other tools: this one's copy of
		// the server is asked again (the server is the source, not the
		// other replica's list). The list it gets is saved unchanged, so
		// it is not announced back. A lazy server not started here offers
		// the list the other replica saved, as it offered the cached one
		// before.
		st, err := h.Status(c.Server)
		switch {
		case err != nil:
		case st.State == host.StateReady || st.State == host.StateDegraded:
			if err := h.RefreshTools(ctx, c.Server); err != nil && ctx.Err() == nil {
				d.log.Warn("refreshing tools another process saw change", "server", c.Server, "err", err)
			}
		case st.State == host.StateLazy:
			if _, err := h.ReloadCachedTools(c.Server); err != nil && ctx.Err() == nil {
				d.log.Warn("reloading the cached tools another process saved", "server", c.Server, "err", err)
			}
		}
	case store.ChangePins:
		// Pins approved, imported or forgotten elsewhere: this host looks
		// at its servers' tools again.
		if err := h.RecheckPins(c.Server); err != nil && ctx.Err() == nil && !errors.Is(err, host.ErrUnknownServer) {
			d.log.Warn("looking at tools again after their pins changed", "server", c.Server, "err", err)
		}
	case store.ChangeAll:
		d.opsMu.Lock()
		defer d.opsMu.Unlock()
		recs, err := d.store.Servers(ctx)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("reading the stored servers", "err", err)
			}
			return
		}
		stored := map[string]bool{}
		for _, r := range recs {
			stored[r.ID] = true
			d.syncServer(ctx, h, r.ID)
		}
		for _, st := range h.Servers() {
			if !stored[st.ID] && d.isRuntime(st) {
				d.syncServer(ctx, h, st.ID)
			}
		}
		d.reapplyEndpoints(ctx)
		if err := h.RecheckPins(""); err != nil && ctx.Err() == nil {
			d.log.Warn("looking at tools again after their pins changed", "err", err)
		}
	}
}

// isRuntime reports whether a server of the host is a run-time one (not
// configured, not built in).
func (d *Daemon) isRuntime(st host.ServerStatus) bool {
	_, configured := d.opts.Config.Server(st.ID)
	return !configured && st.Transport != host.TransportInProcess
}

// syncServer makes h run server id as the store has it: started if stored
// and enabled (restarted if its version is not the one running), stopped
// otherwise. A configured server's id is left alone (the file wins). The
// caller holds opsMu.
func (d *Daemon) syncServer(ctx context.Context, h *host.Host, id string) {
	if _, ok := d.opts.Config.Server(id); ok {
		return
	}
	st, statusErr := h.Status(id)
	running := statusErr == nil
	if running && st.Transport == host.TransportInProcess {
		return
	}
	rec, err := d.store.Server(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && !rec.Enabled:
		delete(d.applied, id)
		d.setBroken(id, nil)
		if running {
			if err := h.RemoveServer(id); err != nil && !errors.Is(err, host.ErrUnknownServer) {
				d.log.Error("stopping a server another process removed", "server", id, "err", err)
				return
			}
			d.log.Info("server removed by another process", "server", id)
		}
		return
	case err != nil:
		if ctx.Err() == nil {
			d.log.Error("reading a server another process changed", "server", id, "err", err)
		}
		return
	}
	if running && d.applied[id] == rec.Version {
		return // what runs is what is stored
	}
	s, _, err := d.checkEntry(id, rec.Config)
	if err != nil {
		// Reported; a version that runs (valid when it was stored) runs on.
		d.setBroken(id, fmt.Errorf("as another process stored it: %w", err))
		return
	}
	d.setBroken(id, nil)
	if running {
		err = h.ReplaceServer(s)
	} else {
		err = h.AddServer(s)
	}
	if err != nil {
		d.log.Error("starting a server another process changed", "server", id, "err", err)
		return
	}
	d.applied[id] = rec.Version
	d.log.Info("server changed by another process", "server", id, "version", rec.Version)
}
