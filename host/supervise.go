package host

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Supervision: every server has a supervisor goroutine, started when the
// host starts, that keeps it connected.
//
//   - A server whose connection ends (a stdio child exits or crashes, a
//     network session is lost) is restarting: calls wait for it within their
//     own timeout, and it is reconnected after a jittered exponential backoff
//     (0.5 s doubling to 30 s, reset after 10 minutes healthy).
//   - More than MaxRestarts failures within restartWindow and it is failed:
//     left alone, calls fail at once, until Host.Restart or a call for an
//     optional server asks again.
//   - An optional server that failed at start is retried in the background
//     the same way and joins when it comes up.
//   - It is pinged every HealthInterval; one missed ping makes it degraded,
//     healthMisses in a row get it reconnected.
//   - A lazy server with cached tools is lazy-idle until a call wants it.
//   - A server whose program is not installed (missingError) is failed at
//     once, not retried with backoff: its error would repeat every time. It
//     is tried again every missingRetry, quietly, so that a server of a
//     long-running host comes up once the program is installed, or when a
//     call or Host.Restart asks.
const (
	missingRetry  = 5 * time.Minute
	backoffMin    = 500 * time.Millisecond
	backoffMax    = 30 * time.Second
	healthyReset  = 10 * time.Minute
	restartWindow = 5 * time.Minute
	healthMisses  = 3
)

// backoff is the delay before reconnect attempt n (0-based): 0.5 s doubling
// to 30 s, with ±20 % jitter so that many servers do not restart in step.
func backoff(n int, jitter float64) time.Duration {
	d := backoffMin
	for i := 0; i < n && d < backoffMax; i++ {
		d *= 2
	}
	d = min(d, backoffMax)
	return time.Duration(float64(d) * (0.8 + 0.4*jitter))
}

// current returns the session if the server is usable now, without waiting.
func (s *server) current() *mcp.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateReady || s.state == StateDegraded {
		return s.session
	}
	return nil
}

// superviseAll starts a supervisor for each of servers.
func (h *Host) superviseAll(servers []*server) {
	for _, s := range servers {
		s.mu.Lock()
		s.supervised = make(chan struct{})
		s.mu.Unlock()
		h.spawn(s.supervise)
	}
}

