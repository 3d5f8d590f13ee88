package guard

import (
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Options are a [Guard]'s checks. Nil means defaults: every caller is the
// owner, and the Host header is not checked.
type Options struct {
	// AuthToken, when set, is the owner's credential: "Authorization:
	// Bearer TOKEN" (compared in constant time), or on the faces a
	// browser uses the [SessionCookie] that stands for it. With OAuth as
	// well, a request bearing AuthToken is the owner's (no policy applies)
	// and any other must carry a valid access token. Without either,
	// every caller is the owner (a loopback listener only).
	AuthToken string
	// OAuth, when set, makes the listener an OAuth 2.1 protected resource:
	// its metadata is published at /.well-known/oauth-protected-resource
	// (and the resource's path-suffixed form), and every other request
	// needs a JWT access token of the issuer for the gateway (see
	// [OAuthOptions]), or the owner's AuthToken; the gateway's policy then
	// applies to each client. The token is never passed upstream.
	OAuth *OAuthOptions
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed
	// besides the listener's own. A request with any other Origin gets 403.
	AllowedOrigins []string
	// AllowedHosts are Host header values allowed besides loopback names
	// (localhost, 127.0.0.1, [::1]) when the listener is on loopback.
	// Listening elsewhere, every Host is allowed and the token is the guard.
	AllowedHosts []string
	// Loopback says the listener is on a loopback address, so the Host
	// header is checked against DNS rebinding.
	Loopback bool
	// BodyTimeout bounds the time a request body may take to arrive, on top
	// of one second for every MinBodyRate bytes received: a client that
	// trickles its body is cut off after about BodyTimeout, while a large
	// body arriving at any reasonable speed is never cut. Default 10 s.
	// Bodies are read only after the Host, Origin and token checks pass;
	// a refused request's body is never read. (Request headers are bounded
	// by the http.Server's ReadHeaderTimeout, which `switchboard serve`
	// sets.)
	BodyTimeout time.Duration
	// Logger receives refused requests; nil discards.
	Logger *slog.Logger
	// Local says the guard serves a listener only its owner can reach
	// (the daemon's unix socket): every request is the owner's, and its
	// clients may set what only the owner may, such as a call's own
	// timeout (gateway.MetaKeyTimeout), which the handlers learn from
	// [LocalHeader]. Requests through any other guard cannot claim to be
	// local.
	Local bool
}

// DefaultBodyTimeout is the default [Options.BodyTimeout].
const DefaultBodyTimeout = 10 * time.Second

// MinBodyRate is the body rate, in bytes per second, that a client must
// keep up for its request body to have more time than BodyTimeout: each
// MinBodyRate bytes received earn one second. 32 KiB/s lets a 4 MiB body
// (the default bound) take 2 minutes, while a client trickling a byte a
// second holds its connection for BodyTimeout only.
const MinBodyRate = 32 << 10

// timedBody bounds how long a request body takes to arrive with a read
// deadline on the connection, moved forward as bytes come in. Once the
// body is read the deadline is cleared: net/http then reads the connection
// in the background to notice a client that goes away, and a deadline
// passing there would cancel a response still streaming (a call's SSE
// stream may last as long as the call).
type timedBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	start   time.Time
	timeout time.Duration
	n       int64
	done    bool
}

func newTimedBody(w http.ResponseWriter, body io.ReadCloser, timeout time.Duration) io.ReadCloser {
	b := &timedBody{ReadCloser: body, rc: http.NewResponseController(w), start: time.Now(), timeout: timeout}
	if b.rc.SetReadDeadline(b.start.Add(timeout)) != nil {
		return body // no connection deadline to set (a ResponseWriter of a test, HTTP/2 without support)
	}
	return b
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case b.done:
	case err == io.EOF:
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	case err == nil && n > 0:
		earned := time.Duration(b.n) * time.Second / MinBodyRate
		b.rc.SetReadDeadline(b.start.Add(b.timeout + earned))
	}
	return n, err
}
