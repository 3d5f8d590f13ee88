package telemetry

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Downstream sessions: each initialized one counts in
// switchboard.downstream.sessions until it ends, and its duration goes to
// mcp.server.session.duration then. The go-sdk (v1.8.0) tells of a
// session's end only to a goroutine blocked in ServerSession.Wait: one
// for each idle session costs its stack (≈ 8 KiB, and with GOGC what
// that lets the heap grow by; docs/performance.md). Given the sessions a
// gateway holds ([Telemetry.FollowSessions]), the telemetry instead sweeps:
// a session no longer among them has ended, and is counted so at the
// next collection of the gauges (a scrape, an OTLP export) or the next
// session to begin (at most once a second), whichever comes first; its
// duration is measured to then. Without them, a goroutine waits for each.

// sweepEvery bounds how often a session that begins sweeps the others.
const sweepEvery = time.Second

// openSession is a session counted as open: when it began, and the
// sweep count before which it was registered.
type openSession struct {
	start time.Time
	seq   uint64
}

// FollowSessions gives the telemetry the sessions a gateway holds now
// (every session its ServerMiddleware sees must be among them until it
// ends), so that it needs no goroutine per session to see them end.
// Call it before the gateway serves, or again with another gateway's.
func (t *Telemetry) FollowSessions(sessions func() iter.Seq[*mcp.ServerSession]) {
	t.sessMu.Lock()
	defer t.sessMu.Unlock()
	t.sessions = sessions
}

// sessionOpened counts a downstream session until it ends, and records
// its duration then.
func (t *Telemetry) sessionOpened(ss *mcp.ServerSession) {
	t.downstream.Add(1)
	start := time.Now()
	t.sessMu.Lock()
	if t.sessions == nil {
		t.sessMu.Unlock()
		go func() {
			err := ss.Wait()
			t.downstream.Add(-1)
			t.sessionEnded(ss, time.Since(start), err)
		}()
		return
	}
	if t.open == nil {
		t.open = map[*mcp.ServerSession]openSession{}
	}
	t.open[ss] = openSession{start: start, seq: t.sweeps}
	sweep := time.Since(t.lastSweep) >= sweepEvery
	t.sessMu.Unlock()
	if sweep {
		t.sweepSessions()
	}
}

// sweepSessions counts as ended the sessions open that the gateway no
// longer holds.
func (t *Telemetry) sweepSessions() {
	t.sessMu.Lock()
	sessions := t.sessions
	if sessions == nil || len(t.open) == 0 {
		t.sessMu.Unlock()
		return
	}
	// Sessions registered from now on may be missing from the list read
	// below: only those registered before count.
	seq := t.sweeps
	t.sweeps++
	t.lastSweep = time.Now()
	t.sessMu.Unlock()
	live := map[*mcp.ServerSession]bool{}
	for ss := range sessions() {
		live[ss] = true
	}
	type ended struct {
		ss    *mcp.ServerSession
		start time.Time
	}
	var gone []ended
	t.sessMu.Lock()
	for ss, o := range t.open {
		if o.seq <= seq && !live[ss] {
			gone = append(gone, ended{ss, o.start})
			delete(t.open, ss)
		}
	}
	t.sessMu.Unlock()
	t.downstream.Add(-int64(len(gone)))
	for _, e := range gone {
		// Its Wait returns at once, or nearly: the session is closed.
		d := time.Since(e.start)
		go func() { t.sessionEnded(e.ss, d, e.ss.Wait()) }()
	}
}

// sessionEnded records the duration d of a session that ended with err
// (ServerSession.Wait's).
func (t *Telemetry) sessionEnded(ss *mcp.ServerSession, d time.Duration, err error) {
	attrs := []attribute.KeyValue{}
	if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion != "" {
		attrs = append(attrs, keyProtocol.String(versionLabel(ip.ProtocolVersion)))
	}
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		attrs = append(attrs, keyErrorType.String("_OTHER"))
	}
	t.in.serverSession.Inst().Record(context.Background(), d.Seconds(), metric.WithAttributes(attrs...))
}
