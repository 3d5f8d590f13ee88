package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/store"
)

// UsageFlush is how often the usage gathered in memory is written to the
// store: one transaction per flush, not a write per call.
const UsageFlush = 15 * time.Second

// usage gathers tool calls and runs per minute for the store
// (Options.Usage), until the next flush.
type usage struct {
	st  *store.Store
	now func() time.Time

	mu      sync.Mutex
	pending map[int64]*minute // by the minute's Unix second
	flushMu sync.Mutex        // one flush at a time, in order
}

type minute struct {
	calls  map[[3]string]*store.CallUsage // by endpoint, server, tool
	tokens map[[2]string]*store.TokenUsage
}

func (u *usage) minute(at time.Time) *minute {
	k := at.Truncate(time.Minute).Unix()
	m := u.pending[k]
	if m == nil {
		m = &minute{calls: map[[3]string]*store.CallUsage{}, tokens: map[[2]string]*store.TokenUsage{}}
		u.pending[k] = m
	}
	return m
}

// call counts a tool call of server (both names from the catalog) made
// through the named endpoint endpoint ("" through none).
func (u *usage) call(endpoint, server, tool string, d time.Duration, failed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.minute(u.now())
	k := [3]string{endpoint, server, tool}
	c := m.calls[k]
	if c == nil {
		c = &store.CallUsage{Endpoint: endpoint, Server: server, Tool: tool}
		m.calls[k] = c
	}
	c.Observe(d, failed)
}

// run counts a run that ended, with its tokens.
func (u *usage) run(kind, name, outcome string, input, output int64, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.minute(at)
	tu := m.tokens[[2]string{kind, name}]
	if tu == nil {
		tu = &store.TokenUsage{Kind: kind, Name: name}
		m.tokens[[2]string{kind, name}] = tu
	}
	tu.Runs++
	if outcome == OutcomeFailed {
		tu.Failed++
	}
	tu.Input += input
	tu.Output += output
}

// flush writes what is pending to the store. What a failed write held is
// dropped (and the failure returned): memory stays bounded.
func (u *usage) flush(ctx context.Context) error {
	u.flushMu.Lock()
	defer u.flushMu.Unlock()
	u.mu.Lock()
	pending := u.pending
	u.pending = map[int64]*minute{}
	u.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	batches := make([]store.UsageBatch, 0, len(pending))
	for k, m := range pending {
		b := store.UsageBatch{Minute: time.Unix(k, 0)}
		for _, c := range m.calls {
			b.Calls = append(b.Calls, *c)
		}
		for _, tu := range m.tokens {
			b.Tokens = append(b.Tokens, *tu)
		}
		batches = append(batches, b)
	}
	return u.st.RecordUsage(ctx, u.now(), batches...)
}

// startUsage starts the flusher, until Close (which flushes once more).
func (t *Telemetry) startUsage(st *store.Store) {
	t.usage = &usage{st: st, now: time.Now, pending: map[int64]*minute{}}
	t.wg.Go(func() {
		tick := time.NewTicker(UsageFlush)
		defer tick.Stop()
		for {
			select {
			case <-t.ctx.Done():
				return
			case <-tick.C:
				if err := t.usage.flush(t.ctx); err != nil {
					t.log.Warn("telemetry: usage not recorded", "err", err)
				}
			}
		}
	})
}

// FlushUsage writes the usage gathered since the last flush to the store
// (Options.Usage) now: a reader of the store sees every call made before.
// Without a store it does nothing.
func (t *Telemetry) FlushUsage(ctx context.Context) error {
	if t.usage == nil {
		return nil
	}
	return t.usage.flush(ctx)
}

// usageRun counts a run that ended in the usage.
func (t *Telemetry) usageRun(kind, name, outcome string, input, output int64, at time.Time) {
	if t.usage != nil {
		t.usage.run(kind, name, outcome, input, output, at)
	}
}

// usageCall counts a tool call in the usage, under the named endpoint
// ctx's request came through (host.EndpointOf: the gateway marks each
// request, and the host's calls made for it carry the mark here).
func (t *Telemetry) usageCall(ctx context.Context, server, tool string, d time.Duration, failed bool) {
	if t.usage != nil {
		t.usage.call(host.EndpointOf(ctx), server, tool, d, failed)
	}
}
