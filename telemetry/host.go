package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/switchboardmcp/switchboard/host"
)

// Watch records what the host's events say (restarts, circuit-breaker
// openings, guardrail actions, upstream session durations), on a goroutine of its own until
// the host or t is closed, and reports the host's servers by state and
// its sessions open at each collection. Call it before the host starts
// to see the start.
func (t *Telemetry) Watch(h *host.Host) {
	w := h.Watch(0)
	t.wg.Go(func() {
		defer w.Close()
		t.watch(t.ctx, h, w)
	})
}

func (t *Telemetry) watch(ctx context.Context, h *host.Host, w *host.Watcher) {
	t.observe(func(ctx context.Context, o metric.Observer, g *gauges) {
		byState := map[host.State]int64{}
		var up int64
		for _, st := range h.Servers() {
			byState[st.State]++
			if connected(st.State) {
				up++
			}
		}
		for _, s := range allStates {
			o.ObserveInt64(g.servers, byState[s], metric.WithAttributes(keyState.String(string(s))))
		}
		o.ObserveInt64(g.upstream, up)
		t.sweepSessions()
		o.ObserveInt64(g.downstream, t.downstream.Load())
	})
	type session struct {
		since   time.Time
		version string
	}
	last := map[string]host.State{}
	open := map[string]session{}
	for ev := range w.Events(ctx) {
		switch ev.Kind {
		case host.EventGuardrail:
			if r := ev.Guardrail; r != nil {
				t.in.guardrails.Add(ctx, int64(r.Count), metric.WithAttributes(keyServer.String(ev.Server),
					keyGuardFilter.String(r.Filter), keyGuardAction.String(string(r.Action)), keyGuardDirection.String(r.Direction.String())))
			}
		case host.EventCircuitOpen:
			t.in.breakerOpens.Add(ctx, 1, metric.WithAttributes(keyServer.String(ev.Server)))
		case host.EventState:
			st := ev.Status
			prev := last[ev.Server]
			last[ev.Server] = st.State
			if st.State == host.StateRestarting && prev != host.StateRestarting {
				t.in.restarts.Add(ctx, 1, metric.WithAttributes(keyServer.String(ev.Server)))
			}
			s, wasOpen := open[ev.Server]
			switch {
			case connected(st.State) && !wasOpen:
				open[ev.Server] = session{since: ev.Time, version: st.ProtocolVersion}
			case !connected(st.State) && wasOpen:
				delete(open, ev.Server)
				attrs := []attribute.KeyValue{keyServer.String(ev.Server)}
				if s.version != "" {
					attrs = append(attrs, keyProtocol.String(s.version))
				}
				if st.State == host.StateRestarting || st.State == host.StateFailed {
					attrs = append(attrs, keyErrorType.String("connection_lost"))
				}
				t.in.clientSession.Inst().Record(ctx, ev.Time.Sub(s.since).Seconds(), metric.WithAttributes(attrs...))
			}
		}
	}
}

// allStates are reported even at 0, so that a series does not vanish.
var allStates = []host.State{host.StateConnecting, host.StateInstalling, host.StateReady, host.StateDegraded,
	host.StateRestarting, host.StateLazy, host.StateFailed, host.StateClosed}

// connected says a server in state st holds an upstream session.
func connected(st host.State) bool { return st == host.StateReady || st == host.StateDegraded }
