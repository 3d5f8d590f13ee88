package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/transport"
)

// HTTPOptions configures [Gateway.Handler]: the checks of its guard, and
// the shape of its endpoints ([Gateway.Mount]). Nil means defaults.
type HTTPOptions struct {
	// Guard are the checks of the handler's own guard (Handler only: a
	// gateway mounted on a guard has that guard's checks).
	Guard guard.Options
	// MaxBodyBytes bounds one request body (and WebSocket message); default
	// 4 MiB.
	MaxBodyBytes int64
	// SessionTimeout ends Streamable HTTP sessions idle that long; default
	// 30 minutes.
	SessionTimeout time.Duration
	// MaxSessions bounds the sessions held at once: Streamable HTTP
	// sessions, legacy SSE sessions, WebSocket connections and 2026-07-28
	// subscriptions/listen streams. At the bound a new session closes a
	// Streamable HTTP session that is idle (no request in flight, not even
	// its GET stream): the new session's client's own idlest, else the
	// idlest of all. When none is idle it is refused with 503, Retry-After
	// and a JSON-RPC error naming the limit. Default [DefaultMaxSessions].
	MaxSessions int
	// MaxClientSessions bounds the sessions one client address holds (an
	// IPv6 client's /64), the same way, closing only the client's own idle
	// sessions and refusing with 429. Default [DefaultMaxClientSessions],
	// and never more than MaxSessions.
	MaxClientSessions int
	// JSONResponse answers Streamable HTTP POSTs with application/json
	// instead of an SSE stream when the call needs no streaming.
	JSONResponse bool
	// ResumeBytes bounds the memory, shared by all sessions, that keeps
	// recent Streamable HTTP events so that a 2025-11-25 client whose
	// stream broke can resume it with Last-Event-ID instead of losing the
	// responses on it (the SDK then also sends the spec's priming event).
	// Default 10 MiB; negative disables resumption.
	ResumeBytes int
}

// Handler serves the gateway over HTTP at its endpoint's paths
// ([Endpoint]; by default Streamable HTTP at /mcp, the legacy HTTP+SSE
// transport at /sse (messages to /message), WebSocket at /ws). It is a
// guard of its own (made with opts.Guard) with the gateway mounted on it
// ([Gateway.Mount]): every request passes the Host, Origin and credential
// checks first. A listener with other faces beside the gateway makes one
// guard for all of them instead, and mounts the gateway on it.
//
// Close the gateway to end the handler's sessions.
func (g *Gateway) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	gd, err := guard.New(g.ctx, &o.Guard)
	if err != nil {
		cmp.Or(o.Guard.Logger, g.log).Error("gateway: OAuth is misconfigured; refusing every request", "err", err)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			guard.Refuse(w, http.StatusInternalServerError, "the gateway's OAuth configuration is invalid")
		})
	}
	g.Mount(gd, &o)
	return gd
}

