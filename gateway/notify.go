package gateway

// Notifications of a call (progress, log messages) on their way to its
// client.

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notifyQueue forwards a call's progress notifications and log messages
// downstream in order, without ever blocking the upstream connection's
// reader, which hands them over: a slow client loses notifications beyond a
// bound, never the connection. Its goroutine starts with the first
// notification, so that calls without any cost nothing.
type notifyQueue struct {
	// target is the request a notification is sent in the context of, and
	// its session; nil when no request is in flight (the notification is
	// dropped).
	target func() (context.Context, *mcp.ServerSession)

	mu     sync.Mutex
	ch     chan func(context.Context, *mcp.ServerSession)
	closed bool
	done   chan struct{}
}

func newNotifyQueue(target func() (context.Context, *mcp.ServerSession)) *notifyQueue {
	return &notifyQueue{target: target}
}

// notifyQueueLen bounds the notifications buffered for a slow client.
const notifyQueueLen = 64

func (q *notifyQueue) push(send func(context.Context, *mcp.ServerSession)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if q.ch == nil {
		q.ch = make(chan func(context.Context, *mcp.ServerSession), notifyQueueLen)
		q.done = make(chan struct{})
		go func() {
			defer close(q.done)
			for send := range q.ch {
				send(q.target())
			}
		}()
	}
	select {
	case q.ch <- send:
	default: // the client is not keeping up: drop, never block
	}
}

// flush waits, within ctx, until what is queued now has been sent.
func (q *notifyQueue) flush(ctx context.Context) {
	sent := make(chan struct{})
	q.mu.Lock()
	if q.closed || q.ch == nil {
		q.mu.Unlock()
		return
	}
	select {
	case q.ch <- func(context.Context, *mcp.ServerSession) { close(sent) }:
	default:
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	select {
	case <-sent:
	case <-ctx.Done():
	}
}

// close flushes what is queued and stops the queue.
func (q *notifyQueue) close() {
	q.mu.Lock()
	q.closed = true
	ch, done := q.ch, q.done
	q.mu.Unlock()
	if ch != nil {
		close(ch)
		<-done
	}
}
