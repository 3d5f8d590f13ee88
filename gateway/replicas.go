package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/guard"
)

// Replicas behind a load balancer. A 2026-07-28 client is stateless: its
// retry of a call that asked for input may reach any replica. A call the
// gateway bridges to an older upstream (input.go) is held where it began,
// by the replica holding the upstream call, and nothing else could hold
// it: the upstream waits in the middle of a call, on one connection. So
// the requestState the gateway issues names that replica and the call,
// signed with a key every replica has (Options.StateKey), and a replica
// that receives a retry naming another sends it there (Options.Peers):
//
//	sbg1.BASE64URL({"r":REPLICA,"c":CALL}).BASE64URL(HMAC-SHA256(key, "sbg1." + payload))
//
// A requestState that does not verify is not the gateway's: it is passed
// to the upstream as its own (a 2026-07-28 upstream's, or another
// gateway's in a chain), so a forged or altered one never selects a call
// or a replica; an older upstream has none, and it is refused as unknown.
//
// The forward is the client's HTTP request as it came (its Authorization
// header too: the other replica authenticates the client exactly as if
// the balancer had sent it there), to the address the named replica
// registered in the state database, never to one from the request, with a
// header saying it was forwarded (a forwarded request is never forwarded
// again). Its answer streams back as it comes (progress, the result).

// statePrefix begins every requestState the gateway issues.
const statePrefix = "sbg1."

// forwardedHeader marks a retry forwarded by a replica; its value is the
// replica it was meant for.
const forwardedHeader = "Switchboard-Forwarded-To"

// maxForwardAnswer bounds the answer of a forwarded retry: one tool
// result (the host bounds each upstream message) and the progress and log
// notifications of its round.
const maxForwardAnswer = 64 << 20

// peerDialTimeout bounds reaching another replica: a replica that is gone
// from the network must not hold the client's retry.
const peerDialTimeout = 5 * time.Second

type bridgeState struct {
	Replica string `json:"r"`
	Call    string `json:"c"`
}

// issueState is the requestState of the bridged call id.
func (g *Gateway) issueState(id string) string {
	body, _ := json.Marshal(bridgeState{Replica: g.opts.Replica, Call: id})
	p := statePrefix + base64.RawURLEncoding.EncodeToString(body)
	return p + "." + base64.RawURLEncoding.EncodeToString(g.stateSigner.Sign(p))
}

// openState returns what a requestState a gateway with this key issued
// says; ok is false for any other string.
func (g *Gateway) openState(s string) (st bridgeState, ok bool) {
	if !strings.HasPrefix(s, statePrefix) {
		return st, false
	}
	i := strings.LastIndexByte(s, '.')
	// Strict: a lenient decoder ignores the unused bits of the last
	// character, so that several spellings of one state would verify.
	sig, err := base64.RawURLEncoding.Strict().DecodeString(s[i+1:])
	if err != nil || i < len(statePrefix) || !g.stateSigner.Verify(s[:i], sig) {
		return st, false
	}
	body, err := base64.RawURLEncoding.Strict().DecodeString(s[len(statePrefix):i])
	if err != nil || json.Unmarshal(body, &st) != nil || st.Call == "" {
		return bridgeState{}, false
	}
	return st, true
}

func newPeerTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil, // replicas reach each other directly, never through HTTP_PROXY
		DialContext:         (&net.Dialer{Timeout: peerDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
}

// readBody reads r's body, within maxBody, for a look before the SDK's,
// and puts it back for the SDK to read; when it cannot (too large: 413,
// unreadable: 400), it has answered and reports false.
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "failed to read body", http.StatusBadRequest)
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// forwardRetry sends a 2026-07-28 tools/call, whose requestState names
// another replica, to that replica, and reports whether it answered the
// request (forwarded, or refused); when it did not, r.Body is as it was.
func (g *Gateway) forwardRetry(w http.ResponseWriter, r *http.Request, maxBody int64) bool {
	body, ok := readBody(w, r, maxBody)
	if !ok {
		return true
	}
	if !bytes.Contains(body, []byte(`"requestState"`)) {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return false // the SDK answers what is malformed
	}
	var params struct {
		RequestState string `json:"requestState"`
	}
	if json.Unmarshal(req.Params, &params) != nil {
		return false
	}
	st, ok := g.openState(params.RequestState)
	if !ok || st.Replica == g.opts.Replica {
		return false
	}
	refuse := func(format string, args ...any) {
		// 200, as the SDK answers a call's error: the client sees the
		// message, and calls again.
		writeJSONRPCError(w, http.StatusOK, req.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)})
	}
	addr, err := g.opts.Peers(r.Context(), st.Replica)
	if err != nil {
		g.log.Info("a retry names a replica that is gone", "replica", st.Replica, "err", err)
		refuse("requestState belongs to a call held by gateway replica %q, which is gone (%v); call the tool again", st.Replica, err)
		return true
	}
	// No round of a bridged call outlasts InputTimeout: the call is ended
	// that long after it began.
	g.proxy(w, r, st.Replica, addr, g.opts.InputTimeout, func() {
		refuse("requestState belongs to a call held by gateway replica %q, which does not answer at %s; call the tool again", st.Replica, addr)
	})
	return true
}

// ForwardToReplica sends r, as it came, to gateway replica replica, and
// its answer back, as a retry or a tasks/cancel is forwarded (the
// credential the guard took off r goes with it, and the other replica's
// guard checks it again), within timeout; refuse answers when the replica
// does not, with its address. It reports whether it answered: not when
// there are no replicas (Options.Peers), replica is this one or is gone,
// or r was forwarded to this one already (never forwarded twice). The
// daemon forwards so the owner's cancel of a task another replica runs
// (POST /api/v1/tasks/{id}/cancel).
func (g *Gateway) ForwardToReplica(w http.ResponseWriter, r *http.Request, replica string, timeout time.Duration, refuse func(addr string)) bool {
	if g.opts.Peers == nil || replica == "" || replica == g.opts.Replica || r.Header.Get(forwardedHeader) != "" {
		return false
	}
	addr, err := g.opts.Peers(r.Context(), replica)
	if err != nil {
		return false
	}
	g.proxy(w, r, replica, addr, timeout, func() { refuse(addr) })
	return true
}

// proxy sends r, as it came, to replica at addr, and its answer back,
// within timeout; refuse answers when the replica does not.
func (g *Gateway) proxy(w http.ResponseWriter, r *http.Request, replica, addr string, timeout time.Duration, refuse func()) {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The endpoint the retry came to: the call is held there.
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.URL.Path, pr.Out.URL.RawPath = "http", addr, pr.In.URL.Path, pr.In.URL.RawPath
			// The client's Host, as the balancer sent it: the replica
			// checks Host and Origin as this one did.
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set(forwardedHeader, replica)
			// The client's credential, which this replica's guard took
			// off the request: the other checks it again.
			if c, ok := guard.Credential(pr.In.Context()); ok {
				pr.Out.Header.Set("Authorization", c)
			}
		},
		Transport:     g.peerTransport,
		FlushInterval: -1, // an SSE answer: each event as it comes
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxForwardAnswer}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			g.log.Warn("forwarding a request to its replica failed", "replica", replica, "address", addr, "err", err)
			refuse()
		},
		ErrorLog: slog.NewLogLogger(g.log.Handler(), slog.LevelWarn),
	}
	rp.ServeHTTP(w, r.WithContext(ctx))
}

// cappedBody fails a read beyond left bytes.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		if n, err := b.ReadCloser.Read(p[:1]); n == 0 && err != nil {
			return 0, err // the answer ended at the bound exactly
		}
		return 0, fmt.Errorf("the replica's answer exceeds %d bytes", maxForwardAnswer)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
