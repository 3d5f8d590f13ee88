package transport

import (
	"fmt"
	"io"
	"mime"
	"net/http"
)

// LimitBodies wraps rt (nil means http.DefaultTransport) so that reading a
// response body of more than max bytes (zero or negative means
// [DefaultMaxMessageBytes]) fails with an error wrapping
// [ErrMessageTooLarge].
//
// The go-sdk's Streamable HTTP client reads an application/json response
// whole, unbounded; this bounds it. Event streams (text/event-stream) are
// left alone: they are long-lived by design, and the SDK's MaxEventSize
// bounds each event. Any other or missing content type is bounded.
func LimitBodies(rt http.RoundTripper, max int64) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	return &limitBodies{rt: rt, max: max}
}

type limitBodies struct {
	rt  http.RoundTripper
	max int64
}

func (l *limitBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.Body == http.NoBody {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		return resp, nil
	}
	// A protocol switch (WebSocket) hands over the connection itself as the
	// body; its frames are bounded by the WebSocket read limit.
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, nil
	}
	b := &limitedBody{rc: resp.Body, left: l.max, max: l.max, url: redactURL(req.URL.String())}
	if resp.ContentLength > l.max {
		b.err = b.tooLarge()
	}
	resp.Body = b
	return resp, nil
}

// CloseIdleConnections forwards to the wrapped RoundTripper, so that
// http.Client.CloseIdleConnections keeps working.
func (l *limitBodies) CloseIdleConnections() {
	if c, ok := l.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
	url  string
	err  error
}

func (b *limitedBody) tooLarge() error {
	return fmt.Errorf("%w: response body from %s over %d bytes", ErrMessageTooLarge, b.url, b.max)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		// At the limit: one more byte means too large; EOF means exactly max.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.err = b.tooLarge()
			return 0, b.err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