// Mount registers the gateway's endpoints on gd, each path with its
// endpoint's rules ([guard.Guard.HandleEndpoint], at [guard.AccessMCP]): by
// default /mcp (Streamable HTTP), /sse and /message (the legacy HTTP+SSE
// transport), /ws (WebSocket); see [Endpoint]. Of opts, the fields that
// shape the endpoints count; the checks are gd's.
//
// Close the gateway to end the endpoints' sessions.
func (g *Gateway) Mount(gd *guard.Guard, opts *HTTPOptions) {
	o := HTTPOptions{}
	if opts != nil {
		o = *opts
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = transport.DefaultMaxMessageBytes
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 30 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxClientSessions <= 0 {
		o.MaxClientSessions = DefaultMaxClientSessions
	}
	o.MaxClientSessions = min(o.MaxClientSessions, o.MaxSessions)
	var events mcp.EventStore
	if o.ResumeBytes >= 0 {
		store := mcp.NewMemoryEventStore(nil)
		if o.ResumeBytes > 0 {
			store.SetMaxBytes(o.ResumeBytes)
		}
		events = store
	}
	// One bound on sessions for every endpoint: they are the gateway's.
	limits := newSessionLimits(g.sessions, o.MaxSessions, o.MaxClientSessions, func(msg string, args ...any) { g.log.Info(msg, args...) }, g.endSession)
	m := &mount{gd: gd, o: o, events: events, limits: limits, paths: map[string]bool{}, handlers: map[*endpoint]*endpointHandlers{}}
	m.routes.Store(&map[string]http.Handler{})
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mounts = append(g.mounts, m)
	for _, ep := range g.served() {
		g.mountEndpoint(m, ep)
	}
	m.route(g.served())
}

// A mount is the gateway mounted on a guard ([Gateway.Mount]): the
// handlers of each endpoint served there, and the paths registered on the
// guard, each of which serves the endpoint at that path now (routes), so
// that SetEndpoints can change what a path serves: a guard's route cannot
// be removed, and answers 404 once no endpoint has its path.
type mount struct {
	gd     *guard.Guard
	o      HTTPOptions
	events mcp.EventStore
	limits *sessionLimits

	paths    map[string]bool                 // registered on gd; g.mu
	handlers map[*endpoint]*endpointHandlers // g.mu
	routes   atomic.Pointer[map[string]http.Handler]
}

// endpointHandlers serve one endpoint on one mount.
type endpointHandlers struct {
	streamable, sse, ws http.Handler
	closeWS             func()
}

// mountEndpoint makes ep's handlers on m and registers the paths m has
// not registered yet; g.mu is held. The routes are m.route's to change.
func (g *Gateway) mountEndpoint(m *mount, ep *endpoint) {
	m.handlers[ep] = g.endpointHandlers(m, ep)
	// Every path of the endpoint, whatever its transport, with the same
	// rules: its own token, its scopes (guard.Endpoint).
	for _, p := range ep.paths() {
		if !m.paths[p] {
			m.paths[p] = true
			m.gd.HandleEndpoint(p, ep.rules(), m.serve(p))
		}
	}
}

// route points m's paths at the handlers of eps, each with the rules of
// its endpoint in m's guard; g.mu is held.
func (m *mount) route(eps []*endpoint) {
	routes := map[string]http.Handler{}
	rules := map[string]guard.Endpoint{}
	for _, ep := range eps {
		h := m.handlers[ep]
		if h == nil {
			continue
		}
		for _, p := range ep.paths() {
			rules[p] = ep.rules()
		}
		routes[ep.Path] = h.streamable
		for _, p := range []string{ep.SSE, ep.Message} {
			if p != "" {
				routes[p] = h.sse
			}
		}
		if ep.WebSocket != "" {
			routes[ep.WebSocket] = h.ws
		}
	}
	for p := range m.paths {
		m.gd.SetEndpoint(p, rules[p]) // zero for a path no endpoint has now
	}
	m.routes.Store(&routes)
}

// serve is the handler registered at path p: it serves the endpoint at p
// now, or answers 404.
func (m *mount) serve(p string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := (*m.routes.Load())[p]
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// endpointHandlers makes ep's handlers for m; g.mu is held.
func (g *Gateway) endpointHandlers(m *mount, ep *endpoint) *endpointHandlers {
	o := &m.o
	out := &endpointHandlers{closeWS: func() {}}
	getServer := func(*http.Request) *mcp.Server { return ep.srv }
	streamable := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout:      o.SessionTimeout,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		JSONResponse:        o.JSONResponse,
		EventStore:          m.events,
		// The guard checks Host and Origin for every endpoint.
		DisableLocalhostProtection: true,
	})
	// The go-sdk serves 2026-07-28 over HTTP only statelessly: each POST
	// is a whole request, with no session to come back to.
	sessionless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		JSONResponse:        o.JSONResponse,
		// A client that hangs up has cancelled its request.
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   true,
	})
	out.streamable = &byGeneration{g: g, ep: ep, srv: ep.srv, sessions: streamable, sessionless: sessionless, limits: m.limits, maxBody: o.MaxBodyBytes, json: o.JSONResponse}
	if ep.SSE != "" || ep.Message != "" {
		out.sse = m.limits.limitStreams(mcp.NewSSEHandler(getServer, &mcp.SSEOptions{
			MaxRequestBodyBytes:        o.MaxBodyBytes,
			DisableLocalhostProtection: true,
		}))
	}
	if ep.WebSocket != "" {
		ws := transport.NewWebSocketHandler(getServer, &transport.WebSocketHandlerOptions{
			MaxMessageBytes: o.MaxBodyBytes,
			// The guard checks Origin, with the same rule as the other endpoints.
			InsecureSkipVerify: true,
		})
		// Its connections end with the gateway, or with the endpoint when
		// SetEndpoints removes it (closeWS): then this goroutine ends too,
		// so that changing endpoints leaves none behind. Under g.mu: Close
		// cancels g.ctx under it too, so it is counted before Close
		// waits, or not started.
		removed := make(chan struct{})
		if g.ctx.Err() == nil {
			g.wg.Go(func() {
				select {
				case <-g.ctx.Done():
				case <-removed:
				}
				ws.Close()
			})
		}
		out.ws = m.limits.limitStreams(ws)
		out.closeWS = sync.OnceFunc(func() { close(removed); ws.Close() })
	}
	return out
}

