package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A Login receives the authorization code of a browser sign-in on a
// loopback callback (RFC 8252 §7.3): http://127.0.0.1:PORT/callback, the
// port chosen by the system. Close stops it.
//
// The callback is for the one sign-in waiting for it ([Login.Fetch]), and
// only once. Its page tells the browser what came of the sign-in: through
// a handler of this package ([NewHandler]) it waits for the outcome — the
// go-sdk's checks of the callback's iss (RFC 9207), the code exchange —
// and says "Signed in" only once the tokens are stored; otherwise it says
// that the sign-in failed, and why. A callback whose state is not the
// sign-in's (another page's, a stale link) is refused at once, and ends
// the sign-in with that error; so does the authorization server's own
// refusal. A callback when no sign-in waits, or a second one, is refused.
type Login struct {
	// RedirectURL is the callback's URL, to register and redirect to.
	RedirectURL string
	// Show is told the authorization URL to visit; Open, when set, opens
	// it in a browser (an error is reported through Show's caller only:
	// the URL was shown).
	Show func(url string)
	Open func(url string) error

	ln   net.Listener
	srv  *http.Server
	once sync.Once

	mu      sync.Mutex
	waiting *waiting // the sign-in waiting for its callback; nil when none
}

// waiting is a sign-in's wait for its callback.
type waiting struct {
	state string        // the authorization request's
	flow  *flow         // its outcome, when run by a handler of this package
	got   chan callback // the callback taken, once
	taken bool          // a callback was taken (l.mu)
}

type callback struct {
	res *auth.AuthorizationResult
	err error
}

// A flow is one run of the go-sdk's authorization code flow, from a
// handler's Authorize (which puts it in the context Fetch is given) to its
// outcome, which the callback's page waits for.
type flow struct {
	done chan struct{}
	err  error // set before done is closed
}

type flowKey struct{}

func newFlow() *flow { return &flow{done: make(chan struct{})} }

func (f *flow) finish(err error) {
	f.err = err
	close(f.done)
}

// callbackPath is where the authorization server redirects to.
const callbackPath = "/callback"

// verdictTimeout bounds how long the callback's page waits for the outcome
// of its sign-in: the checks and the code exchange, one token request,
// which oauthTimeout bounds.
const verdictTimeout = oauthTimeout + 5*time.Second

// Listen starts a Login's callback on 127.0.0.1 and a free port.
func Listen() (*Login, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the sign-in's callback: %w", err)
	}
	l := &Login{
		RedirectURL: "http://" + ln.Addr().String() + callbackPath,
		ln:          ln,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+callbackPath, l.callback)
	// ReadHeaderTimeout: a local process that connects and says nothing
	// must not hold a connection open for the whole sign-in.
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln)
	return l, nil
}

// errStateMismatch is the sign-in's error for a callback whose state is
// not its own.
var errStateMismatch = errors.New("the callback's state is not this sign-in's (it came from another page or an old link, or was forged); it was refused")

func (l *Login) callback(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	wt := l.waiting
	if wt == nil || wt.taken {
		l.mu.Unlock()
		page(w, http.StatusConflict, "Sign-in failed", "no sign-in is waiting for this callback: it has ended (or this page was opened twice). Nothing was stored from this page.")
		return
	}
	wt.taken = true
	l.mu.Unlock()

	q := r.URL.Query()
	var cb callback
	switch {
	case q.Get("error") != "":
		msg := q.Get("error")
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		cb.err = fmt.Errorf("the authorization server refused the sign-in: %s", msg)
	case q.Get("state") != wt.state:
		cb.err = errStateMismatch
	case q.Get("code") == "":
		cb.err = errors.New("the callback carries no authorization code")
	default:
		cb.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	wt.got <- cb
	if cb.err != nil {
		page(w, http.StatusBadRequest, "Sign-in failed", cb.err.Error()+". Nothing was stored.")
		return
	}
	if wt.flow == nil {
		// Nobody to tell the outcome: the terminal says it.
		page(w, http.StatusOK, "Sign-in received", "switchboard has the authorization code; the terminal says whether the sign-in succeeded.")
		return
	}
	t := time.NewTimer(verdictTimeout)
	defer t.Stop()
	select {
	case <-wt.flow.done:
		if err := wt.flow.err; err != nil {
			page(w, http.StatusBadRequest, "Sign-in failed", err.Error()+". Nothing was stored.")
			return
		}
		page(w, http.StatusOK, "Signed in", "Signed in to Switchboard.")
	case <-t.C:
		page(w, http.StatusGatewayTimeout, "Sign-in undecided", "switchboard is still exchanging the code; the terminal says whether the sign-in succeeded.")
	case <-r.Context().Done():
	}
}

// page answers the browser with a small page: title and text, escaped.
func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p><p>You can close this tab.</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

// Fetch is an [auth.AuthorizationCodeFetcher]: it shows (and opens) the
// authorization URL, then waits for its callback or ctx.
func (l *Login) Fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(args.URL)
	if err != nil {
		return nil, fmt.Errorf("the authorization URL: %w", err)
	}
	wt := &waiting{state: u.Query().Get("state"), got: make(chan callback, 1)}
	wt.flow, _ = ctx.Value(flowKey{}).(*flow)
	// Waiting before the URL is shown: a quick browser's callback finds it.
	l.mu.Lock()
	l.waiting = wt
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if l.waiting == wt {
			l.waiting = nil
		}
		l.mu.Unlock()
	}()
	if l.Show != nil {
		l.Show(args.URL)
	}
	if l.Open != nil {
		if err := l.Open(args.URL); err != nil && l.Show != nil {
			l.Show("") // the caller says the browser did not open
		}
	}
	select {
	case cb := <-wt.got:
		return cb.res, cb.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the sign-in in the browser: %w", context.Cause(ctx))
	}
}

// closeGrace bounds how long Close lets a callback's page that is being
// answered (its sign-in decided) go out.
const closeGrace = 5 * time.Second

// Close stops the callback, once the page of a callback being answered has
// gone out (within closeGrace). It is idempotent.
func (l *Login) Close() error {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		if l.srv.Shutdown(ctx) != nil {
			l.srv.Close()
		}
	})
	return nil
}

// OpenBrowser opens url with the system's opener (xdg-open, open,
// rundll32); it does not wait for the browser.
func OpenBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
