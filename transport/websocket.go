package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/clientaddr"
	"github.com/switchboardmcp/switchboard/internal/wire"
)

// WebSocketSubprotocol is the WebSocket subprotocol both sides of MCP over
// WebSocket must agree on.
const WebSocketSubprotocol = "mcp"

// WebSocket is an [mcp.Transport] that connects to an MCP server over
// WebSocket: subprotocol "mcp", one JSON-RPC message per text frame.
//
// The context passed to Connect bounds the handshake only; the connection
// then lives until it is closed.
type WebSocket struct {
	// URL is the server's ws:// or wss:// (or http:// or https://) URL.
	URL string
	// Header is sent with the handshake request.
	Header http.Header
	// HTTPClient performs the handshake; nil means http.DefaultClient.
	HTTPClient *http.Client
	// MaxMessageBytes bounds one inbound message; zero or negative means
	// [DefaultMaxMessageBytes]. A bigger message closes the connection
	// (status 1009) and fails Read with an error wrapping
	// [ErrMessageTooLarge].
	MaxMessageBytes int64
	// RefusedMessage receives each message from the server that the
	// protocol does not allow, as [Command.RefusedMessage] does: the
	// request it answers fails, anything else in it is dropped, the
	// connection stays up. Batches are never allowed: MCP over WebSocket
	// came after them. Nil drops such messages silently.
	RefusedMessage func(err error)
}

// Connect performs the WebSocket handshake. It fails if the server does not
// agree to the "mcp" subprotocol.
func (t *WebSocket) Connect(ctx context.Context) (mcp.Connection, error) {
	where := redactURL(t.URL)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("transport: websocket %s: %w", where, err)
	}
	// coder/websocket keeps the handshake request's context for the
	// connection's lifetime, so dial with one that only ctx's cancellation
	// during the handshake can end; after that, only Close ends it.
	dialCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	c, _, err := websocket.Dial(dialCtx, t.URL, &websocket.DialOptions{
		HTTPClient:   t.HTTPClient,
		HTTPHeader:   t.Header.Clone(),
		Subprotocols: []string{WebSocketSubprotocol},
	})
	interrupted := !stop()
	if err != nil {
		cancel()
		if interrupted {
			err = errors.Join(ctx.Err(), err)
		}
		return nil, fmt.Errorf("transport: websocket %s: %w", where, err)
	}
	if interrupted {
		c.CloseNow()
		cancel()
		return nil, fmt.Errorf("transport: websocket %s: %w", where, ctx.Err())
	}
	if got := c.Subprotocol(); got != WebSocketSubprotocol {
		c.Close(websocket.StatusPolicyViolation, `subprotocol "mcp" required`)
		cancel()
		return nil, fmt.Errorf("transport: websocket %s: server did not agree to subprotocol %q (got %q)", where, WebSocketSubprotocol, got)
	}
	w := newWSConn(c, t.MaxMessageBytes, cancel, true, t.RefusedMessage)
	return w, nil
}

// redactURL keeps the scheme, host and path of u: its user info and query
// may hold credentials.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

// wsConn is an [mcp.Connection] over a WebSocket.
type wsConn struct {
	c          *websocket.Conn
	ctx        context.Context // the connection's lifetime; ended by close
	cancel     context.CancelFunc
	dialCancel context.CancelFunc // may be nil

	incoming chan msgOrErr
	readDone chan struct{}

	// strict checks each message as Command does (the client side: what
	// a server sends); refused hears of each refused one.
	strict  bool
	refused func(error)

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

func newWSConn(c *websocket.Conn, max int64, dialCancel context.CancelFunc, strict bool, refused func(error)) *wsConn {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	c.SetReadLimit(max)
	ctx, cancel := context.WithCancel(context.Background())
	w := &wsConn{
		c:          c,
		ctx:        ctx,
		cancel:     cancel,
		dialCancel: dialCancel,
		incoming:   make(chan msgOrErr),
		readDone:   make(chan struct{}),
		closed:     make(chan struct{}),
		strict:     strict,
		refused:    refused,
	}
	// One reader goroutine, reading with the connection's own context:
	// coder/websocket closes the connection when a Read's context ends, and
	// the context of one Read call must not end the connection.
	go w.readLoop()
	return w
}

func (w *wsConn) readLoop() {
	defer close(w.readDone)
	for {
		var m msgOrErr
		typ, data, err := w.c.Read(w.ctx)
		switch {
		case errors.Is(err, websocket.ErrMessageTooBig):
			m.err = fmt.Errorf("%w: websocket: %v", ErrMessageTooLarge, err)
		case err != nil:
			m.err = fmt.Errorf("transport: websocket: %w", err)
		case typ != websocket.MessageText:
			m.err = errors.New("transport: websocket: binary frame (MCP messages are text frames)")
			w.c.Close(websocket.StatusUnsupportedData, "MCP messages are text frames")
		case w.strict:
			if err := checkMessage(nil, data, false); err != nil {
				if w.refused != nil {
					w.refused(err)
				}
				for _, a := range refusedAnswers(data, err) {
					msg, err := jsonrpc.DecodeMessage(a)
					if err != nil {
						continue
					}
					select {
					case w.incoming <- msgOrErr{msg: msg}:
					case <-w.closed:
						return
					}
				}
				continue
			}
			fallthrough
		default:
			m.msg, m.err = wire.DecodeMessage(data)
			if m.err != nil {
				m.err = fmt.Errorf("transport: websocket: %w", m.err)
			}
		}
		select {
		case w.incoming <- m:
		case <-w.closed:
			return
		}
		if m.err != nil {
			return
		}
	}
}

// Read returns the next message. Close unblocks it.
func (w *wsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-w.incoming:
		return m.msg, m.err
	case <-w.closed:
		return nil, io.EOF
	}
}