// byGeneration serves each Streamable HTTP request in its client's protocol
// generation. A request that belongs to no session and names 2026-07-28
// or later (in its MCP-Protocol-Version header, or in its _meta) is served
// statelessly, as that generation is; the requests of a session, its GET
// stream and DELETE by the stateful handler, where 2025-11-25 and older
// clients hold sessions, created by an initialize without a session.
//
// It also does what the SDK's handlers do not (go-sdk v1.8.0): a POST
// whose Accept does not list both application/json and text/event-stream,
// or a GET whose Accept does not list text/event-stream, is refused with
// 406 (acceptable); any other request without a session is refused with 400, as the spec
// asks (the SDK would open a session for it, answer 200 with an error in
// the stream and close the session again); a batch is refused on a
// session that negotiated 2025-06-18 or later, where batches do not exist
// (the SDK looks only at the request's MCP-Protocol-Version header, which
// a client may leave out); and every session is counted against the
// limits.
type byGeneration struct {
	g                     *Gateway
	ep                    *endpoint
	srv                   *mcp.Server
	sessions, sessionless http.Handler
	limits                *sessionLimits
	maxBody               int64
	json                  bool // HTTPOptions.JSONResponse
}

// firstSessionlessVersion is the first protocol version without sessions.
const firstSessionlessVersion = "2026-07-28"

// firstVersionWithoutBatches is the first protocol version without JSON-RPC
// batches.
const firstVersionWithoutBatches = "2025-06-18"

func (b *byGeneration) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !acceptable(w, r) {
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		b.serveSession(w, r, id)
		return
	}
	if r.Header.Get("Mcp-Protocol-Version") >= firstSessionlessVersion {
		b.serveSessionless(w, r)
		return
	}
	if r.Method != http.MethodPost {
		b.sessions.ServeHTTP(w, r) // the SDK says what GET and DELETE need
		return
	}
	body, msgs, batch, ok := b.readMessages(w, r)
	if !ok {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && metaVersion(req) >= firstSessionlessVersion {
			// The stateless handler insists on the header, with the error
			// that belongs to the request's generation.
			b.serveSessionless(w, r)
			return
		}
	}
	var first jsonrpc.ID
	if req, ok := msgs[0].(*jsonrpc.Request); ok && !batch {
		first = req.ID
		if req.Method == "initialize" {
			b.initialize(w, r, req.ID)
			return
		}
	}
	writeJSONRPCError(w, http.StatusBadRequest, first, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "Bad Request: Mcp-Session-Id header required: this request belongs to a session; start one with initialize (a 2026-07-28 client sends MCP-Protocol-Version instead and needs no session)"})
}