// supervise keeps the server connected until close; see the comment above.
func (s *server) supervise() {
	defer close(s.supervised)
	ctx, cancel := context.WithCancel(s.h.ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()

	attempt := 0
	var failures []time.Time
	for {
		s.mu.Lock()
		state, done := s.state, s.done
		s.mu.Unlock()
		switch state {
		case StateClosed:
			return
		case StateReady, StateDegraded:
			since := time.Now()
			if !s.watchHealth(ctx, done) {
				return // closing
			}
			if time.Since(since) >= healthyReset {
				attempt, failures = 0, nil
			}
			failures = append(failures, time.Now())
		case StateLazy:
			select {
			case <-s.demand:
			case <-ctx.Done():
				return
			}
			attempt = 0
		case StateFailed:
			if s.cfg.Optional && !s.gaveUp {
				// An optional server that failed at start: retry below.
				failures = append(failures, time.Now())
				break
			}
			s.mu.Lock()
			missing := s.missing
			s.mu.Unlock()
			var retry <-chan time.Time
			var t *time.Timer
			if missing {
				t = time.NewTimer(missingRetry)
				retry = t.C
			}
			select {
			case <-s.demand:
			case <-retry:
			case <-ctx.Done():
			}
			if t != nil {
				t.Stop()
			}
			if ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			s.gaveUp = false
			s.mu.Unlock()
			attempt, failures = 0, nil
		}

		// Too many failures in the window: give up until asked.
		cut := time.Now().Add(-restartWindow)
		for len(failures) > 0 && failures[0].Before(cut) {
			failures = failures[1:]
		}
		if len(failures) > s.cfg.MaxRestarts {
			s.mu.Lock()
			s.gaveUp = true
			last := s.lastErr
			s.mu.Unlock()
			err := fmt.Errorf("failed %d times within %s; not restarting until asked; the last error:\n%v", len(failures), restartWindow, last)
			s.log.Warn("server marked failed", "err", oneLine(err.Error()))
			s.setState(StateFailed, err)
			failures = nil
			continue
		}

		if state != StateLazy && (state != StateFailed || !s.gaveUp) {
			delay := backoff(attempt, rand.Float64())
			attempt++
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		s.mu.Lock()
		s.reconnecting = true
		s.mu.Unlock()
		if !s.connect(ctx, false) {
			if ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			missing := s.missing
			s.mu.Unlock()
			if missing {
				continue // failed, left alone but for missingRetry
			}
			failures = append(failures, time.Now())
			if state != StateFailed || !s.cfg.Optional {
				s.mu.Lock()
				err := s.err
				s.mu.Unlock()
				s.setState(StateRestarting, err)
			}
			continue
		}
		s.brk.reset() // a fresh connection gets a fresh chance
		// A server back (or joining late, or woken from lazy) may offer
		// other tools, resources and prompts than before.
		s.h.joined(s)
	}
}

// watchHealth returns when the session ends (true) or the host closes
// (false). It pings the server every HealthInterval; healthMisses missed
// pings in a row close the session, which gets it reconnected.
func (s *server) watchHealth(ctx context.Context, done chan struct{}) bool {
	if done == nil {
		return ctx.Err() == nil
	}
	var tick <-chan time.Time
	if s.cfg.HealthInterval > 0 {
		t := time.NewTicker(s.cfg.HealthInterval)
		defer t.Stop()
		tick = t.C
	}
	misses := 0
	for {
		select {
		case <-done:
			return true
		case <-ctx.Done():
			return false
		case <-tick:
		}
		cs := s.current()
		if cs == nil {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, min(s.cfg.Timeout, 10*time.Second))
		err := s.h.ping(pctx, cs)
		cancel()
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			misses = 0
			s.mu.Lock()
			s.lastHealthy = time.Now()
			s.mu.Unlock()
			if s.setStateIf(func() bool { return s.session == cs && s.state == StateDegraded }, StateReady, nil) {
				s.log.Info("server healthy again")
			}
			continue
		}
		misses++
		err = fmt.Errorf("missed %d health ping(s): %w", misses, err)
		s.log.Warn("server unhealthy", "err", err)
		if misses < healthMisses {
			// Unless the session has ended meanwhile (it is restarting
			// then, and that state must stand).
			s.setStateIf(func() bool {
				return s.session == cs && (s.state == StateReady || s.state == StateDegraded)
			}, StateDegraded, err)
			continue
		}
		// Unhealthy: drop the session; the supervisor reconnects.
		s.mu.Lock()
		s.lost = err
		s.mu.Unlock()
		s.closeSession(cs)
		<-done
		return true
	}
}

// Restart asks a server that was marked failed (or is lazily idle) to be
// started again now.
func (h *Host) Restart(serverID string) error {
	s, err := h.server(serverID)
	if err != nil {
		return err
	}
	s.want()
	return nil
}

// ErrCircuitOpen: the server failed too many calls in a row; calls fail at
// once for a cool-down instead of piling up timeouts.
var ErrCircuitOpen = errors.New("circuit open: the server failed its last calls; not calling it for a while")

// breaker is a per-server circuit breaker: after breakerFailures failed
// calls in a row it opens for breakerCooldown, then lets one call through
// (half-open); that call's outcome closes or reopens it.
type breaker struct {
	mu       sync.Mutex
	failures int
	openTill time.Time
	// trialTill: a half-open trial call is out until then; one whose
	// outcome never comes (its caller gave up) does not hold the breaker.
	trialTill time.Time
}

const (
	breakerFailures = 5
	breakerCooldown = 30 * time.Second
)

func (b *breaker) allow(now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < breakerFailures {
		return nil
	}
	if now.Before(b.openTill) || now.Before(b.trialTill) {
		return fmt.Errorf("%w (%d failures in a row)", ErrCircuitOpen, b.failures)
	}
	b.trialTill = now.Add(breakerCooldown)
	return nil
}

func (b *breaker) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures, b.openTill, b.trialTill = 0, time.Time{}, time.Time{}
}

// record counts a call's outcome; it reports whether the breaker opened
// (the call was the last failure it allows, or a failed trial).
func (b *breaker) record(now time.Time, ok bool) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trialTill = time.Time{}
	if ok {
		b.failures = 0
		return false
	}
	b.failures++
	if b.failures >= breakerFailures {
		b.openTill = now.Add(breakerCooldown)
		return true
	}
	return false
}

// recordCall counts a call's outcome with the server's breaker, and tells
// the watchers when it opened.
func (s *server) recordCall(ok bool) {
	if s.brk.record(time.Now(), ok) {
		s.hist.incident(Incident{Kind: IncidentCircuitOpen,
			Reason: fmt.Sprintf("failed %d calls in a row: calls fail at once for %s, then one is let through", breakerFailures, breakerCooldown)})
		s.h.events.publish(Event{Kind: EventCircuitOpen, Server: s.cfg.ID})
	}
}