// Write sends msg as one text frame. Once started, a write completes (or the
// connection closes) regardless of ctx: abandoning half a frame would break
// the connection for every other call.
func (w *wsConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("transport: websocket: encoding message: %w", err)
	}
	if err := w.c.Write(w.ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("transport: websocket: %w", err)
	}
	return nil
}

// Close sends a normal close frame, waits (bounded by coder/websocket) for
// the peer's, and stops the reader goroutine. It is idempotent.
func (w *wsConn) Close() error {
	return w.close(websocket.StatusNormalClosure, "")
}

func (w *wsConn) close(code websocket.StatusCode, reason string) error {
	w.closeOnce.Do(func() {
		close(w.closed)
		err := w.c.Close(code, reason)
		w.cancel()
		<-w.readDone
		if w.dialCancel != nil {
			w.dialCancel()
		}
		// A connection the peer already closed is closed: not an error.
		var ce websocket.CloseError
		if err != nil && !errors.Is(err, net.ErrClosed) && !errors.As(err, &ce) && !strings.Contains(err.Error(), "already wrote close") {
			w.closeErr = fmt.Errorf("transport: websocket: %w", err)
		}
	})
	return w.closeErr
}

func (w *wsConn) SessionID() string { return "" }

// connTransport hands an existing connection to Server.Connect.
type connTransport struct{ conn mcp.Connection }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// WebSocketHandlerOptions configures [NewWebSocketHandler]. The zero value
// (or nil) means defaults.
type WebSocketHandlerOptions struct {
	// MaxMessageBytes bounds one inbound message; zero or negative means
	// [DefaultMaxMessageBytes]. A bigger message closes the connection with
	// status 1009.
	MaxMessageBytes int64
	// OriginPatterns are host patterns (path.Match syntax, e.g.
	// "*.example.com") of browser origins accepted besides the request's
	// own host. By default only same-origin browser requests are accepted;
	// requests without an Origin header (non-browser clients) always are.
	OriginPatterns []string
	// InsecureSkipVerify accepts any origin. It exposes the server to
	// cross-site WebSocket hijacking from any web page a user visits.
	InsecureSkipVerify bool
	// Logger receives connection errors; nil discards them.
	Logger *slog.Logger
}

// WebSocketHandler serves MCP over WebSocket; see [NewWebSocketHandler].
type WebSocketHandler struct {
	getServer func(*http.Request) *mcp.Server
	opts      WebSocketHandlerOptions

	mu     sync.Mutex
	closed bool
	conns  map[*wsConn]struct{}
	wg     sync.WaitGroup // one per ServeHTTP past the closed check
}

// NewWebSocketHandler returns an http.Handler that accepts WebSocket
// connections with subprotocol "mcp" and serves each with the server that
// getServer returns for its request (nil refuses the request with 400).
// Clients that do not offer the subprotocol are refused with 400.
//
// Each connection lives until either side closes it or the handler is
// closed, independent of the HTTP server's request context.
func NewWebSocketHandler(getServer func(*http.Request) *mcp.Server, opts *WebSocketHandlerOptions) *WebSocketHandler {
	h := &WebSocketHandler{getServer: getServer, conns: make(map[*wsConn]struct{})}
	if opts != nil {
		h.opts = *opts
		h.opts.OriginPatterns = append([]string(nil), opts.OriginPatterns...)
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return h
}

// ServeHTTP implements http.Handler.
func (h *WebSocketHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !offersSubprotocol(r, WebSocketSubprotocol) {
		http.Error(w, `WebSocket subprotocol "mcp" required`, http.StatusBadRequest)
		return
	}
	server := h.getServer(r)
	if server == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()

	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:       []string{WebSocketSubprotocol},
		OriginPatterns:     h.opts.OriginPatterns,
		InsecureSkipVerify: h.opts.InsecureSkipVerify,
	})
	if err != nil {
		h.opts.Logger.Info("websocket handshake refused", "remote", clientaddr.String(r), "error", err)
		return // Accept has written the response
	}
	if c.Subprotocol() != WebSocketSubprotocol { // offersSubprotocol makes this unreachable
		c.Close(websocket.StatusPolicyViolation, `subprotocol "mcp" required`)
		return
	}
	conn := newWSConn(c, h.opts.MaxMessageBytes, nil, false, nil)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		conn.close(websocket.StatusGoingAway, "shutting down")
		return
	}
	h.conns[conn] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.conns, conn)
		h.mu.Unlock()
		conn.Close()
	}()

	// Values of the request's context, not its lifetime: the session lives
	// as long as the connection.
	ss, err := server.Connect(context.WithoutCancel(r.Context()), connTransport{conn}, nil)
	if err != nil {
		h.opts.Logger.Info("websocket session failed", "remote", clientaddr.String(r), "error", err)
		return
	}
	if err := ss.Wait(); err != nil && !errors.Is(err, io.EOF) {
		h.opts.Logger.Debug("websocket session ended", "remote", clientaddr.String(r), "error", err)
	}
}

// Close closes every live connection with status 1001 (going away), refuses
// new ones, and waits until every connection's session has ended. It is
// idempotent.
func (h *WebSocketHandler) Close() error {
	h.mu.Lock()
	h.closed = true
	conns := make([]*wsConn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.close(websocket.StatusGoingAway, "shutting down") })
	}
	wg.Wait()
	h.wg.Wait()
	return nil
}

func offersSubprotocol(r *http.Request, proto string) bool {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), proto) {
				return true
			}
		}
	}
	return false
}