// acceptable answers 406 Not Acceptable, with a JSON-RPC error that has no
// id, to a request whose Accept header does not list what the Streamable
// HTTP transport requires of every client (2025-03-26 through
// 2026-07-28): application/json and text/event-stream for a POST,
// text/event-stream for a GET. Listed means named, with a quality above
// zero: "*/*" (curl's default) names neither, so that a client that sends
// it and cannot read an event stream learns so here rather than from a
// stream it cannot parse. The go-sdk takes "*/*" for both and answers a
// request without Accept 400; the TypeScript and Python SDKs answer 406,
// the status HTTP gives a request whose Accept the answer cannot meet
// (RFC 9110 §15.5.7). Other methods need no Accept.
func acceptable(w http.ResponseWriter, r *http.Request) bool {
	var need []string
	switch r.Method {
	case http.MethodPost:
		need = []string{"application/json", "text/event-stream"}
	case http.MethodGet:
		need = []string{"text/event-stream"}
	default:
		return true
	}
	listed := map[string]bool{}
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			listed[mt] = true // ParseMediaType lowers its case
		}
	}
	var missing []string
	for _, t := range need {
		if !listed[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return true
	}
	writeJSONRPCError(w, http.StatusNotAcceptable, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("Not Acceptable: the Accept header must list %s (a %s to the MCP endpoint; it lacks %s)",
			strings.Join(need, " and "), r.Method, strings.Join(missing, " and "))})
	return false
}

// readMessages reads a session-less POST's body (bounded by maxBody) and
// decodes its messages. It answers the request itself when it cannot.
func (b *byGeneration) readMessages(w http.ResponseWriter, r *http.Request) (body []byte, msgs []jsonrpc.Message, batch, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, nil, false, false
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return nil, nil, false, false
	}
	msgs, batch, err = decodeMessages(body)
	if err != nil || len(msgs) == 0 {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "malformed JSON-RPC message"})
		return nil, nil, false, false
	}
	return body, msgs, batch, true
}

// decodeMessages decodes a JSON-RPC message or batch of messages.
func decodeMessages(body []byte) (msgs []jsonrpc.Message, batch bool, err error) {
	if firstJSONByte(body) != '[' {
		m, err := jsonrpc.DecodeMessage(body)
		return []jsonrpc.Message{m}, false, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, true, err
	}
	for _, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, true, err
		}
		msgs = append(msgs, m)
	}
	return msgs, true, nil
}

// firstJSONByte is the first byte of data that is not JSON whitespace, or
// 0.
func firstJSONByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// metaVersion is the protocol version a request names in its _meta
// (2026-07-28 and later), or "".
func metaVersion(req *jsonrpc.Request) string {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if len(req.Params) == 0 || json.Unmarshal(req.Params, &p) != nil {
		return ""
	}
	v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v
}

// initialize starts a session, within the limits.
func (b *byGeneration) initialize(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) {
	client := clientOf(r)
	if err := b.limits.reserve(client); err != nil {
		refuseSession(w, err, id)
		return
	}
	cw := &sessionCapture{ResponseWriter: w}
	cw.onHeader = func() {
		// Before the answer goes out, so that the client's next request
		// finds the session counted.
		if sid := w.Header().Get("Mcp-Session-Id"); sid != "" && cw.status == http.StatusOK {
			b.limits.track(client, sid, userOf(r))
			cw.tracked = sid
			return
		}
		b.limits.release(client)
		cw.released = true
	}
	b.sessions.ServeHTTP(cw, r)
	switch {
	case cw.tracked != "":
		b.limits.end(cw.tracked) // the initialize itself, which track counted
	case !cw.released:
		b.limits.release(client) // the SDK wrote nothing
	}
}

// serveSession serves a request of session id, counting it as activity.
func (b *byGeneration) serveSession(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method == http.MethodPost {
		if ok := b.checkBatch(w, r, id); !ok {
			return
		}
	}
	if b.limits.gone(id) {
		http.Error(w, "session not found (closed to make room for a new one)", http.StatusNotFound)
		return
	}
	end := b.limits.begin(id)
	defer end()
	if r.Method == http.MethodDelete && b.limits.owns(id, userOf(r)) {
		// The SDK's DELETE closes the session, which waits for its
		// requests and for the questions put to its client: end those
		// first. Only for the session's own client (the SDK refuses
		// another user's DELETE with 403, after the wait).
		if ss := b.session(id); ss != nil {
			closed := b.g.ends.End(ss, nil)
			defer closed()
		}
	}
	b.sessions.ServeHTTP(w, r)
	if r.Method == http.MethodDelete {
		b.limits.forget(id)
	}
}

