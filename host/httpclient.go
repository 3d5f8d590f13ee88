package host

// The HTTP client of a network server: its headers to its own origin only,
// the guarded dialer, redirect policy and bounded bodies.

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/transport"
)

// httpClient is the client for one network server: its configured headers on
// every request, no proxy from the environment (a proxy would hide the real
// target), no cross-origin redirects, bounded response bodies, and the
// messages in them checked (transport.StrictBodies) before the SDK, or the
// progress tap, reads them.
func (s *server) httpClient(rs config.Server, rec *statusRecorder) *http.Client {
	// The guarded dialer resolves once and dials the checked address;
	// allow_local_endpoint admits exactly the authored host:port (resolved
	// now for names like localhost), never a metadata address or a redirect
	// target. The operator's [network] ranges and proxy apply on top.
	ctx, cancel := context.WithTimeout(context.Background(), rs.ConnectTimeout)
	defer cancel()
	d := &netguard.Dialer{Timeout: rs.ConnectTimeout}
	if rs.AllowLocalEndpoint {
		d.AllowLocal, _ = netguard.LocalEndpoint(ctx, nil, rs.URL) // unresolved: the dialer refuses, saying why
	}
	base := s.h.opts.Network.Transport(ctx, d)
	base.TLSHandshakeTimeout = rs.ConnectTimeout
	s.mu.Lock()
	s.idle = append(s.idle, base.CloseIdleConnections)
	s.mu.Unlock()
	ht := &headerTransport{base: base, header: headerOf(rs.Headers), rec: rec}
	if u, err := url.Parse(rs.URL); err == nil {
		ht.origin = netguard.Origin(u)
	}
	rt := transport.LimitBodies(ht, int64(s.h.opts.MaxMessageBytes))
	rt = transport.StrictBodies(rt, s.h.opts.MaxMessageBytes, s.refusedMessage)
	if rec != nil && rec.progress != nil {
		rt = &progressTransport{rt: rt, h: rec.progress}
	}
	// headerTransport adds the configured headers only to requests to the
	// server's own origin, and the policy drops them (and Authorization,
	// Cookie) from a cross-origin hop, which it refuses unless the server
	// sets allow_cross_origin_redirects.
	policy := &netguard.RedirectPolicy{
		AllowLocal:        rs.AllowLocalEndpoint,
		AllowCrossOrigin:  rs.AllowCrossOriginRedirects,
		CredentialHeaders: slices.Collect(maps.Keys(rs.Headers)),
		Network:           s.h.opts.Network,
	}
	return &http.Client{Transport: rt, CheckRedirect: policy.CheckRedirect}
}

func headerOf(m map[string]string) http.Header {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// headerTransport adds a server's configured headers to every request to
// the server's own origin, and records the status of each POST.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	// origin is the server URL's (netguard.Origin); the headers carry
	// credentials, so a request elsewhere (after a cross-origin redirect
	// the server allows) gets none of them. "" (an unparsable URL, which
	// CheckURL refuses before any request): no request gets them.
	origin string
	rec    *statusRecorder
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) > 0 && t.origin != "" && netguard.Origin(req.URL) == t.origin {
		req = req.Clone(req.Context())
		for k, v := range t.header {
			if req.Header.Get(k) == "" {
				req.Header[k] = v
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && t.rec != nil && req.Method == http.MethodPost {
		t.rec.record(resp.StatusCode)
	}
	return resp, err
}

// progressTransport routes the progress notifications of event streams
// (sseProgressTap), and rewrites what the go-sdk cannot say or would drop
// of tasks (task.go) in the messages it sends and in the bodies it reads,
// JSON and event streams; it wraps the checks, so that it reads only what
// they let through.
type progressTransport struct {
	rt http.RoundTripper
	h  *Host
}

func (t *progressTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil && req.Body != http.NoBody {
		// The host's own message, as the SDK encoded it.
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if b, ok := taskOutgoingBytes(body); ok {
			body = b
		}
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseProgressTap{rc: resp.Body, h: t.h}
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &taskJSONBody{rc: resp.Body}
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	return resp, err
}

// taskJSONBody is a JSON response body with what the go-sdk would drop of
// tasks rewritten (task.go): read whole (the checks it wraps bound it) at
// the first Read.
type taskJSONBody struct {
	rc   io.ReadCloser
	r    *bytes.Reader
	err  error
	read bool
}

func (b *taskJSONBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		data, err := io.ReadAll(b.rc)
		if out, ok := taskIncomingBytes(bytes.TrimSpace(data)); ok && err == nil {
			data = out
		}
		b.r, b.err = bytes.NewReader(data), err
	}
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *taskJSONBody) Close() error { return b.rc.Close() }

// CloseIdleConnections forwards to the wrapped RoundTripper.
func (t *progressTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type statusRecorder struct {
	// progress, when set, routes progress notifications read from event
	// stream bodies (Streamable HTTP; progressTransport).
	progress *Host

	code atomic.Int32 // of the last POST answered
}

func (r *statusRecorder) record(code int) { r.code.Store(int32(code)) }

// last is the status of the last POST answered.
func (r *statusRecorder) last() int { return int(r.code.Load()) }
