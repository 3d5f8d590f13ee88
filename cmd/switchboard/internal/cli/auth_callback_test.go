package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
)

// TestAuthLoginRefusesForgedCallback (issue 23 §6): a callback whose state
// is not the sign-in's, or whose iss (RFC 9207) is not its authorization
// server's, is refused and said: the browser's page says the sign-in failed
// and why, and `auth login` names the cause at once and exits non-zero,
// storing nothing. Of a callback hit twice at once, one signs in and the
// other page says it did not.
func TestAuthLoginRefusesForgedCallback(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forge  func(q url.Values)
		reason string // in the page and the CLI's error
	}{
		{"state", func(q url.Values) { q.Set("state", "forged-by-another-page") }, "state"},
		{"iss", func(q url.Values) { q.Set("iss", "https://evil.example") }, "https://evil.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authEnv(t, nil)
			cb, run := startLogin(t)
			tc.forge(cb.query)
			start := time.Now()
			status, page := get(t, cb.url())
			if status == http.StatusOK || strings.Contains(page, "Signed in") || !strings.Contains(page, "failed") || !strings.Contains(page, tc.reason) {
				t.Errorf("forged callback: page %d %q, want a failure naming %q", status, page, tc.reason)
			}
			code, errOut := run()
			t.Logf("page %d %s\nauth login exit %d:\n%s", status, page, code, errOut)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("auth login ended %s after the forged callback, want at once", took.Round(time.Millisecond))
			}
			if code == cli.ExitOK || !strings.Contains(errOut, tc.reason) || strings.Contains(errOut, "signed in to remote") {
				t.Errorf("auth login: exit %d, stderr %q; want a failure naming %q", code, errOut, tc.reason)
			}
			if st, _ := statusJSON(t); st.SignedIn {
				t.Error("a login was stored from a forged callback")
			}
		})
	}

	// The callback hit twice at once (a reload, a second tab): one
	// sign-in, and the other page says it is not that one.
	t.Run("twice", func(t *testing.T) {
		authEnv(t, nil)
		cb, run := startLogin(t)
		type page struct {
			status int
			body   string
		}
		pages := make(chan page, 2)
		for range 2 {
			go func() {
				status, body := get(t, cb.url())
				pages <- page{status, body}
			}()
		}
		signedIn := 0
		for range 2 {
			p := <-pages
			switch {
			case p.status == http.StatusOK && strings.Contains(p.body, "Signed in"):
				signedIn++
			case p.status == http.StatusOK || strings.Contains(p.body, "Signed in"):
				t.Errorf("callback: page %d %q, want signed in or a refusal", p.status, p.body)
			}
		}
		if signedIn != 1 {
			t.Errorf("%d of the two pages say signed in, want 1", signedIn)
		}
		if code, errOut := run(); code != cli.ExitOK {
			t.Fatalf("auth login: exit %d\n%s", code, errOut)
		}
	})
}

// callbackURL is the redirect an authorization server answered with.
type callbackURL struct {
	base  url.URL
	query url.Values
}

func (c *callbackURL) url() string {
	u := c.base
	u.RawQuery = c.query.Encode()
	return u.String()
}

// startLogin runs `auth login remote --no-browser` and visits the URL it
// prints as a browser whose user approves would, up to the redirect to the
// callback, which it returns (not visited). run waits for the command.
func startLogin(t *testing.T) (*callbackURL, func() (int, string)) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		code := cli.Main(ctx, []string{"auth", "login", "remote", "--no-browser"}, strings.NewReader(""), io.Discard, io.MultiWriter(pw, &errOut))
		pw.Close()
		done <- code
	}()
	sc := bufio.NewScanner(pr)
	var authURL string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "  http://"); ok {
			authURL = "http://" + u
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if authURL == "" {
		t.Fatalf("auth login printed no URL (exit %d)\n%s", <-done, errOut.String())
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorization endpoint: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	q := loc.Query()
	loc.RawQuery = ""
	run := func() (int, string) {
		select {
		case code := <-done:
			return code, errOut.String()
		case <-time.After(60 * time.Second):
			t.Fatalf("auth login never ended\n%s", errOut.String())
			return 0, ""
		}
	}
	return &callbackURL{base: *loc, query: q}, run
}

// get fetches u and returns the status and body.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		return 0, err.Error() // the callback has stopped listening
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