// session is the Streamable HTTP session id, or nil.
func (b *byGeneration) session(id string) *mcp.ServerSession {
	for ss := range b.srv.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// userOf is the user a request's OAuth token names, or "": what the go-sdk
// binds a session to.
func userOf(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// checkBatch refuses a JSON-RPC batch on a session whose protocol has none.
// It looks at the body's first byte only, and puts it back.
func (b *byGeneration) checkBatch(w http.ResponseWriter, r *http.Request, id string) bool {
	var head [64]byte
	n, _ := io.ReadFull(r.Body, head[:1])
	for n > 0 && n < len(head) && firstJSONByte(head[:n]) == 0 {
		m, _ := io.ReadFull(r.Body, head[n:n+1])
		if m == 0 {
			break
		}
		n += m
	}
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head[:n]), r.Body), r.Body}
	if firstJSONByte(head[:n]) != '[' {
		return true
	}
	for ss := range b.srv.Sessions() {
		if ss.ID() != id {
			continue
		}
		if v := negotiatedVersion(ss); v >= firstVersionWithoutBatches {
			writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("Bad Request: this session speaks protocol %s, which has no JSON-RPC batches (they were removed in %s); send one message per request", v, firstVersionWithoutBatches)})
			return false
		}
		return true
	}
	return true // no such session: the SDK answers 404
}

// negotiatedVersion is the protocol version a session agreed on: the one
// its client asked for if the server speaks it (and it came by initialize,
// so before 2026-07-28), else the newest such the server speaks, as the
// go-sdk (v1.8.0) negotiates; it keeps the result unexported.
func negotiatedVersion(ss *mcp.ServerSession) string {
	p := ss.InitializeParams()
	if p == nil {
		return ""
	}
	versions := mcp.SupportedProtocolVersions()
	if slices.Contains(versions, p.ProtocolVersion) && p.ProtocolVersion < firstSessionlessVersion {
		return p.ProtocolVersion
	}
	for _, v := range versions {
		if v < firstSessionlessVersion {
			return v
		}
	}
	return ""
}

// serveSessionless serves a 2026-07-28 request statelessly. A
// subscriptions/listen request is a stream that lasts as long as its
// client wants, and counts as a session while it does.
func (b *byGeneration) serveSessionless(w http.ResponseWriter, r *http.Request) {
	r = r.WithContext(context.WithValue(r.Context(), sessionlessKey{}, true))
	// The SDK checks that Mcp-Method names the body's method.
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "tools/call" && r.Header.Get(forwardedHeader) == "" && b.g.opts.Peers != nil {
		// A retry of a call another replica holds goes there.
		if b.g.forwardRetry(w, r, b.maxBody) {
			return
		}
	}
	if r.Method == http.MethodPost && b.g.opts.Tasks != nil && slices.Contains(taskMethods, r.Header.Get("Mcp-Method")) {
		// Mcp-Name must name the task (the SDK does not check it), and
		// an update or cancel goes to the replica running the task.
		if b.g.routeTask(w, r, b.maxBody) {
			return
		}
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "subscriptions/listen" {
		client := clientOf(r)
		if err := b.limits.reserve(client); err != nil {
			refuseSession(w, err, jsonrpc.ID{})
			return
		}
		defer b.limits.release(client)
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "tools/call" && b.fastCall(w, r) {
		return
	}
	b.sessionless.ServeHTTP(w, r)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// sessionCapture calls onHeader once, just before the response header is
// written, and records the status.
type sessionCapture struct {
	http.ResponseWriter
	onHeader func()
	status   int
	wrote    bool
	tracked  string
	released bool
}

func (c *sessionCapture) header(status int) {
	if !c.wrote {
		c.wrote = true
		c.status = status
		c.onHeader()
	}
}

func (c *sessionCapture) WriteHeader(status int) {
	c.header(status)
	c.ResponseWriter.WriteHeader(status)
}

func (c *sessionCapture) Write(p []byte) (int, error) {
	c.header(http.StatusOK)
	return c.ResponseWriter.Write(p)
}

func (c *sessionCapture) Flush() {
	c.header(http.StatusOK)
	http.NewResponseController(c.ResponseWriter).Flush()
}

func (c *sessionCapture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// sessionlessKey marks the context of a request served statelessly: its
// *mcp.ServerSession lives for this one request.
type sessionlessKey struct{}

func isSessionless(ctx context.Context) bool {
	v, _ := ctx.Value(sessionlessKey{}).(bool)
	return v
}
