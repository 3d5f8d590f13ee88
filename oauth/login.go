package oauth

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A Login receives the authorization code of a browser sign-in on a
// loopback callback (RFC 8252 §7.3): http://127.0.0.1:PORT/callback, the
// port chosen by the system. Close stops it.
type Login struct {
	// RedirectURL is the callback's URL, to register and redirect to.
	RedirectURL string
	// Show is told the authorization URL to visit; Open, when set, opens
	// it in a browser (an error is reported through Show's caller only:
	// the URL was shown).
	Show func(url string)
	Open func(url string) error

	ln      net.Listener
	srv     *http.Server
	results chan callback
	once    sync.Once
}

type callback struct {
	res *auth.AuthorizationResult
	err error
}

// callbackPath is where the authorization server redirects to.
const callbackPath = "/callback"

// Listen starts a Login's callback on 127.0.0.1 and a free port.
func Listen() (*Login, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the sign-in's callback: %w", err)
	}
	l := &Login{
		RedirectURL: "http://" + ln.Addr().String() + callbackPath,
		ln:          ln,
		results:     make(chan callback, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+callbackPath, l.callback)
	// ReadHeaderTimeout: a local process that connects and says nothing
	// must not hold a connection open for the whole sign-in.
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln)
	return l, nil
}

func (l *Login) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var cb callback
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		cb.err = fmt.Errorf("the authorization server refused the sign-in: %s", msg)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "<p>Sign-in refused: %s. You can close this tab.</p>\n", html.EscapeString(msg))
	} else if q.Get("code") == "" {
		http.Error(w, "no authorization code", http.StatusBadRequest)
		return
	} else {
		cb.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		fmt.Fprintln(w, "<p>Signed in to Switchboard. You can close this tab.</p>")
	}
	select {
	case l.results <- cb:
	default: // a second callback: the first one counts
	}
}

// Fetch is an [auth.AuthorizationCodeFetcher]: it shows (and opens) the
// authorization URL, then waits for the callback or ctx.
func (l *Login) Fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if l.Show != nil {
		l.Show(args.URL)
	}
	if l.Open != nil {
		if err := l.Open(args.URL); err != nil && l.Show != nil {
			l.Show("") // the caller says the browser did not open
		}
	}
	select {
	case cb := <-l.results:
		return cb.res, cb.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the sign-in in the browser: %w", context.Cause(ctx))
	}
}

// Close stops the callback. It is idempotent.
func (l *Login) Close() error {
	l.once.Do(func() { l.srv.Close() })
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
