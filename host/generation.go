package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two protocol generations ask for input differently. Under 2025-11-25
// a server asks for elicitation, sampling and roots with requests to the
// client during a call, which the host answers with the call's handlers.
// Under 2026-07-28 it answers the call with an input-required result
// (inputRequests and an opaque requestState), and the client retries the
// call with its inputResponses.
//
// The host's own connection to a server speaks what Options.ProtocolVersion
// offers. A caller that speaks for a 2026-07-28 client which answers
// input-required results itself (the gateway) sets
// CallOptions.InputRequired: the call then goes out on a second connection
// to the server, opened at the first such call, that speaks 2026-07-28 and
// returns input-required results as they are, so that the server's own
// questions, keys and requestState reach that client unchanged. A server
// that answers the second connection with an older version is not asked
// again until it reconnects; such calls fail with ErrOlderGeneration, and
// the caller bridges the generations itself.

// RequestOptions configures one request (tools/call takes them inside
// [CallOptions]). Nil means defaults.
type RequestOptions struct {
	// InputRequired says the caller answers 2026-07-28 input-required
	// results itself: the request goes out on a 2026-07-28 connection to
	// the server with InputResponses and RequestState, and an
	// input-required result comes back as it is (NeedsInput reports true),
	// for the caller to answer and ask again. A server that does not speak
	// 2026-07-28 fails the request with ErrOlderGeneration.
	InputRequired  bool
	InputResponses mcp.InputResponseMap
	RequestState   string
	// Meta is added to the request's _meta, for example the calling
	// client's capabilities (mcp.MetaKeyClientCapabilities).
	Meta mcp.Meta
}

// InputRequiredVersion is the first protocol version in which servers ask
// for input with input-required results.
const InputRequiredVersion = "2026-07-28"

// ErrOlderGeneration: a call asked for with CallOptions.InputRequired went
// to a server that does not speak InputRequiredVersion.
var ErrOlderGeneration = errors.New("the server does not speak " + InputRequiredVersion)

// irConn is a server's 2026-07-28 connection.
type irConn struct {
	cs *mcp.ClientSession
	// done is closed once the connection has ended and is no longer
	// offered to new requests.
	done chan struct{}
}

// inputRequiredConn returns the server's 2026-07-28 connection, opening it
// if need be.
func (s *server) inputRequiredConn(ctx context.Context) (*irConn, error) {
	if s.irOlder.Load() || s.legacySSE.Load() {
		// Legacy HTTP+SSE has no 2026-07-28: not worth a connection.
		return nil, ErrOlderGeneration
	}
	s.irMu.Lock()
	defer s.irMu.Unlock()
	if s.ir != nil {
		return s.ir, nil
	}
	if s.irOlder.Load() {
		return nil, ErrOlderGeneration
	}
	s.mu.Lock()
	closed := s.state == StateClosed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	rs, err := s.cfg.Resolve(s.h.lookupEnv(), s.h.opts.Secrets, s.h.red)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, rs.ConnectTimeout)
	defer cancel()
	cs, err := s.dialAs(cctx, rs, true)
	if err != nil {
		return nil, fmt.Errorf("opening a %s connection: %w", InputRequiredVersion, err)
	}
	s.noteSession(cs.ID())
	if v := cs.InitializeResult().ProtocolVersion; v < InputRequiredVersion {
		s.closeSession(cs)
		s.irOlder.Store(true)
		s.log.Info("the server speaks an older protocol than the calling client", "version", v, "client", InputRequiredVersion)
		return nil, ErrOlderGeneration
	}
	ir := &irConn{cs: cs, done: make(chan struct{})}
	s.ir = ir
	s.irWatch.Add(1)
	go func() {
		defer s.irWatch.Done()
		// A connection that ends (the child exited) is opened again by
		// the next request that needs it. It stops being offered before
		// done is closed, so a request that saw it end and then asks
		// again gets a new one.
		cs.Wait()
		s.irMu.Lock()
		if s.ir == ir {
			s.ir = nil
		}
		s.irMu.Unlock()
		s.closeSession(cs)
		s.log.Info("the " + InputRequiredVersion + " connection ended; the next request that needs it opens it again")
		close(ir.done)
	}()
	return ir, nil
}

// closeInputRequired closes the server's 2026-07-28 connection, if open,
// and waits until the watchers of every such connection have reported its
// end. It is called by close, once no new one can be opened.
func (s *server) closeInputRequired() {
	s.irMu.Lock()
	ir := s.ir
	s.ir = nil
	s.irMu.Unlock()
	if ir != nil {
		s.closeSession(ir.cs)
	}
	s.irWatch.Wait()
}
