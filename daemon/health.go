package daemon

// Health probes for a load balancer or an orchestrator, on the daemon's
// listener beside /mcp: GET /healthz says the process serves HTTP (alive:
// restart it if not); GET /readyz says it can take clients (send it
// traffic): every server that is not optional is up, as for
// Options.OnReady, and the state database answers. They need no token (a
// balancer has none) and so say nothing but "ok" or "not ready": no server
// name, no error text, no version. Why a replica is not ready is in its
// log.

import (
	"context"
	"net/http"
	"time"
)

// readyzPingTimeout bounds the database check of a /readyz: a database
// that does not answer makes the replica not ready, not the probe hang
// (balancers time probes out after a few seconds).
const readyzPingTimeout = 2 * time.Second

// healthHandler serves /healthz and /readyz.
func (d *Daemon) healthHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		probeAnswer(w, true)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ok := d.Ready()
		if ok {
			ctx, cancel := context.WithTimeout(r.Context(), readyzPingTimeout)
			defer cancel()
			if err := d.store.Ping(ctx); err != nil {
				d.log.Warn("not ready: the state database does not answer", "database", d.store.Where(), "err", err)
				ok = false
			}
		}
		probeAnswer(w, ok)
	})
	return mux
}

// Ready reports whether the daemon can take clients, as /readyz does but
// for the database check: every server that is not optional is up, its
// workflow executor (on PostgreSQL) has not lost its lock (fenced), and
// it has not been told to stop (draining, or shutting down).
func (d *Daemon) Ready() bool { return d.ready.Load() && !d.fenced.Load() && !d.stopping.Load() }

// drain is the start of a stop: the daemon is not ready from now on
// (/readyz answers 503), and serves on as before for [gateway]
// shutdown_drain, so that a load balancer's checks see it and send the
// requests elsewhere before its listener closes. Without the drain, a
// request reaching a balancer as the replica closes its connections may
// be answered by a closed connection (HAProxy closes the client's, asking
// it to retry).
func (d *Daemon) drain() {
	d.stopping.Store(true)
	t := d.opts.Config.Gateway.ShutdownDrain
	if t <= 0 {
		return
	}
	d.log.Info("draining: /readyz answers 503; serving on before the shutdown", "drain", t)
	time.Sleep(t)
}

func probeAnswer(w http.ResponseWriter, ok bool) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("not ready\n"))
		return
	}
	w.Write([]byte("ok\n"))
}
