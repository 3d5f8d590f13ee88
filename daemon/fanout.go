package daemon

import "sync"

// fanout passes events to every subscriber without ever blocking the
// publisher: a subscriber more than runSubBuffer events behind loses the
// rest, and is told how many (takeLost).
type fanout[T any] struct {
	mu   sync.Mutex
	subs map[*fanSub[T]]struct{}
}

// fanSub is one subscription.
type fanSub[T any] struct {
	ch   chan T
	lost chan struct{} // signalled when n grows from 0
	n    int           // events lost since last read; guarded by fanout.mu
}

// publish hands ev to every subscriber without blocking.
func (h *fanout[T]) publish(ev T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- ev:
		default:
			s.n++
			select {
			case s.lost <- struct{}{}:
			default: // told already
			}
		}
	}
}

func (h *fanout[T]) subscribe() *fanSub[T] {
	s := &fanSub[T]{ch: make(chan T, runSubBuffer), lost: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[*fanSub[T]]struct{}{}
	}
	h.subs[s] = struct{}{}
	return s
}

func (h *fanout[T]) unsubscribe(s *fanSub[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// takeLost returns how many events s lost, and starts counting again.
func (h *fanout[T]) takeLost(s *fanSub[T]) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := s.n
	s.n = 0
	return n
}
