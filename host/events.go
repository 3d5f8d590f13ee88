package host

import (
	"context"
	"iter"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/guardrail"
)

// EventKind says what an [Event] reports.
type EventKind string

// The kinds of host events.
const (
	// EventState: a server changed state (Event.Status is its status as
	// the change left it).
	EventState EventKind = "server:state"
	// EventCatalog: a server's tools, resources or prompts changed
	// (Event.Change says which). For tools the host's catalog is already
	// rebuilt. Sent when the server announces list_changed, and when a
	// server that was not ready (restarted, joined late, woken from lazy)
	// becomes ready.
	EventCatalog EventKind = "catalog:changed"
	// EventResourceUpdated: a resource subscribed with Subscribe changed
	// (Event.Resource).
	EventResourceUpdated EventKind = "resource:updated"
	// EventLog: a server's log message that belongs to no call
	// (Event.Log); a call's own go to its CallOptions.Log.
	EventLog EventKind = "server:log"
	// EventRemoved: a server was removed from the host
	// ([Host.RemoveServer]); its closed state came before, its catalog
	// changes come after.
	EventRemoved EventKind = "server:removed"
	// EventCircuitOpen: a server's circuit breaker opened: it failed its
	// last calls in a row, and calls to it fail at once ([ErrCircuitOpen])
	// for a while.
	EventCircuitOpen EventKind = "server:circuit-open"
	// EventGuardrail: a guardrail rule acted on a tool call
	// (Event.Guardrail says which rule, what it did, where; Event.Tool
	// the tool, by its server's name). Never the matched text.
	EventGuardrail EventKind = "guardrail:action"
	// EventToolHeld: a tool's definition is held until a person approves
	// it (pin.go): it changed from its pin, it is new under pin =
	// "approve", or its findings hold it under scan = "hold". Event.Tool
	// is the tool, by its server's name; Event.Held says why. Published
	// once per held definition, not at each listing.
	EventToolHeld EventKind = "tool:held"
	// EventDropped: this watcher fell behind and lost Event.Dropped events
	// before this one. A watcher that keeps derived state (a published
	// catalog) should rebuild it.
	EventDropped EventKind = "events:dropped"
)

// An Event is something that happened in the host. Events are redacted
// like everything else the host hands out.
type Event struct {
	Kind      EventKind
	Time      time.Time
	Server    string                                 // the server it is about; "" for EventDropped
	Status    ServerStatus                           // EventState
	Change    ChangeKind                             // EventCatalog
	Resource  *mcp.ResourceUpdatedNotificationParams // EventResourceUpdated
	Log       *mcp.LoggingMessageParams              // EventLog
	Dropped   int                                    // EventDropped
	Tool      string                                 // EventGuardrail, EventToolHeld
	Guardrail *guardrail.Record                      // EventGuardrail
	Held      string                                 // EventToolHeld
}

// DefaultWatchBuffer is a watcher's buffer unless Watch is told otherwise.
const DefaultWatchBuffer = 256

// Watch returns a watcher of the host's events from now on. Watch before
// [Host.Start] to see the start itself. Each watcher has its own buffer of
// buffer events (0 means [DefaultWatchBuffer]): the host never waits for a
// watcher, so one that falls behind loses the events beyond its buffer and
// is told so by an [EventDropped] in their place; other watchers and calls
// are not slowed. Once Watch returns, every event published before it is
// in the buffer of every older watcher (or counted as lost). Close the
// watcher when done; [Host.Close] ends every
// watcher once its buffered events are read.
func (h *Host) Watch(buffer int) *Watcher {
	if buffer <= 0 {
		buffer = DefaultWatchBuffer
	}
	w := &Watcher{hub: &h.events, max: buffer, ready: make(chan struct{}, 1)}
	h.events.mu.Lock()
	defer h.events.mu.Unlock()
	if h.events.closed {
		w.closed = true
		return w
	}
	if h.events.watchers == nil {
		h.events.watchers = map[*Watcher]struct{}{}
	}
	h.events.watchers[w] = struct{}{}
	return w
}

// hub fans events out to watchers.
type hub struct {
	mu       sync.Mutex
	watchers map[*Watcher]struct{}
	closed   bool
}

// publish hands ev to every watcher, never waiting.
func (b *hub) publish(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for w := range b.watchers {
		w.push(ev)
	}
}

// close ends every watcher: each gets what it has buffered, then no more.
func (b *hub) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for w := range b.watchers {
		w.end()
	}
	b.watchers = nil
}

// A Watcher receives a host's events in the order they were published (the
// order of changes made by different goroutines at the same moment is
// arbitrary). Its methods are safe for concurrent use.
type Watcher struct {
	hub   *hub
	max   int
	ready chan struct{} // a token when there is something to read

	mu      sync.Mutex
	queue   []Event
	dropped int // events lost since the last one queued
	closed  bool
}

func (w *Watcher) push(ev Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	// A loss is reported in place, before the next event that fits: one
	// slot for the notice, one for the event.
	need := 1
	if w.dropped > 0 {
		need = 2
	}
	if len(w.queue)+need > w.max {
		w.dropped++
		return
	}
	if w.dropped > 0 {
		w.queue = append(w.queue, Event{Kind: EventDropped, Time: ev.Time, Dropped: w.dropped})
		w.dropped = 0
	}
	w.queue = append(w.queue, ev)
	w.signal()
}

func (w *Watcher) signal() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

func (w *Watcher) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.signal()
}

// Next returns the next event, waiting for one within ctx. After the
// watcher or its host is closed it returns what was buffered, then
// [ErrClosed].
func (w *Watcher) Next(ctx context.Context) (Event, error) {
	for {
		w.mu.Lock()
		if len(w.queue) > 0 {
			ev := w.queue[0]
			w.queue[0] = Event{}
			w.queue = w.queue[1:]
			if len(w.queue) == 0 {
				w.queue = nil // let the array go
			}
			w.mu.Unlock()
			return ev, nil
		}
		if w.dropped > 0 {
			// Lost events with nothing after them yet: say so now, so a
			// watcher does not wait for the next event to learn of it.
			n := w.dropped
			w.dropped = 0
			w.mu.Unlock()
			return Event{Kind: EventDropped, Time: time.Now().UTC(), Dropped: n}, nil
		}
		closed := w.closed
		w.mu.Unlock()
		if closed {
			return Event{}, ErrClosed
		}
		select {
		case <-w.ready:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Events ranges over the watcher's events until ctx ends, the watcher or
// its host is closed, or the loop stops.
func (w *Watcher) Events(ctx context.Context) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			ev, err := w.Next(ctx)
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Close stops the watcher: it gets no more events, and its buffered ones
// are dropped. It is idempotent.
func (w *Watcher) Close() {
	w.hub.mu.Lock()
	delete(w.hub.watchers, w)
	w.hub.mu.Unlock()
	w.mu.Lock()
	w.closed = true
	w.queue = nil
	w.dropped = 0
	w.signal()
	w.mu.Unlock()
}
